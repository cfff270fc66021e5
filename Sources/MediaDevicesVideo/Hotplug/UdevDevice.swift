import MediaDevicesCore
import CUdev
import Foundation

/// What udev (or the kernel's uevent, when no udevd runs) says about a device: the facts a
/// hotplug event carries for every kind of device.
package struct UdevDevice: Sendable, Hashable, Codable {
    /// `video4linux`, `drm` or `sound`.
    package let subsystem: String
    /// The kernel name (`video0`, `card1`).
    package let sysname: String
    /// The sysfs path (`/sys/devices/platform/vivid.0/video4linux/video0`).
    package let syspath: String
    /// The device node (`/dev/video0`, `/dev/dri/card1`, `/dev/snd/controlC1`...); sound cards
    /// have none themselves (their control, PCM and timer nodes are children).
    package let devnode: String?
    /// The card number for DRM and sound cards (`card1` → 1).
    package let cardNumber: Int?
    /// udev's `ID_PATH` (`platform-snd_aloop.0`, `pci-0000:00:02.0`), where udevd ran.
    package let idPath: String?
    /// A human name: the ALSA card id (`Loopback`), the DRM driver (`bochs-drm`), or for
    /// cameras the V4L2 `name` attribute.
    package var name: String?
    /// The physical device the node belongs to: the sysfs path under `/sys/devices`, up to the
    /// class folder (`platform/snd_aloop.0`, `pci0000:00/0000:00:02.0`).
    package let physicalPath: String
    /// An identifier that survives renumbering: `alsa:`/`drm:`/`v4l2:` then `ID_PATH` where
    /// udevd gave one, else the physical path.
    package let uniqueID: String

    package init(_ device: OpaquePointer) {
        func string(_ pointer: UnsafePointer<CChar>?) -> String? { pointer.map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        subsystem = string(udev_device_get_subsystem(device)) ?? ""
        sysname = string(udev_device_get_sysname(device)) ?? ""
        syspath = string(udev_device_get_syspath(device)) ?? ""
        devnode = string(udev_device_get_devnode(device))
        idPath = string(udev_device_get_property_value(device, "ID_PATH"))
        cardNumber = sysname.hasPrefix("card") ? Int(sysname.dropFirst(4)) : nil
        switch subsystem {
        case "sound":
            name = string(udev_device_get_sysattr_value(device, "id"))
        case "drm":
            name = udev_device_get_parent(device).flatMap { string(udev_device_get_driver($0)) }
        default:
            name = string(udev_device_get_sysattr_value(device, "name"))
        }
        physicalPath = UdevDevice.physicalPath(syspath: syspath, subsystem: subsystem)
        let prefix = ["sound": "alsa", "drm": "drm", "video4linux": "v4l2"][subsystem] ?? subsystem
        uniqueID = "\(prefix):\(idPath ?? physicalPath)"
    }

    /// The facts of a PipeWire camera node, which udev does not know: subsystem `pipewire`,
    /// sysname the node's name, devnode the V4L2 device it wraps (if any), no syspath, and the
    /// camera's `uniqueID`.
    package init(pipeWireCamera camera: CaptureDevice) {
        let node = camera.pipeWireNodes.first
        subsystem = "pipewire"
        sysname = node?.name ?? camera.path
        syspath = ""
        devnode = node?.v4l2Path
        cardNumber = nil
        idPath = nil
        name = camera.name
        physicalPath = camera.busInfo
        uniqueID = camera.uniqueID
    }

    /// `/sys/devices/platform/snd_aloop.0/sound/card0` → `platform/snd_aloop.0`.
    static func physicalPath(syspath: String, subsystem: String) -> String {
        var path = syspath
        if path.hasPrefix("/sys/devices/") { path.removeFirst("/sys/devices/".count) }
        let classFolder = "/\(subsystem)/"
        if let range = path.range(of: classFolder, options: .backwards) { path = String(path[..<range.lowerBound]) }
        return path
    }
}

/// Owns a `struct udev` context.
// @unchecked Sendable: libudev is not thread-safe, so a context is used by one thread at a time (the monitor's, after init); freed in deinit.
package final class UdevContext: @unchecked Sendable {
    package let pointer: OpaquePointer

    package init() throws(MediaDevicesError) {
        guard let udev = udev_new() else {
            throw MediaDevicesError(.io, device: nil, operation: "udev_new", detail: "libudev could not start (out of memory?)")
        }
        pointer = udev
    }

    deinit { udev_unref(pointer) }

    /// The devices of `subsystem` present now whose kernel name starts with `prefix`.
    package func devices(subsystem: String, sysnamePrefix prefix: String) -> [UdevDevice] {
        guard let enumerate = udev_enumerate_new(pointer) else { return [] }
        defer { udev_enumerate_unref(enumerate) }
        udev_enumerate_add_match_subsystem(enumerate, subsystem)
        udev_enumerate_scan_devices(enumerate)
        var found: [UdevDevice] = []
        var entry = udev_enumerate_get_list_entry(enumerate)
        while let current = entry {
            if let path = udev_list_entry_get_name(current), let device = udev_device_new_from_syspath(pointer, path) {
                let info = UdevDevice(device)
                if info.sysname.hasPrefix(prefix) { found.append(info) }
                udev_device_unref(device)
            }
            entry = udev_list_entry_get_next(current)
        }
        return found
    }
}
