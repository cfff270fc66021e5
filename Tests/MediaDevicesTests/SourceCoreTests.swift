import Dispatch
import Glibc
import Synchronization
import TestSupport
import XCTest
@testable import MediaDevicesCore
@testable import MediaDevicesVideo

/// `SourceCore`'s rules where timing decides: a device part whose `startRun` returns late
/// (a starting thread descheduled on a busy machine) while its run's first frame already
/// reached the callback; lines a device part logs while opening under the control lock.
final class SourceCoreTests: XCTestCase {
    /// A device part whose run delivers one frame at once and then waits to be woken; its
    /// `startRun` returns only once the test lets it (after the first frame's callback ran).
    private struct LateStartingDevice: SourceDevice {
        let startMayReturn: DispatchSemaphore
        /// Seconds the run's loop waits for its wake-up before giving up by itself.
        let loopLimit: Int32

        func open() {}
        func close() {}
        var savedFormat: Void { () }
        func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            throw MediaDevicesError(.unsupportedFormat, device: "late", operation: "setFormat", detail: "Not used here")
        }
        func restoreFormat(_ saved: Void) {}

        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            let limit = loopLimit
            let run = try CaptureRun(name: "md-test-late", delivery: delivery, loop: { wake, _ in
                let memory = UnsafeMutableRawBufferPointer.allocate(byteCount: 16, alignment: 16)
                defer { memory.deallocate() }
                memory.initializeMemory(as: UInt8.self, repeating: 0x80)
                let format = VideoFormat(pixelFormat: .grey, width: 4, height: 4)
                delivery.deliver(VideoFrame(format: format, timestamp: MonotonicInstant(nanoseconds: MonotonicClock.now()), sequence: 0,
                                            orientation: .up, captureDelay: .zero, planeCount: 1, bytesUsed: 16,
                                            plane0: FramePlane(bytes: UnsafeRawBufferPointer(memory), bytesPerRow: 4),
                                            plane1: .empty, plane2: .empty))
                var descriptor = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
                _ = poll(&descriptor, 1, limit * 1000)
                return nil
            }, cleanup: { _ in })
            _ = startMayReturn.wait(timeout: .now() + 10)
            return run
        }
    }

    /// Calls `stop()` from its first frame's callback, then lets `startRun` return.
    private final class StoppingConsumer: VideoFrameConsumer, Sendable {
        let core: SourceCore<LateStartingDevice>
        let startMayReturn: DispatchSemaphore
        let ended = DispatchSemaphore(value: 0)
        private let counts = Mutex((frames: 0, endings: 0))

        init(core: SourceCore<LateStartingDevice>, startMayReturn: DispatchSemaphore) {
            self.core = core
            self.startMayReturn = startMayReturn
        }

        var endings: Int { counts.withLock { $0.endings } }

        func consumeFrame(_ frame: VideoFrame) {
            let first = counts.withLock { $0.frames += 1; return $0.frames == 1 }
            guard first else { return }
            core.stop()  // before start() has stored the run: the run slot is still empty
            startMayReturn.signal()
        }

        func captureDidStop(error: MediaDevicesError?) {
            counts.withLock { $0.endings += 1 }
            ended.signal()
        }
    }

    /// The first frame's callback calls `stop()` before `start()` has stored the run (seen
    /// once in the rig under load: "capture ended after the callback called stop()" failed
    /// after 30 s): the run ends when the callback returns, not when the loop gives up (here
    /// after 20 s).
    func testStopFromTheFirstCallbackEndsARunStartHasNotStoredYet() throws {
        let startMayReturn = DispatchSemaphore(value: 0)
        let core = SourceCore(device: LateStartingDevice(startMayReturn: startMayReturn, loopLimit: 20), label: "late")
        let consumer = StoppingConsumer(core: core, startMayReturn: startMayReturn)
        core.delivery.consumer = consumer
        let started = DispatchTime.now().uptimeNanoseconds
        try core.start()
        XCTAssertEqual(consumer.ended.wait(timeout: .now() + 5), .success, "capture ended after the callback called stop()")
        let seconds = Double(DispatchTime.now().uptimeNanoseconds - started) / 1e9
        XCTAssertLessThan(seconds, 5, "it ended when the callback returned, not when the loop gave up")
        XCTAssertFalse(core.isCapturing)
        XCTAssertEqual(consumer.endings, 1, "the consumer heard of the end once")
        core.release()
        XCTAssertEqual(consumer.endings, 1, "release() after the end ends nothing again")
    }

    /// A device part whose opening logs a line, as a portal screen's does (the request and the
    /// user's answer), under the control lock.
    private struct LoggingOpenDevice: SourceDevice {
        let delivery: FrameDelivery
        func open() { delivery.logAfterControl(.info, "opening", ["step": "request"]) }
        func close() {}
        var savedFormat: Void { () }
        func applyFormat(_ request: FormatRequest) throws(MediaDevicesError) -> FormatNegotiation {
            throw MediaDevicesError(.unsupportedFormat, device: "logging", operation: "setFormat", detail: "Not used here")
        }
        func restoreFormat(_ saved: Void) {}
        func startRun(delivery: FrameDelivery) throws(MediaDevicesError) -> CaptureRun {
            throw MediaDevicesError(.unsupportedFormat, device: "logging", operation: "start", detail: "Not used here")
        }
    }

    /// The lines reach the application's log handler after the control lock is released: the
    /// handler calls a control operation of the same source (from another thread, so that a
    /// held lock shows as a wait, not a deadlock), which must not wait for the lock.
    func testLinesADevicePartLogsWhileOpeningReachTheHandlerOutsideTheControlLock() throws {
        let delivery = FrameDelivery()
        let core = SourceCore(device: LoggingOpenDevice(delivery: delivery), label: "logging", delivery: delivery)
        defer { core.release() }
        let recorder = LogRecorder()
        let waits = Mutex<[Bool]>([])
        // In the handler: does a control call of the source go through at once?
        delivery.logger = recorder.logger(label: "test.core") {
            let done = DispatchSemaphore(value: 0)
            Thread { _ = try? core.setFormat(FormatRequest()); done.signal() }.start()
            let prompt = done.wait(timeout: .now() + 2) == .success
            waits.withLock { $0.append(prompt) }
        }
        try core.initialize()
        XCTAssertEqual(recorder.lines.filter { $0.hasPrefix("info: opening") }.count, 1, "\(recorder.lines)")
        XCTAssertTrue(recorder.lines.first?.contains("device=logging") == true, "the source's device is named: \(recorder.lines)")
        XCTAssertEqual(waits.withLock { $0 }, [true], "the handler ran with the control lock free")
    }
}
