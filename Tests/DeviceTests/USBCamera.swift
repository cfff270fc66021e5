import Foundation
import MediaDevices
import USBDevices
import XCTest

/// The project's emulated UVC webcam (Tests/USBDevices), plugged into vhci-hcd inside the rig and
/// bound by the real uvcvideo, with a real systemd-udevd naming it in /dev/v4l/by-id:
/// `let camera = try Rig.usbCamera()` gives one, ready to capture. Call `close()` at the end
/// (it unplugs the camera and stops udevd).
final class USBCamera: @unchecked Sendable {
    /// Its iSerialNumber, also part of its by-id name.
    let serial: String
    /// How long it took from plugging in until uvcvideo's node was there and named (seconds).
    private(set) var enumerationSeconds: Double = 0
    private let handle: OpaquePointer
    private let udevd: UdevDaemon

    fileprivate init(serial: String) throws {
        try Rig.run("modprobe vhci-hcd && modprobe uvcvideo")
        udevd = try UdevDaemon()
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = usbdev_camera_plug(serial, &error, error.count) else {
            udevd.stop()
            XCTFail("the USB camera could not be plugged in: \(Rig.text(error))")
            throw RigError.commandFailed("usbdev_camera_plug")
        }
        self.handle = handle
        self.serial = serial
    }

    /// The capture device once uvcvideo has bound the camera and udev has named it (enumeration
    /// takes 3–17 s under emulation). Fails the test after `timeout` seconds.
    func device(timeout: Double = 90, file: StaticString = #filePath, line: UInt = #line) throws -> CaptureDevice {
        let (device, seconds) = try Self.waitForDevice(serial: serial, udevd: udevd, timeout: timeout, file: file, line: line)
        enumerationSeconds = seconds
        return device
    }

    /// The uvcvideo capture device whose by-id name has `serial`, once udev has named it, and the
    /// seconds that took. Fails the test after `timeout` seconds.
    static func waitForDevice(serial: String, udevd: UdevDaemon, timeout: Double,
                              file: StaticString, line: UInt) throws -> (CaptureDevice, Double) {
        let start = Date()
        while Date().timeIntervalSince(start) < timeout {
            udevd.settle()
            if let device = CaptureDevice.scan().devices.first(where: { $0.driver == "uvcvideo" && $0.uniqueID.contains(serial) }) {
                return (device, Date().timeIntervalSince(start))
            }
            usleep(200_000)
        }
        let devices = CaptureDevice.scan().devices.map { "\($0.path) \($0.driver) \($0.uniqueID)" }
        XCTFail("the USB camera \(serial) did not appear in \(timeout) s; devices: \(devices); dmesg: \(Rig.shell("dmesg | tail -20").output)", file: file, line: line)
        throw RigError.commandFailed("USB camera enumeration")
    }

    /// Unplugs it: a real USB disconnect.
    func unplug() { usbdev_camera_unplug(handle) }

    /// Plugs it in again, with the same serial number, once uvcvideo's node for it is gone: the
    /// kernel handles a disconnect after `unplug()` returns, and a device scanned in between is
    /// the old node, which fails with ENODEV when the disconnect lands. Unplugs it first if it
    /// is plugged in.
    func replug(timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws {
        unplug()
        guard Self.waitUntilGone(serial: serial, timeout: timeout) else {
            XCTFail("the USB camera \(serial)'s node was still listed \(timeout) s after the unplug: \(CaptureDevice.scan().devices.map(\.path))",
                    file: file, line: line)
            throw RigError.commandFailed("USB camera unplug")
        }
        var error = [CChar](repeating: 0, count: 256)
        guard usbdev_camera_replug(handle, &error, error.count) == 0 else {
            XCTFail("replug failed: \(Rig.text(error))")
            throw RigError.commandFailed("usbdev_camera_replug")
        }
    }

    /// Unplugs by itself once it has sent `frames` more frames.
    func unplug(afterFrames frames: UInt32) { usbdev_camera_unplug_after(handle, frames) }

    /// Whether it is plugged in.
    var isPlugged: Bool { usbdev_camera_is_plugged(handle) != 0 }

    /// When it was last unplugged (CLOCK_MONOTONIC nanoseconds, 0 if never).
    var unplugTime: UInt64 { usbdev_camera_unplug_time_ns(handle) }

    /// Frames it started sending so far.
    var framesSent: UInt32 { usbdev_camera_frames_sent(handle) }

    /// Makes its next frame of the matching format faulty.
    func inject(_ fault: usbdev_fault) { usbdev_camera_inject(handle, fault) }

    /// The exact JPEG it sends as frame `counter` at `size`.
    func jpeg(_ size: Size, counter: UInt32) -> [UInt8] {
        let length = usbdev_camera_jpeg(handle, UInt16(size.width), UInt16(size.height), counter, nil, 0)
        var bytes = [UInt8](repeating: 0, count: length)
        _ = usbdev_camera_jpeg(handle, UInt16(size.width), UInt16(size.height), counter, &bytes, length)
        return bytes
    }

    /// A control's value as the camera holds it.
    func control(_ control: usbdev_control) -> Int32 {
        var value: Int32 = 0
        usbdev_camera_control(handle, control, &value)
        return value
    }

    /// Unplugs it, frees it, waits until its node is gone and stops udevd.
    func close() {
        usbdev_camera_destroy(handle)
        _ = Self.waitUntilGone(serial: serial, timeout: 5)
        udevd.stop()
    }

    /// Waits until no capture device of the camera with `serial` is listed; false after `timeout` seconds.
    static func waitUntilGone(serial: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while CaptureDevice.scan().devices.contains(where: { $0.uniqueID.contains(serial) }) {
            guard Date() < deadline else { return false }
            usleep(50_000)
        }
        return true
    }

    /// The MJPEG sizes it offers, in descriptor order.
    static var mjpegSizes: [Size] { sizes(USBDEV_FORMAT_MJPEG) }
    /// The YUYV sizes it offers.
    static var yuyvSizes: [Size] { sizes(USBDEV_FORMAT_YUYV) }
    private static func sizes(_ format: usbdev_format) -> [Size] {
        (0..<usbdev_camera_frame_size_count()).map { usbdev_camera_frame_size($0) }
            .filter { $0.format == format }.map { Size(width: Int($0.width), height: Int($0.height)) }
    }

    /// The frame counter in a JPEG's COM segment.
    static func counter(jpeg: UnsafeRawBufferPointer) -> Int? {
        let value = usbdev_jpeg_counter(jpeg.baseAddress?.assumingMemoryBound(to: UInt8.self), jpeg.count)
        return value < 0 ? nil : Int(value)
    }

    /// The frame counter in a YUYV frame's top strip.
    static func counter(yuyv: UnsafeRawBufferPointer, bytesPerRow: Int, size: Size) -> Int? {
        let value = usbdev_yuyv_counter(yuyv.baseAddress?.assumingMemoryBound(to: UInt8.self), bytesPerRow,
                                        UInt16(size.width), UInt16(size.height))
        return value < 0 ? nil : Int(value)
    }
}

extension Rig {
    /// Plugs in the emulated USB webcam (see `USBCamera`) with a serial number of its own.
    static func usbCamera(serial: String = "MD-CAM-\(UInt16.random(in: 1000...9999))") throws -> USBCamera {
        try require()
        return try USBCamera(serial: serial)
    }
}
