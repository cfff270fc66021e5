import Foundation
import Glibc
import USBDevices
import XCTest

/// A USB Audio Class 1 microphone emulated in userspace (Tests/USBDevices) and plugged into
/// vhci-hcd, so the real snd-usb-audio binds it: `let microphone = try USBMicrophone.plug()`.
/// It records a continuous-phase sine (`frequency`, `amplitude`), 48 kHz mono S16LE, never
/// faster than real time (under the rig's emulation slower). Unplugged and freed on `deinit`.
final class USBMicrophone: @unchecked Sendable {  // the C device locks its own state; unplug may come from another thread
    static let frequency = AudioToneRun.frequency
    static let amplitude = AudioToneRun.amplitude
    static let rate = Int(USBDEV_MICROPHONE_RATE)
    static let product = USBDEV_MICROPHONE_PRODUCT

    /// The C device (usb_devices.h).
    let handle: OpaquePointer
    let serial: String
    /// The ALSA card it became: its index and its id (`Microphone`).
    private(set) var card: Int
    private(set) var cardID: String
    /// Seconds from plugging in until ALSA listed the card and its capture node existed.
    private(set) var enumerationSeconds: Double

    /// The capture PCM of the card, as enumeration names it.
    var hwName: String { "hw:CARD=\(cardID),DEV=0" }

    /// Loads vhci-hcd and snd-usb-audio, plugs the microphone in and waits (up to `timeout` s;
    /// enumeration takes 3–17 s under emulation) until ALSA lists its card. Fails the test
    /// with the kernel's log otherwise.
    static func plug(serial: String = "MD-MIC-0001", timeout: Double = 60,
                     file: StaticString = #filePath, line: UInt = #line) throws -> USBMicrophone {
        try Rig.run("modprobe vhci-hcd && modprobe snd-usb-audio", file: file, line: line)
        let started = Date()
        var error = [CChar](repeating: 0, count: 256)
        guard let handle = usbdev_microphone_plug(serial, frequency, amplitude, &error, error.count) else {
            XCTFail("usbdev_microphone_plug: \(Rig.text(error))", file: file, line: line)
            throw RigError.commandFailed("usbdev_microphone_plug")
        }
        let microphone = USBMicrophone(handle: handle, serial: serial)
        try microphone.waitForCard(since: started, timeout: timeout, file: file, line: line)
        return microphone
    }

    private init(handle: OpaquePointer, serial: String) {
        self.handle = handle
        self.serial = serial
        card = -1
        cardID = ""
        enumerationSeconds = 0
    }

    deinit {
        usbdev_microphone_destroy(handle)
        Self.waitUntilGone(card: card)
    }

    /// Unplugs it (a real USB disconnect, as when the cable is pulled); returns the C result.
    @discardableResult
    func unplug() -> Int32 { usbdev_microphone_unplug(handle) }

    /// Plugs it in again (same serial) and waits for its card, which may get another index.
    func replug(timeout: Double = 60, file: StaticString = #filePath, line: UInt = #line) throws {
        Self.waitUntilGone(card: card)
        let started = Date()
        try Rig.usbCall("usbdev_microphone_replug", file: file, line: line) { usbdev_microphone_replug(handle, $0, $1) }
        try waitForCard(since: started, timeout: timeout, file: file, line: line)
    }

    var isPlugged: Bool { usbdev_microphone_is_plugged(handle) != 0 }
    /// Samples the device has sent since it was created.
    var samplesSent: UInt64 { usbdev_microphone_samples_sent(handle) }
    /// The rate snd-usb-audio set (SET_CUR SAMPLING_FREQ_CONTROL), 0 before any stream.
    var rateSetByHost: UInt32 { usbdev_microphone_rate(handle) }
    /// CLOCK_MONOTONIC nanoseconds of the last unplug.
    var unplugTimeNanoseconds: UInt64 { usbdev_microphone_unplug_time_ns(handle) }

    /// Waits until a card of this microphone's USB ID is listed with its capture node.
    private func waitForCard(since started: Date, timeout: Double, file: StaticString, line: UInt) throws {
        (card, cardID) = try Self.waitForCard(productID: Int(USBDEV_MICROPHONE_PRODUCT_ID), since: started, timeout: timeout,
                                              plugged: { [handle] in usbdev_microphone_is_plugged(handle) != 0 }, file: file, line: line)
        enumerationSeconds = Date().timeIntervalSince(started)
    }

    /// Waits until a card of the USB device 1209:`productID` is listed with its capture node:
    /// its index and id. Fails the test (with the kernel's log) after `timeout` s from `started`.
    static func waitForCard(productID: Int, since started: Date, timeout: Double, plugged: () -> Bool,
                            file: StaticString, line: UInt) throws -> (Int, String) {
        let deadline = started.addingTimeInterval(timeout)
        while Date() < deadline {
            if let (index, id) = findCard(productID: productID), FileManager.default.fileExists(atPath: "/dev/snd/pcmC\(index)D0c") {
                return (index, id)
            }
            usleep(50_000)
        }
        XCTFail("""
            no ALSA card for the USB device 1209:\(String(format: "%04x", productID)) within \(timeout) s (plugged: \(plugged()));
            /proc/asound/cards:
            \(Rig.shell("cat /proc/asound/cards").output)
            dmesg:
            \(Rig.shell("dmesg | grep -i -E 'usb|vhci|snd' | tail -40").output)
            """, file: file, line: line)
        throw RigError.commandFailed("wait for the USB device's sound card")
    }

    /// The card whose `usbid` is 1209:`productID` (the microphone's, 1209:0002, by default): its index and id.
    static func findCard(productID: Int = Int(USBDEV_MICROPHONE_PRODUCT_ID)) -> (Int, String)? {
        let usbID = String(format: "1209:%04x", productID)  // pid.codes vendor
        for index in 0..<32 {
            let directory = "/proc/asound/card\(index)"
            guard let id = try? String(contentsOfFile: "\(directory)/usbid", encoding: .utf8),
                  id.trimmingCharacters(in: .whitespacesAndNewlines) == usbID,
                  let name = try? String(contentsOfFile: "\(directory)/id", encoding: .utf8) else { continue }
            return (index, name.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        return nil
    }

    /// Waits (up to 10 s) until card `card` is gone from /proc/asound after an unplug.
    static func waitUntilGone(card: Int) {
        guard card >= 0 else { return }
        for _ in 0..<200 { guard FileManager.default.fileExists(atPath: "/proc/asound/card\(card)") else { break }; usleep(50_000) }
    }

    /// CLOCK_MONOTONIC now, in nanoseconds (the clock of `unplugTimeNanoseconds`).
    static func monotonicNanoseconds() -> UInt64 {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return UInt64(now.tv_sec) * 1_000_000_000 + UInt64(now.tv_nsec)
    }
}
