import Dispatch
import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import XCTest

/// `AudioBus.waitForCaptureData(samples:timeout:)`: a reader sleeps until the capture side
/// writes, wakes once per write, and a wake-up that raced a timeout does not end the next wait early.
final class AudioBusWaitTests: XCTestCase {
    private func bus() -> AudioBus {
        let bus = AudioBus(capacityBytes: 1 << 16)
        bus.setCaptureFormat(AudioFormat(sampleRate: 48000, channels: 2, sampleFormat: .s16LE))
        return bus
    }

    func testWaitReturnsWhenTheCaptureSideWritesAndNotBefore() {
        let bus = bus()
        let written = Atomic(false)
        let writer = Thread {
            usleep(80_000)
            written.value = true
            let period = [Int16](repeating: 7, count: 960)
            _ = period.withUnsafeBufferPointer { bus.writeCaptureData($0) }
        }
        let start = Date()
        writer.start()
        XCTAssertTrue(bus.waitForCaptureData(samples: 960, timeout: .seconds(10)), "the write woke the reader")
        XCTAssertTrue(written.value, "the reader did not return before the write")
        XCTAssertLessThan(Date().timeIntervalSince(start), 5, "woken by the write, not by the timeout")
        XCTAssertEqual(bus.captureSamplesAvailable, 960)
    }

    func testWaitTimesOutWithoutDataAndReturnsAtOnceWithIt() {
        let bus = bus()
        let start = Date()
        XCTAssertFalse(bus.waitForCaptureData(samples: 1, timeout: .milliseconds(150)))
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.14, "slept out the timeout")
        let some = [Int16](repeating: 1, count: 4)
        _ = some.withUnsafeBufferPointer { bus.writeCaptureData($0) }
        XCTAssertTrue(bus.waitForCaptureData(samples: 4, timeout: .zero), "data already there")
        XCTAssertFalse(bus.waitForCaptureData(samples: 6, timeout: .milliseconds(20)), "not enough yet")
    }

    /// Writes in 200 periods from another thread while the reader waits for each and drains it:
    /// every wait is answered by its write (none sleeps out its timeout), and once the writer stops, a wait
    /// times out instead of returning early on a stale signal.
    func testOneWakeUpPerWriteAndNoStaleSignal() {
        let bus = bus()
        let periods = 200
        let read = DispatchSemaphore(value: 0)
        let writer = Thread {
            let period = [Int16](repeating: 3, count: 96)
            for _ in 0..<periods {
                _ = period.withUnsafeBufferPointer { bus.writeCaptureData($0) }
                read.wait()   // the reader drained it
            }
        }
        writer.start()
        var buffer = [Int16](repeating: 0, count: 4096)
        var timeouts = 0, samples = 0
        for _ in 0..<periods {
            let start = Date()
            let answered = bus.waitForCaptureData(samples: 96, timeout: .seconds(3))
            if !answered || Date().timeIntervalSince(start) > 2.5 {
                timeouts += 1
                break   // a lost wake-up (slept out the timeout): one is enough, 200 would take 600 s
            }
            samples += buffer.withUnsafeMutableBufferPointer { bus.readCaptureData(into: $0) }
            read.signal()
        }
        if timeouts > 0 { for _ in 0..<periods { read.signal() } }   // let the writer finish
        XCTAssertEqual(timeouts, 0)
        XCTAssertEqual(samples, periods * 96)
        let start = Date()
        XCTAssertFalse(bus.waitForCaptureData(samples: 1, timeout: .milliseconds(100)), "no data: no early return")
        XCTAssertGreaterThanOrEqual(Date().timeIntervalSince(start), 0.09)
    }
}

/// A flag two threads share in these tests.
private final class Atomic: @unchecked Sendable {
    private let lock = NSLock()
    private var stored: Bool
    init(_ value: Bool) { stored = value }
    var value: Bool {
        get { lock.withLock { stored } }
        set { lock.withLock { stored = newValue } }
    }
}
