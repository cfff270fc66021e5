import Foundation
import MediaDevices
import XCTest

/// A real PulseAudio daemon started for the test, with a null sink whose monitor source gives
/// back what is played into it. The test process reaches it through PULSE_SERVER.
final class PulseDaemon {
    let pid: pid_t
    let runtime: String

    init(name: String) throws {
        runtime = "\(Rig.scratch)/pulse-\(name)"
        let started = try Rig.run("""
            rm -rf \(runtime) && mkdir -p \(runtime) && \
            HOME=\(runtime) XDG_RUNTIME_DIR=\(runtime) pulseaudio -n --daemonize=no --exit-idle-time=-1 --disallow-exit \
              --use-pid-file=no --log-target=stderr --log-level=error \
              -L "module-native-protocol-unix auth-anonymous=1 socket=\(runtime)/native" \
              -L "module-null-sink sink_name=mdsink rate=48000 channels=2" </dev/null >\(runtime)/log 2>&1 &
            echo $!
            """)
        pid = pid_t(started.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
        setenv("PULSE_SERVER", "unix:\(runtime)/native", 1)
        for _ in 0..<200 {
            if Rig.shell("PULSE_SERVER=unix:\(runtime)/native pactl info").status == 0 { return }
            usleep(50_000)
        }
        XCTFail("pulseaudio did not come up: \(Rig.shell("cat \(runtime)/log").output)")
        throw RigError.commandFailed("pulseaudio")
    }

    /// `pactl` against this daemon.
    func pactl(_ arguments: String) throws -> String { try Rig.run("PULSE_SERVER=unix:\(runtime)/native pactl \(arguments)") }

    /// SIGKILL: the server is gone at once, as in a crash.
    func kill() {
        guard pid > 0, Glibc.kill(pid, 0) == 0 else { return }
        Glibc.kill(pid, SIGKILL)
        var status: Int32 = 0
        waitpid(pid, &status, 0)  // reaps it if it is our child's child's orphan; harmless otherwise
        for _ in 0..<100 where Glibc.kill(pid, 0) == 0 { usleep(10_000) }
    }

    deinit { kill() }
}

/// The Pulse backend against a real daemon: the tone test through a null sink and its monitor,
/// enumeration against `pactl`, and the daemon killed mid-stream.
final class AudioPulseTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testToneThroughNullSinkAndMonitor() throws {
        let daemon = try PulseDaemon(name: "tone")
        defer { daemon.kill() }
        for format in [AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE), AudioFormat(sampleRate: 44100, channels: 1, sampleFormat: .floatLE)] {
            let driver = AudioDriver()
            // Generous buffering (170 ms): the emulated guest stalls, and a server-side underrun
            // would put gaps in the tone.
            let options = AudioStreamOptions(periodFrames: 1024, periods: 8)
            try driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format, options: options)
            try driver.initializeCapture(device: .pulse("mdsink.monitor", direction: .input), format: format, options: options)
            let result = try AudioToneRun(driver: driver, format: format).run(seconds: 0.8)
            XCTAssertNotNil(result.roundTrip, "the tone came back through the monitor")
            guard let (frequency, level) = AudioToneRun.assertTone(result.captured, format: format, skip: 0.15, label: "Pulse \(format)") else { continue }
            let render = driver.render.statistics, capture = driver.capture.statistics
            XCTAssertGreaterThan(render.meanDelayMicroseconds, 0, "the render latency comes from the server")
            print(String(format: "figure: PulseAudio null sink %@: %.3f Hz, %.2f dBFS, round trip %.1f ms, render latency mean %.1f ms, capture latency mean %.1f ms",
                         "\(format)", frequency, level, (result.roundTrip ?? 0) * 1000,
                         render.meanDelayMicroseconds / 1000, capture.meanDelayMicroseconds / 1000))
            driver.render.terminate()
            driver.capture.terminate()
        }
    }

    func testEnumerationAgreesWithPactl() throws {
        let daemon = try PulseDaemon(name: "list")
        defer { daemon.kill() }
        let devices = AudioDevice.enumerate().devices.filter { $0.backend == .pulse }
        for (kind, direction) in [("sinks", AudioDevice.Direction.output), ("sources", .input)] {
            let names = try daemon.pactl("list short \(kind)").split(separator: "\n").map { String($0.split(separator: "\t")[1]) }
            XCTAssertEqual(Set(devices.filter { $0.direction == direction }.map(\.name)), Set(names), kind)
        }
        let info = try daemon.pactl("info")
        let defaultSink = info.split(separator: "\n").first { $0.hasPrefix("Default Sink: ") }.map { String($0.dropFirst("Default Sink: ".count)) }
        XCTAssertEqual(devices.first { $0.direction == .output && $0.isDefault }?.name, defaultSink)
        XCTAssertTrue(devices.contains { $0.uniqueID == "pulse:mdsink.monitor" && $0.direction == .input })
        let caps = try XCTUnwrap(devices.first { $0.name == "mdsink" }).supportedFormats()
        XCTAssertEqual(caps.nativeFormat?.sampleRate, 48000, "the sink's own spec, as loaded")
        XCTAssertEqual(caps.nativeFormat?.channels, 2)
        print("figure: pactl: \(devices.count) Pulse sources and sinks, the same as AudioDevice's")
    }

    func testKillingTheDaemonMidStreamDisconnects() throws {
        let daemon = try PulseDaemon(name: "kill")
        let format = AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE)
        let driver = AudioDriver()
        try driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format)
        try driver.initializeCapture(device: .pulse("mdsink.monitor", direction: .input), format: format)
        let ended = DispatchSemaphore(value: 0)
        driver.capture.onStop = { _ in ended.signal() }
        driver.render.onStop = { _ in ended.signal() }
        try driver.startCapture()
        try driver.startRendering()
        usleep(500_000)
        XCTAssertTrue(driver.isCapturing && driver.isRendering)
        XCTAssertGreaterThan(driver.render.statistics.frames, 0, "the stream ran before the kill")
        daemon.kill()
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success, "capture ended")
        XCTAssertEqual(ended.wait(timeout: .now() + 5), .success, "render ended")
        XCTAssertFalse(driver.isCapturing || driver.isRendering)
        XCTAssertEqual(driver.capture.endError?.code, .disconnected, "\(String(describing: driver.capture.endError))")
        XCTAssertEqual(driver.render.endError?.code, .disconnected, "\(String(describing: driver.render.endError))")
        // The process goes on: stop and terminate are harmless, enumeration says why Pulse is missing.
        driver.stopCapture()
        driver.render.terminate()
        let problems = AudioDevice.enumerate(pulseTimeout: 1).problems
        XCTAssertTrue(problems.contains { $0.device == "pulse" }, "\(problems)")
        XCTAssertThrowsError(try driver.initializeRendering(device: .pulse("mdsink", direction: .output), format: format)) { error in
            XCTAssertEqual((error as? MediaDevicesError)?.code, .notFound, "\(error)")
        }
        print("figure: pulseaudio killed mid-stream: capture \(driver.capture.endError!.code), render \(driver.render.endError!.code)")
    }
}
