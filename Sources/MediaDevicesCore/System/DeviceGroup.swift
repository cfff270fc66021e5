import Foundation

/// Which physical device a camera node or a sound card belongs to, read from sysfs: the value
/// behind `CaptureDevice.group` and `AudioDevice.group` (browsers' `groupId`).
///
/// The walk is libudev's `udev_device_get_parent_with_subsystem_devtype(…, "usb", "usb_device")`
/// over the same files, done here with plain reads because the audio and the video products
/// share it and neither this module nor the audio one links libudev:
/// - the class device (`/sys/class/sound/card1`, `/sys/dev/char/81:0`) names its parent through
///   its `device` link (a USB interface, a PCI function, a platform device); a class device with
///   no parent (`/sys/devices/virtual`: v4l2loopback) has no group;
/// - from that parent up, the first USB device (the folder with `busnum` and `devpath`) gives
///   `usb:BUS-PORTS` (`usb:3-1`, `usb:1-1.4`): a webcam's video interface and its audio
///   interfaces are children of one USB device;
/// - else a PCI function gives its slot, `pci:0000:01:00` (a capture card's video on function 0
///   and its sound on function 1, as cx88 has them), and any other bus its device name,
///   `platform:vivid.0`: one per driver instance, so vivid and snd-aloop never share one.
///
/// The value is the port the device is plugged into, not its serial: it is the same after an
/// unplug and a replug on the same port (and across reboots while the controllers enumerate in
/// the same order), and two identical webcams on two ports differ. It names no sysfs path.
package enum DeviceGroup {
    /// The group of the class device whose sysfs folder is `classDevice` (`/sys/class/sound/card1`,
    /// `/sys/dev/char/81:0`), looking no higher than `sysfs`/devices; `nil` when it has no
    /// physical parent or sysfs cannot be read.
    package static func of(classDevice: String, sysfs: String = "/sys") -> String? {
        let devices = canonical("\(sysfs)/devices")
        guard let parent = resolved("\(classDevice)/device"), parent.hasPrefix(devices + "/") else { return nil }
        var folder = parent
        while folder.hasPrefix(devices + "/") {
            if let bus = Sysfs.attribute(folder, "busnum"), let ports = Sysfs.attribute(folder, "devpath"),
               !bus.isEmpty, !ports.isEmpty, ports != "0" {
                return "usb:\(bus)-\(ports)"
            }
            folder = (folder as NSString).deletingLastPathComponent
        }
        let name = (parent as NSString).lastPathComponent
        guard let subsystem = resolved("\(parent)/subsystem").map({ ($0 as NSString).lastPathComponent }) else { return nil }
        if subsystem == "pci", let dot = name.lastIndex(of: ".") { return "pci:\(name[..<dot])" }
        return "\(subsystem):\(name)"
    }

    /// The group of ALSA card `index` (`/sys/class/sound/cardN`).
    package static func of(soundCard index: Int, sysfs: String = "/sys") -> String? {
        of(classDevice: "\(sysfs)/class/sound/card\(index)", sysfs: sysfs)
    }

    /// The group of the character device node at `path` (`/dev/video0`, or a link to it), found
    /// by its device number (`/sys/dev/char/MAJOR:MINOR`), so that the node's name and folder
    /// do not matter.
    package static func of(characterDevice path: String, sysfs: String = "/sys") -> String? {
        var info = stat()
        guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFCHR else { return nil }
        let (major, minor) = deviceNumbers(UInt64(info.st_rdev))
        return of(classDevice: "\(sysfs)/dev/char/\(major):\(minor)", sysfs: sysfs)
    }

    /// glibc's `major()` and `minor()` (macros Swift does not import) of a `dev_t`.
    package static func deviceNumbers(_ device: UInt64) -> (major: UInt64, minor: UInt64) {
        (((device >> 8) & 0xfff) | ((device >> 32) & ~UInt64(0xfff)),
         (device & 0xff) | ((device >> 12) & ~UInt64(0xff)))
    }

    private static func resolved(_ path: String) -> String? { Sysfs.resolved(path) }

    private static func canonical(_ path: String) -> String { resolved(path) ?? path }
}
