@testable import MediaDevicesAudio
import XCTest

/// The echo reference line across a render run's end (a device switch, a stop): what the old
/// device still held when it stopped was never heard, so it is no reference.
final class EchoReferenceLineTests: XCTestCase {
    /// A line with frames 0..<1000 appended (each frame's sample is its time + 1), then a run
    /// end at 500 (the old device dropped 500..<1000), then the new device's frames heard from
    /// 520 on (samples -1, -2, …, after a gap): the capture block recorded at 400..<560 takes
    /// 400..<500 of the old run, silence for 500..<520, then the new run's frames.
    func testFramesDroppedAtARunsEndAreNoReference() {
        for cut in [true, false] {
            let line = EchoReferenceLine(channels: 1, capacityFrames: 4000, tolerance: 96, confirmFrames: 3200)
            let old = (0..<1000).map { Int16($0 + 1) }
            for start in stride(from: 0, to: 1000, by: 100) {
                old.withUnsafeBufferPointer { line.append($0.baseAddress! + start, frames: 100, time: Double(start), afterGap: start == 0) }
            }
            if cut { line.cut(at: 500) }
            let new = (0..<200).map { Int16(-1 - $0) }
            new.withUnsafeBufferPointer { line.append($0.baseAddress!, frames: 200, time: 520, afterGap: true) }
            var reference = [Int16](repeating: 99, count: 160)
            let played = reference.withUnsafeMutableBufferPointer { line.take(into: $0.baseAddress!, frames: 160, time: 400, afterGap: false) }
            if cut {
                XCTAssertEqual(Array(reference[0..<100]), (400..<500).map { Int16($0 + 1) }, "the old run, heard before it ended")
                XCTAssertEqual(Array(reference[100..<120]), [Int16](repeating: 0, count: 20), "between the runs: silence")
                XCTAssertEqual(Array(reference[120..<160]), (0..<40).map { Int16(-1 - $0) }, "the new run, from its first frame")
                XCTAssertEqual(played, 140)
                XCTAssertEqual(line.renderJumps, 1, "the new run re-aligned at its stamp")
            } else {
                // Without the cut the old run's dropped frames stand in for what was heard.
                XCTAssertEqual(Array(reference[100..<160]), (500..<560).map { Int16($0 + 1) })
            }
        }
    }
}
