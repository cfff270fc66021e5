import Foundation
import MediaDevices
import USBDevices
import XCTest

/// The composite webcam (Tests/USBDevices/usb_webcam.c): the emulated UVC camera and UAC1
/// microphone as one USB device, plugged into vhci-hcd and bound by the real uvcvideo and
/// snd-usb-audio, with a real systemd-udevd naming its camera: `let webcam = try USBWebcam.plug()`
/// gives one whose camera and sound card are both there. Call `close()` at the end (it unplugs
/// the webcam, waits until its camera and card are gone, and stops udevd).
final class USBWebcam: @unchecked Sendable {  // the C device locks its own state
    static let product = USBDEV_WEBCAM_PRODUCT
    static let productID = Int(USBDEV_WEBCAM_PRODUCT_ID)

    let serial: String
    private let handle: OpaquePointer
    private let udevd: UdevDaemon
    /// Its capture device and its sound card (index, id), as the last plug made them.
    private(set) var camera: CaptureDevice!
    private(set) var card = -1
    private(set) var cardID = ""

    /// The card's capture PCM, as enumeration names it.
    var hwName: String { "hw:CARD=\(cardID),DEV=0" }

    /// Loads vhci-hcd, uvcvideo and snd-usb-audio, starts udevd, plugs the webcam in and waits
    /// (up to `timeout` s each) for its camera and its card. Fails the test otherwise.
    static func plug(serial: String = "MD-WEBCAM-\(UInt16.random(in: 1000...9999))", timeout: Double = 90,
                     file: StaticString = #filePath, line: UInt = #line) throws -> USBWebcam {
        try Rig.require(file: file, line: line)
        try Rig.run("modprobe vhci-hcd && modprobe uvcvideo && modprobe snd-usb-audio", file: file, line: line)
        let udevd = try UdevDaemon()
        let started = Date()
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = usbdev_webcam_plug(serial, USBMicrophone.frequency, USBMicrophone.amplitude, &error, error.count) else {
            udevd.stop()
            XCTFail("usbdev_webcam_plug: \(Rig.text(error))", file: file, line: line)
            throw RigError.commandFailed("usbdev_webcam_plug")
        }
        let webcam = USBWebcam(handle: handle, serial: serial, udevd: udevd)
        do {
            try webcam.waitForFunctions(since: started, timeout: timeout, file: file, line: line)
        } catch {
            webcam.close()
            throw error
        }
        return webcam
    }

    private init(handle: OpaquePointer, serial: String, udevd: UdevDaemon) {
        self.handle = handle
        self.serial = serial
        self.udevd = udevd
    }

    /// Unplugs it (a real USB disconnect: camera and card go) and waits until both are gone.
    func unplug(timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws {
        usbdev_webcam_unplug(handle)
        USBMicrophone.waitUntilGone(card: card)
        guard USBCamera.waitUntilGone(serial: serial, timeout: timeout) else {
            XCTFail("the webcam \(serial)'s camera was still listed \(timeout) s after the unplug", file: file, line: line)
            throw RigError.commandFailed("USB webcam unplug")
        }
    }

    /// Plugs it in again (same serial) and waits for its camera and card, which may get other numbers.
    func replug(timeout: Double = 90, file: StaticString = #filePath, line: UInt = #line) throws {
        let started = Date()
        try Rig.usbCall("usbdev_webcam_replug", file: file, line: line) { usbdev_webcam_replug(handle, $0, $1) }
        try waitForFunctions(since: started, timeout: timeout, file: file, line: line)
    }

    var isPlugged: Bool { usbdev_webcam_is_plugged(handle) != 0 }
    /// The vhci port it is plugged into (-1 when unplugged).
    var port: Int { Int(usbdev_camera_port(usbdev_webcam_camera(handle))) }
    /// Frames its camera started sending, samples its microphone sent, since it was created.
    var framesSent: UInt32 { usbdev_camera_frames_sent(usbdev_webcam_camera(handle)) }
    var samplesSent: UInt64 { usbdev_microphone_samples_sent(usbdev_webcam_microphone(handle)) }

    /// A/V test mode (usb_devices.h): dark frames and silence, and `flash()` on command.
    func setAVTest(_ on: Bool) { usbdev_webcam_set_av_test(handle, on ? 1 : 0) }

    /// Asks for a flash and its click at one instant of the webcam's clock (A/V test mode); its number.
    func flash() -> UInt32 { usbdev_webcam_flash(handle) }

    /// Flash `number` as the webcam made it (its frame, its click's sample, their instants on
    /// CLOCK_MONOTONIC), once its click was recorded and both were handed to the host; after
    /// `timeout` s, what was recorded by then (a send time 0: not sent), or nil without a click.
    func flashAndClick(_ number: UInt32, timeout: Double = 5) -> usbdev_av_event? {
        let deadline = Date().addingTimeInterval(timeout)
        var event = usbdev_av_event()
        var made: usbdev_av_event?
        while Date() < deadline {
            if usbdev_webcam_av_event(handle, number, &event) != 0 && event.click_ns != 0 {
                made = event
                // Sent too (its last URB for the frame, the click's URB): the click is often made
                // before the flash frame's last bytes go, and a loaded machine delays both.
                if event.flash_sent_ns != 0 && event.click_sent_ns != 0 { return event }
            }
            usleep(10_000)
        }
        return made
    }

    /// Unplugs and frees it, waits until its camera and card are gone, stops udevd.
    func close() {
        usbdev_webcam_destroy(handle)
        USBMicrophone.waitUntilGone(card: card)
        _ = USBCamera.waitUntilGone(serial: serial, timeout: 5)
        udevd.stop()
    }

    private func waitForFunctions(since started: Date, timeout: Double, file: StaticString, line: UInt) throws {
        let (device, _) = try USBCamera.waitForDevice(serial: serial, udevd: udevd, timeout: timeout, file: file, line: line)
        camera = device
        (card, cardID) = try USBMicrophone.waitForCard(productID: Self.productID, since: started, timeout: timeout,
                                                       plugged: { [handle] in usbdev_webcam_is_plugged(handle) != 0 },
                                                       file: file, line: line)
    }
}
