import Foundation
import MediaDevices
import XCTest

/// No file descriptor left (the soft `RLIMIT_NOFILE` lowered and the rest filled with
/// /dev/null): opening a camera, a screen or an audio device is `.tooManyOpenFiles` with a
/// remedy, whichever of the open's steps runs out (0 to 32 descriptors spare); nothing stays
/// open once the source is released, and nothing stays broken (libasound's configuration, read
/// while no descriptor was left, is read again); a capture already running goes on delivering
/// frames.
final class DescriptorExhaustionTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// The process's descriptors held down to `spare` free ones under a lowered soft limit;
    /// `end()` closes the fillers and puts the limit back.
    final class Exhaustion {
        private var fillers: [Int32] = []
        private var saved = rlimit()

        init(spare: Int) throws {
            guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved) == 0 else { throw POSIXError(.EINVAL) }
            // A limit just above what is open, so filling it takes few descriptors.
            let open = (try FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")).compactMap { Int($0) }
            var lowered = saved
            lowered.rlim_cur = rlim_t((open.max() ?? 0) + 32)
            guard setrlimit(Int32(RLIMIT_NOFILE.rawValue), &lowered) == 0 else { throw POSIXError(.EPERM) }
            while true {
                let descriptor = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
                if descriptor < 0 {
                    XCTAssertEqual(errno, EMFILE, "filling stops at the limit")
                    break
                }
                fillers.append(descriptor)
            }
            for _ in 0..<min(spare, fillers.count) { Glibc.close(fillers.removeLast()) }
        }

        /// Whether opening one more descriptor would fail now.
        var isExhausted: Bool {
            let probe = Glibc.open("/dev/null", O_RDONLY | O_CLOEXEC)
            if probe < 0 { return true }
            Glibc.close(probe)
            return false
        }

        func end() {
            for descriptor in fillers { Glibc.close(descriptor) }
            fillers = []
            _ = setrlimit(Int32(RLIMIT_NOFILE.rawValue), &saved)
        }
    }

    /// What one attempt came to: "opened", or the error's code and operation.
    static func outcome(_ body: () throws -> Void) -> (text: String, error: MediaDevicesError?) {
        do {
            try body()
            return ("opened", nil)
        } catch let error as MediaDevicesError {
            return ("\(error.code)(\(error.operation))", error)
        } catch {
            return ("\(error)", nil)
        }
    }

    func testNoDescriptorLeftIsTooManyOpenFilesLeaksNothingAndCaptureGoesOn() throws {
        let nodes = try Rig.loadVivid("n_devs=2")
        XCTAssertGreaterThanOrEqual(nodes.count, 2, "two vivid cameras")
        try Rig.run("modprobe snd-aloop")
        for _ in 0..<100 { guard !FileManager.default.fileExists(atPath: "/dev/snd/pcmC0D1c") else { break }; usleep(20_000) }
        let screen = try ScreenScenarios.loadDisplay("bochs")
        let camera = try CaptureDevice(path: nodes[1])
        let microphone = AudioDevice.alsa("hw:Loopback,1,0", direction: .input)
        let vga = FormatRequest(pixelFormat: .yuyv, size: .vga, frameRate: FrameRate(25))

        // The capture that must go on: vivid's first camera at 25 fps.
        let running = CameraSource(device: try CaptureDevice(path: nodes[0]), request: vga)
        let recorder = FrameRecorder(target: 1_000_000)
        running.consumer = recorder
        try running.start()
        defer { running.release() }
        for _ in 0..<200 where recorder.count < 5 { usleep(50_000) }
        XCTAssertGreaterThanOrEqual(recorder.count, 5, "the running capture delivers before the descriptors run out")
        // libasound reads its configuration at the first open and again whenever its files
        // change: a copy named by ALSA_CONFIG_PATH, touched before the descriptors run out,
        // makes the first open under exhaustion a reading, as a process's first open would be.
        let configuration = FileManager.default.temporaryDirectory.appendingPathComponent("alsa-\(getpid()).conf").path
        try? FileManager.default.removeItem(atPath: configuration)
        try FileManager.default.copyItem(atPath: "/usr/share/alsa/alsa.conf", toPath: configuration)
        setenv("ALSA_CONFIG_PATH", configuration, 1)
        defer {
            unsetenv("ALSA_CONFIG_PATH")
            try? FileManager.default.removeItem(atPath: configuration)
        }
        let baseline = AudioDriver()
        let baselineOutcome = Self.outcome {
            try baseline.initializeCapture(device: microphone, format: AudioFormat(sampleRate: 48000, channels: 2))
            try baseline.startCapture()
        }
        baseline.capture.terminate()
        XCTAssertEqual(baselineOutcome.text, "opened", "the microphone opens before the descriptors run out: \(String(describing: baselineOutcome.error))")
        let before = ProcessFigures.settled()

        try FileManager.default.setAttributes([.modificationDate: Date().addingTimeInterval(60)], ofItemAtPath: configuration)
        var table: [String] = []
        var firstError: MediaDevicesError?
        let spares = [0, 1, 2, 3, 4, 5, 6, 8, 12, 16, 24, 32]
        for spare in spares {
            let exhaustion = try Exhaustion(spare: spare)
            let framesBefore = recorder.count
            let started = Date()
            let cameraSource = CameraSource(device: camera, request: vga)
            let cameraOutcome = Self.outcome {
                try cameraSource.initialize()
                try cameraSource.start()
            }
            let screenSource = ScreenSource(screen: screen)
            let screenOutcome = Self.outcome {
                try screenSource.initialize()
                try screenSource.start()
            }
            let driver = AudioDriver()
            let audioOutcome = Self.outcome {
                try driver.initializeCapture(device: microphone, format: AudioFormat(sampleRate: 48000, channels: 2))
                try driver.startCapture()
            }
            let enumerationOutcome = Self.outcome { _ = try CaptureDevice(path: nodes[1]) }
            let exhaustedAfter = exhaustion.isExhausted
            // The running capture, meanwhile: half a second more of frames, descriptors still held.
            while Date().timeIntervalSince(started) < 0.5 { usleep(20_000) }
            let framesDuring = recorder.count - framesBefore
            cameraSource.release()
            screenSource.release()
            driver.capture.terminate()
            exhaustion.end()

            if spare == 0 { firstError = cameraOutcome.error }
            let outcomes = [("camera", cameraOutcome), ("screen", screenOutcome), ("audio", audioOutcome), ("enumeration", enumerationOutcome)]
            for (what, outcome) in outcomes {
                if spare == spares.last {
                    XCTAssertNil(outcome.error, "\(what) opens with \(spare) descriptors spare: \(outcome.text)")
                }
                if spare == 0 {
                    XCTAssertEqual(outcome.error?.code, .tooManyOpenFiles, "\(what) with no descriptor spare: \(outcome.text) \(String(describing: outcome.error))")
                }
                guard let error = outcome.error else {
                    XCTAssertEqual(outcome.text, "opened", "\(what), \(spare) spare: only MediaDevicesError is thrown")
                    continue
                }
                XCTAssertEqual(error.code, .tooManyOpenFiles, "\(what), \(spare) spare: \(error)")
                XCTAssertTrue(error.remedy?.contains("RLIMIT_NOFILE") ?? false, "\(what), \(spare) spare: the remedy says how to raise the limit: \(error)")
            }
            XCTAssertGreaterThan(framesDuring, 0, "\(spare) spare: the running capture went on while no descriptor was left")
            XCTAssertTrue(running.isCapturing, "\(spare) spare: the running capture is still capturing")
            let after = ProcessFigures.settled()
            ProcessFigures.assertDescriptorsFlat(before, after, "\(spare) spare: every descriptor of the failed opens released")
            table.append("spare \(spare): camera \(cameraOutcome.text), screen \(screenOutcome.text), audio \(audioOutcome.text), enumeration \(enumerationOutcome.text); still exhausted after \(exhaustedAfter); running capture +\(framesDuring) frames")
        }
        print("figure: descriptor exhaustion (RLIMIT_NOFILE lowered, the rest filled):\n  " + table.joined(separator: "\n  "))
        print("figure: descriptor exhaustion, what the camera's open said: \(firstError.map { "\($0)" } ?? "nothing")")
        // Afterwards the same devices open again: nothing stayed stuck.
        let again = CameraSource(device: camera, request: vga)
        let frames = FrameRecorder(target: 3)
        again.consumer = frames
        try again.start()
        XCTAssertTrue(frames.wait(seconds: 20), "the second camera captures once descriptors are back")
        again.release()
    }
}
