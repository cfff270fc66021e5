import Foundation
import Glibc
import MediaDevicesCore

/// Where a UVC camera's libcamera node meets its V4L2 device. WirePlumber 0.4 offers a UVC
/// webcam twice: once through its V4L2 monitor (`api.v4l2.path` names the device) and once
/// through libcamera, whose node carries only libcamera's camera id (`api.libcamera.path`).
/// libcamera's UVC pipeline handler makes that id from the camera's place in sysfs, in three
/// parts joined by `-`:
/// - the firmware node of the nearest ancestor of the video device that has one (the USB port
///   or its controller): its devicetree path (`of_node`, less `/sys/firmware/devicetree`) or
///   its ACPI path (`firmware_node/path`, such as `\_SB_.PCI0.XHC_.RHUB.HS08`);
/// - the USB interface's name less its bus number (`3-8:1.0` → `8:1.0`);
/// - the USB device's `idVendor:idProduct` (`0c45:6366`).
/// Reading the same files gives the id of every UVC V4L2 device here, so both nodes are
/// listed as one camera. A camera without a firmware node on its path (a USB/IP camera on
/// `vhci_hcd`) has no libcamera id: libcamera does not offer it either ("Can not find
/// controller ID").
package struct LibcameraUVCNames: Sendable {
    /// Where sysfs is mounted (`/sys`; tests give a tree of their own).
    let sysfs: String

    /// Names read from the sysfs at `sysfs`.
    package init(sysfs: String = "/sys") { self.sysfs = sysfs }

    /// The libcamera camera id of the UVC camera whose V4L2 node is `videoNode` (`/dev/video0`,
    /// any link to it), or `nil` when it has none (not a USB device, no firmware node).
    package func cameraID(ofVideoNode videoNode: String) -> String? {
        // The kernel names a V4L2 node's class device as its node (udev does not rename them).
        let node = resolved(videoNode) ?? videoNode
        guard let name = node.split(separator: "/").last, name.hasPrefix("video") else { return nil }
        return cameraID(ofDevice: "\(sysfs)/class/video4linux/\(name)/device")
    }

    /// The V4L2 nodes (`/dev/videoN`, in number order) of the UVC camera whose libcamera camera
    /// id is `id`: a UVC camera has a capture node and a metadata node on one USB interface.
    package func videoNodes(ofCameraID id: String) -> [String] {
        let folder = "\(sysfs)/class/video4linux"
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("video") && Int($0.dropFirst(5)) != nil }
            .sorted { Int($0.dropFirst(5))! < Int($1.dropFirst(5))! }
        return names.filter { cameraID(ofDevice: "\(folder)/\($0)/device") == id }.map { "/dev/\($0)" }
    }

    /// The id of the camera whose USB interface is `device` (a sysfs path, links resolved here).
    func cameraID(ofDevice device: String) -> String? {
        guard let interface = resolved(device), let controller = firmwareNode(above: interface),
              let vendor = firstLine("\(interface)/../idVendor"), let product = firstLine("\(interface)/../idProduct")
        else { return nil }
        let name = interface.split(separator: "/").last.map(String.init) ?? ""
        // The interface's name is BUS-PORTS:CONFIG.INTERFACE; the bus number is not stable.
        guard let dash = name.firstIndex(of: "-"), name.contains(":") else { return nil }
        return "\(controller)-\(name[name.index(after: dash)...])-\(vendor):\(product)"
    }

    /// The firmware node path of the nearest ancestor of `device` (below sysfs) that has one.
    private func firmwareNode(above device: String) -> String? {
        var path = device
        while let slash = path.lastIndex(of: "/") {
            path = String(path[..<slash])
            guard path.count > sysfs.count, path.hasPrefix(sysfs) else { return nil }
            if let tree = resolved("\(path)/of_node") {
                let prefix = "\(sysfs)/firmware/devicetree"
                return tree.hasPrefix(prefix) ? String(tree.dropFirst(prefix.count)) : tree
            }
            if let acpi = firstLine("\(path)/firmware_node/path"), !acpi.isEmpty { return acpi }
        }
        return nil
    }

    private func resolved(_ path: String) -> String? { Sysfs.resolved(path) }

    private func firstLine(_ path: String) -> String? {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return nil }
        return text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init)
    }
}
