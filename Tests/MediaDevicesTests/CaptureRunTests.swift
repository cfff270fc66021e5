import Foundation
import Synchronization
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The order in which a run that fails by itself ends: cleanup, then "not running", then the
/// consumer and the sequences hear of it, so code reacting to the end sees `isRunning` false.
final class CaptureRunTests: XCTestCase {
    /// Notes, in `captureDidStop`, whether the run still said it was running.
    private final class StopWitness: VideoFrameConsumer {
        let slot: RunSlot
        let seen = Mutex<[Bool]>([])
        let heard = DispatchSemaphore(value: 0)
        init(slot: RunSlot) { self.slot = slot }
        func consumeFrame(_ frame: VideoFrame) {}
        func captureDidStop(error: MediaDevicesError?) {
            seen.withLock { $0.append(slot.isRunning) }
            heard.signal()
        }
    }

    func testAFailedRunSaysNotRunningBeforeItsEndIsHeard() throws {
        for _ in 0..<50 {
            let slot = RunSlot()
            let delivery = FrameDelivery()
            let witness = StopWitness(slot: slot)
            delivery.consumer = witness
            let cleaned = Atomic<Bool>(false)
            let go = DispatchSemaphore(value: 0)
            delivery.beginRun()
            slot.current = try CaptureRun(name: "md-test", delivery: delivery, loop: { _, _ in
                go.wait()  // the slot holds the run before it fails
                return MediaDevicesError(.disconnected, device: "/dev/video99", operation: "VIDIOC_DQBUF", detail: "test")
            }, cleanup: { _ in cleaned.store(true, ordering: .releasing) })
            go.signal()
            XCTAssertEqual(witness.heard.wait(timeout: .now() + 10), .success, "captureDidStop")
            XCTAssertEqual(witness.seen.withLock { $0 }, [false], "captureDidStop must see the run not running")
            XCTAssertTrue(cleaned.load(ordering: .acquiring), "cleanup ran before the end was heard")
            XCTAssertTrue(slot.stop(restarting: false), "the ended run is still in the slot until joined")
        }
    }
}
