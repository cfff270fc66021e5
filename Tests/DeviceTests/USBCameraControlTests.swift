import Foundation
import MediaDevices
import USBDevices
import XCTest

/// Controls through the real uvcvideo on the emulated USB webcam: the processing-unit and
/// camera-terminal controls with the ranges the camera reports, values reaching the camera and
/// its picture, exposure time inactive under automatic exposure, events, and a profile that
/// brings the camera back as the user set it after a replug.
final class USBCameraControlTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testControlsHaveTheRangesTheCameraReports() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let controls = try camera.device().controls()
        func range(_ control: CameraControl?) -> [Int64] {
            guard let control else { return [] }
            return [control.minimum, control.maximum, Int64(control.step), control.defaultValue]
        }
        XCTAssertEqual(range(controls.brightness), [-64, 64, 1, 0])
        XCTAssertEqual(range(controls.contrast), [0, 100, 1, 50])
        XCTAssertEqual(range(controls.saturation), [0, 200, 1, 100])
        XCTAssertEqual(range(controls.gain), [0, 100, 1, 0])
        XCTAssertEqual(range(controls.whiteBalanceTemperature), [2800, 6500, 10, 4600])
        XCTAssertEqual(range(controls.exposureAbsolute), [3, 2047, 1, 250])
        XCTAssertEqual(range(controls.focusAbsolute), [0, 250, 5, 0])
        XCTAssertEqual(range(controls.zoomAbsolute), [100, 400, 1, 100])
        XCTAssertEqual(controls.powerLineFrequency?.menu.map(\.name), ["Disabled", "50 Hz", "60 Hz"])
        XCTAssertEqual(controls.exposureAuto?.menu.map(\.index), [1, 3], "the modes the camera's GET_RES offers: manual, aperture priority")
        XCTAssertEqual(controls.whiteBalanceAutomatic?.value, .integer(1))
        XCTAssertTrue(controls.whiteBalanceTemperature?.flags.contains(.inactive) ?? false)
        XCTAssertNil(controls.hue, "the camera has no hue control")
        XCTAssertNil(controls.panAbsolute)
        let theirs = try V4L2ControlReference.controls(try camera.device().path)
        XCTAssertEqual(controls.filter { $0.type != .controlClass }.map(\.key), theirs.map(\.key))
        print("figure: USB camera controls through uvcvideo: \(controls.filter { $0.type != .controlClass }.map { "\($0.key) \($0.minimum)...\($0.maximum)" })")
    }

    /// Mean luma of the white bar (left eighth, below the counter strip) of a YUYV frame.
    private func whiteBarLuma(_ source: CameraSource, _ camera: USBCamera) throws -> Int {
        let recorder = FrameRecorder(target: 3, keepIndex: 2)
        source.consumer = recorder
        try source.start()
        defer { source.stop() }
        XCTAssertTrue(recorder.wait(seconds: 60))
        guard let plane = recorder.kept.first else {
            XCTFail("no frame kept")
            throw RigError.commandFailed("capture")
        }
        let row = 120 * plane.bytesPerRow
        return Int(plane.bytes[row + 20 * 2])
    }

    func testBrightnessAndManualExposureChangeThePicture() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        let source = CameraSource(device: device, request: FormatRequest(pixelFormat: .yuyv, size: Size(width: 320, height: 240)))
        defer { source.release() }
        XCTAssertEqual(try whiteBarLuma(source, camera), 180, "75% white")
        try source.setControls([ControlSetting(.brightness, 40)])
        XCTAssertEqual(camera.control(USBDEV_CTRL_BRIGHTNESS), 40, "the camera got SET_CUR")
        XCTAssertEqual(try whiteBarLuma(source, camera), 220, "brighter by 40")

        // Exposure time is inactive while automatic exposure is on, and cannot be set.
        XCTAssertTrue(try device.controls().exposureAbsolute?.flags.contains(.inactive) ?? false)
        XCTAssertThrowsError(try device.setControl(.exposureAbsolute, to: 500)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidState)
        }
        XCTAssertEqual(camera.control(USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE), 250, "nothing reached the camera")
        // Manual mode: active, and a longer exposure brightens the picture (while streaming).
        try device.setControls([ControlSetting(name: "auto_exposure", text: "Manual Mode")])
        XCTAssertFalse(try device.controls().exposureAbsolute?.flags.contains(.inactive) ?? true)
        try device.setControls([ControlSetting(.brightness, 0), ControlSetting(.exposureAbsolute, 300)])
        XCTAssertEqual(camera.control(USBDEV_CTRL_AE_MODE), 1)
        XCTAssertEqual(camera.control(USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE), 300)
        XCTAssertEqual(try whiteBarLuma(source, camera), 16 + (180 - 16) * 300 / 250 + 1, "exposure 300/250 of the white bar")
        // An out-of-range value changes nothing, on the camera either.
        XCTAssertThrowsError(try device.setControls([ControlSetting(.brightness, 10), ControlSetting(.zoomAbsolute, 50)]))
        XCTAssertEqual(camera.control(USBDEV_CTRL_BRIGHTNESS), 0)
    }

    func testExposureTurningInactiveArrivesAsAnEvent() async throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        try device.setControls([ControlSetting(name: "auto_exposure", text: "1")])
        let changes = try device.controlWatch()
        let watchdog = Task { try await Task.sleep(for: .seconds(60)); changes.stop() }
        defer { watchdog.cancel() }
        try Rig.run("v4l2-ctl -d \(device.path) -c auto_exposure=3")  // another process turns auto back on
        var seen: [ControlChange] = []
        for await change in changes {
            seen.append(change)
            let flagsChanged = seen.contains { $0.key == "exposure_time_absolute" && $0.changes.contains(.flags) }
            if flagsChanged && seen.contains(where: { $0.key == "auto_exposure" }) { break }
        }
        let exposure = try XCTUnwrap(seen.last { $0.key == "exposure_time_absolute" }, "no event for the exposure time: \(seen)")
        XCTAssertEqual(exposure.key, "exposure_time_absolute", "\(seen)")
        XCTAssertTrue(exposure.flags.contains(.inactive))
        XCTAssertTrue(seen.contains { $0.key == "auto_exposure" && $0.value == .integer(3) }, "\(seen)")
        changes.stop()
        print("figure: USB camera control events: \(seen.map(\.description))")
    }

    func testAProfileRestoredAfterReplugGivesTheSameValues() throws {
        let camera = try Rig.usbCamera()
        defer { camera.close() }
        let device = try camera.device()
        try device.setControls([ControlSetting(name: "auto_exposure", text: "Manual Mode"),
                                ControlSetting(name: "white_balance_automatic", text: "0")])
        try device.setControls([ControlSetting(.brightness, -20), ControlSetting(.contrast, 70),
                                ControlSetting(.exposureAbsolute, 400), ControlSetting(.whiteBalanceTemperature, 3200),
                                ControlSetting(name: "power_line_frequency", text: "60 Hz")])
        let profile = try device.controlProfile()
        let saved = try JSONEncoder().encode(profile)
        let before = try device.controls().filter { $0.isWritable }.map { "\($0.key)=\($0.value)" }

        camera.unplug()
        try camera.replug()
        let again = try camera.device()
        XCTAssertEqual(camera.control(USBDEV_CTRL_BRIGHTNESS), 0, "the camera came back at its defaults")
        let skipped = try again.restoreControls(try JSONDecoder().decode(ControlProfile.self, from: saved))
        let after = try again.controls().filter { $0.isWritable }.map { "\($0.key)=\($0.value)" }
        XCTAssertEqual(after, before)
        XCTAssertEqual(camera.control(USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE), 400, "restored after its auto mode")
        XCTAssertEqual(camera.control(USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE), 3200)
        XCTAssertEqual(camera.control(USBDEV_CTRL_POWER_LINE_FREQUENCY), 2)
        print("figure: USB camera profile restored after replug: \(after.count) values equal, skipped \(skipped)")
    }
}
