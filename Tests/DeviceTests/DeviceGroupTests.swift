import Foundation
import MediaDevices
import USBDevices
import XCTest

/// `group` on real drivers (issue 55): the composite USB webcam (usb_webcam.c: a UVC camera and
/// a UAC1 microphone in one USB device, bound by uvcvideo and snd-usb-audio) has one group for
/// its camera and every route to its microphone, named by its USB bus and port as sysfs has
/// them; both functions capture side by side; vivid and snd-aloop are groups of their own; the
/// group is the same after an unplug and a replug on the same port; a PulseAudio source of the
/// card is in it; `mediadevices list --json` prints it.
final class DeviceGroupTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// The webcam's camera and its sound card's PCMs share the group `usb:BUS-PORTS` of the USB
    /// device sysfs puts above both; the camera's microphones are the card's inputs; and the two
    /// functions of the one device capture at the same time: frames from uvcvideo, the tone from
    /// snd-usb-audio.
    func testTheWebcamsCameraAndMicrophoneShareAGroupAndBothCapture() throws {
        let webcam = try USBWebcam.plug()
        defer { webcam.close() }
        let camera = try XCTUnwrap(webcam.camera)
        XCTAssertEqual(camera.name, "\(USBWebcam.product): Media", "uvcvideo bound the webcam's video function")
        let group = try XCTUnwrap(camera.group, "the webcam's camera has a group")
        // What sysfs says: the USB device above the sound card's interface, by bus and port path.
        let usbDevice = try Rig.run("readlink -f /sys/class/sound/card\(webcam.card)/device/..").trimmingCharacters(in: .whitespacesAndNewlines)
        let bus = try Rig.run("cat \(usbDevice)/busnum").trimmingCharacters(in: .whitespacesAndNewlines)
        let ports = try Rig.run("cat \(usbDevice)/devpath").trimmingCharacters(in: .whitespacesAndNewlines)
        XCTAssertEqual(group, "usb:\(bus)-\(ports)", "the group names the USB device above both functions (\(usbDevice))")

        let audio = AudioDevice.scan().devices
        let card = audio.filter { $0.card == webcam.card }
        XCTAssertEqual(Set(card.map(\.name)), ["hw:CARD=\(webcam.cardID),DEV=0", "plughw:CARD=\(webcam.cardID),DEV=0"],
                       "snd-usb-audio bound the webcam's audio function: one capture PCM")
        for device in card { XCTAssertEqual(device.group, group, "\(device.uniqueID) is in the camera's group") }
        let microphones = camera.microphones(among: audio)
        XCTAssertEqual(Set(microphones.filter { $0.backend == .alsa }.map(\.name)), Set(card.map(\.name)),
                       "the camera's microphones are its card's inputs: \(microphones.map(\.uniqueID))")
        XCTAssertTrue(microphones.allSatisfy { $0.direction == .input && $0.group == group })
        XCTAssertFalse(audio.contains { $0.card != webcam.card && $0.backend == .alsa && $0.group == group },
                       "no other card is in the webcam's group")

        // Both functions at once: frames from the camera while the microphone records the tone.
        let source = CameraSource(device: camera, request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 160, height: 120)))
        let recorder = FrameRecorder(target: 10)
        source.consumer = recorder
        let driver = AudioDriver()
        let microphone = try XCTUnwrap(microphones.first { $0.name == webcam.hwName })
        try driver.initializeCapture(device: microphone, format: USBMicrophoneTests.format, options: USBMicrophoneTests.options)
        try source.start()
        try driver.startCapture()
        let samples = USBMicrophoneTests.capture(driver, frames: 48_000)  // 1 s
        let gotFrames = recorder.wait(seconds: 60)
        driver.capture.terminate()
        source.stop()
        source.release()
        XCTAssertNil(driver.capture.endError)
        XCTAssertTrue(gotFrames, "10 frames from the webcam's camera while its microphone recorded (\(recorder.records.count))")
        XCTAssertEqual(samples.count, 48_000, "1 s from the webcam's microphone while its camera streamed")
        XCTAssertGreaterThanOrEqual(webcam.samplesSent, UInt64(samples.count), "never more samples than the device sent")
        let tone = AudioToneRun.assertTone(samples.map { Float($0) / 32768 }, format: USBMicrophoneTests.format, label: "webcam microphone")
        print(String(format: "figure: composite webcam %@: camera %@ and card %d (%@) in group %@; %d frames and %d samples captured together, tone %.1f Hz",
                     webcam.serial, camera.path, webcam.card, webcam.cardID, group, recorder.records.count, samples.count, tone?.frequency ?? 0))
    }

    /// vivid (a platform device) and snd-aloop (another) each have a group of their own, never
    /// the webcam's; vivid has no microphone; ALSA's `default` has no group.
    func testVividAndSndAloopAreNotInTheWebcamsGroup() throws {
        try Rig.loadVivid("n_devs=1")
        try Rig.run("modprobe snd-aloop")
        let webcam = try USBWebcam.plug()
        defer { webcam.close() }
        let group = try XCTUnwrap(webcam.camera.group)
        let audio = AudioDevice.scan().devices

        let vivid = CaptureDevice.scan().devices.filter { $0.driver == "vivid" }
        XCTAssertFalse(vivid.isEmpty, "vivid is loaded")
        for camera in vivid {
            XCTAssertEqual(camera.group, "platform:vivid.0", camera.path)
            XCTAssertEqual(camera.microphones(among: audio), [], "vivid has no sound card")
        }
        let loopback = audio.filter { $0.name.contains("CARD=Loopback,") }
        XCTAssertFalse(loopback.isEmpty, "snd-aloop is loaded: \(audio.map(\.uniqueID))")
        for device in loopback { XCTAssertEqual(device.group, "platform:snd_aloop.0", device.uniqueID) }
        XCTAssertNotEqual(group, "platform:vivid.0")
        XCTAssertNotEqual(group, "platform:snd_aloop.0")
        XCTAssertFalse(webcam.camera.microphones(among: audio).contains { $0.name.contains("Loopback") })
        for device in audio where device.name == "default" { XCTAssertNil(device.group, "ALSA's default is no one device") }
    }

    /// Unplugged, nothing of the group is listed; plugged in again on the same port, the camera
    /// and the microphone have the same group as before, and the lookup finds the same microphone.
    func testTheGroupSurvivesAnUnplugAndAReplug() throws {
        let webcam = try USBWebcam.plug()
        defer { webcam.close() }
        let before = try XCTUnwrap(webcam.camera)
        let group = try XCTUnwrap(before.group)
        let port = webcam.port
        let microphones = before.microphones(among: AudioDevice.scan().devices).filter { $0.backend == .alsa }
        XCTAssertFalse(microphones.isEmpty)

        try webcam.unplug()
        XCTAssertFalse(CaptureDevice.scan().devices.contains { $0.group == group }, "unplugged: no camera of the group")
        XCTAssertFalse(AudioDevice.scan().devices.contains { $0.group == group }, "unplugged: no audio device of the group")

        try webcam.replug()
        XCTAssertEqual(webcam.port, port, "replugged on the same vhci port (the only device on it)")
        let after = try XCTUnwrap(webcam.camera)
        XCTAssertEqual(after.group, group, "the same group after the replug")
        XCTAssertEqual(after.uniqueID, before.uniqueID)
        let again = after.microphones(among: AudioDevice.scan().devices).filter { $0.backend == .alsa }
        XCTAssertEqual(again.map(\.uniqueID), microphones.map(\.uniqueID), "the same microphone found again")
        print("figure: composite webcam replugged on port \(port): group \(group) before and after; camera \(before.path) -> \(after.path), card \(webcam.card)")
    }

    /// The emulator as a program (`usb-device-emulator --webcam SERIAL`, what `scripts/rig.sh run
    /// --usb` and people at a shell use): SIGUSR1 unplugs the webcam, SIGUSR2 plugs it in again;
    /// afterwards its camera and its microphone still share one group, and it is the value it
    /// was (the group names the USB device by bus and port path, and the webcam, the only device
    /// on vhci, comes back on the same port).
    func testTheGroupSurvivesTheEmulatorsUnplugAndReplugSignals() throws {
        try Rig.run("modprobe vhci-hcd && modprobe uvcvideo && modprobe snd-usb-audio")
        let udevd = try UdevDaemon()
        defer { udevd.stop() }
        let serial = "MD-WEBCAM-SIG\(UInt16.random(in: 1000...9999))"
        let emulator = try BackgroundCommand("\(Rig.usbEmulator) --webcam \(serial)", log: "/tmp/usb-device-emulator-\(serial).log")
        var card = -1
        defer {
            emulator.interrupt()  // SIGINT: it unplugs the webcam and exits
            USBMicrophone.waitUntilGone(card: card)
            _ = USBCamera.waitUntilGone(serial: serial, timeout: 10)
        }
        /// The camera and the card once both are there, and the camera's ALSA microphones.
        func functions() throws -> (CaptureDevice, Int, [AudioDevice]) {
            let (camera, _) = try USBCamera.waitForDevice(serial: serial, udevd: udevd, timeout: 90, file: #filePath, line: #line)
            let (index, _) = try USBMicrophone.waitForCard(productID: USBWebcam.productID, since: Date(), timeout: 90,
                                                           plugged: { emulator.isRunning }, file: #filePath, line: #line)
            return (camera, index, camera.microphones(among: AudioDevice.scan().devices).filter { $0.backend == .alsa })
        }
        let (before, firstCard, microphones) = try functions()
        card = firstCard
        let group = try XCTUnwrap(before.group, "the emulator's webcam has a group: \(emulator.output)")
        XCTAssertFalse(microphones.isEmpty, "the camera's microphone is its card's input")
        XCTAssertTrue(microphones.allSatisfy { $0.group == group })

        emulator.send(SIGUSR1)
        XCTAssertTrue(USBCamera.waitUntilGone(serial: serial, timeout: 60), "SIGUSR1 unplugged the camera: \(emulator.output)")
        USBMicrophone.waitUntilGone(card: card)
        XCTAssertNil(USBMicrophone.findCard(productID: USBWebcam.productID), "SIGUSR1 unplugged the microphone")
        XCTAssertFalse(AudioDevice.scan().devices.contains { $0.group == group }, "unplugged: no audio device of the group")

        emulator.send(SIGUSR2)
        let (after, secondCard, again) = try functions()
        card = secondCard
        XCTAssertEqual(after.group, group, "the same group after SIGUSR2 plugged the webcam in again: \(emulator.output)")
        XCTAssertFalse(again.isEmpty, "the camera's microphone found again")
        XCTAssertTrue(again.allSatisfy { $0.group == after.group }, "camera and microphone share the group: \(again.map(\.uniqueID))")
        XCTAssertTrue(emulator.output.contains("unplugged") && emulator.output.contains("replugged"), emulator.output)
        print("figure: usb-device-emulator --webcam: SIGUSR1/SIGUSR2 replug kept group \(group) (camera \(before.path) -> \(after.path), card \(firstCard) -> \(secondCard))")
    }

    /// Through a sound server: the source PulseAudio makes of the webcam's card (module-alsa-source)
    /// carries the card's number (`alsa.card`), so it is in the camera's group and among its
    /// microphones; the null sink's monitor is no device and has no group.
    func testThePulseSourceOfTheWebcamsCardIsInItsGroup() throws {
        let webcam = try USBWebcam.plug()
        defer { webcam.close() }
        let server = try PulseDaemon(name: "group")
        defer { server.kill() }  // first: it holds the card open
        _ = try server.pactl("load-module module-alsa-source device=\(webcam.hwName) source_name=webcam_mic")
        let audio = AudioDevice.scan().devices
        let source = try XCTUnwrap(audio.first { $0.backend == .pulse && $0.name == "webcam_mic" }, "\(audio.map(\.uniqueID))")
        XCTAssertEqual(source.group, webcam.camera.group, "the Pulse source of the webcam's card")
        XCTAssertTrue(webcam.camera.microphones(among: audio).contains(source))
        let monitor = try XCTUnwrap(audio.first { $0.backend == .pulse && $0.name == "mdsink.monitor" }, "\(audio.map(\.uniqueID))")
        XCTAssertNil(monitor.group, "a null sink's monitor is no physical device")
    }

    /// `mediadevices list --json` prints the group of the webcam's camera and of its microphone.
    func testListPrintsTheGroup() throws {
        let webcam = try USBWebcam.plug()
        defer { webcam.close() }
        let group = try XCTUnwrap(webcam.camera.group)
        let printed = try Rig.run("\(Rig.tool) list --json")
        let list = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(printed.utf8)) as? [String: Any], printed)
        let cameras = try XCTUnwrap(list["cameras"] as? [[String: Any]])
        let camera = try XCTUnwrap(cameras.first { $0["path"] as? String == webcam.camera.path }, printed)
        XCTAssertEqual(camera["group"] as? String, group)
        let inputs = try XCTUnwrap((list["audio"] as? [String: Any])?["inputs"] as? [[String: Any]], printed)
        let microphone = try XCTUnwrap(inputs.first { $0["name"] as? String == webcam.hwName }, printed)
        XCTAssertEqual(microphone["group"] as? String, group)
        let text = try Rig.run("\(Rig.tool) list")
        XCTAssertTrue(text.contains("group: \(group)"), text)
    }
}
