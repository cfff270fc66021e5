import Foundation
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore
import TestSupport
import XCTest

/// `V4L2Buffers` whose setup fails (the driver refuses `VIDIOC_REQBUFS`) give back all they
/// allocated: the buffer table, the plane arrays and the mappings made so far.
final class BufferSetupFailureTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    func testBuffersWhoseSetupFailsLeakNothing() throws {
        try Rig.requireAllocationCounting()
        let node = try Rig.loadVivid("n_devs=1")[0]
        let owner = try V4L2Device(path: node)
        let format = try owner.currentFormat()
        // Another descriptor owns the node's buffers: REQBUFS on a second one is refused (EBUSY).
        let held = try V4L2Buffers(device: owner, format: format, count: 4)
        defer { held.release() }
        let other = try V4L2Device(path: node)
        func failedSetup() {
            XCTAssertThrowsError(try V4L2Buffers(device: other, format: format, count: 4)) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .busy, "\(error)")
            }
        }
        failedSetup()
        let before = try XCTUnwrap(AllocationProbe.heapInUseKilobytes)
        let attempts = 400
        for _ in 0..<attempts { failedSetup() }
        let growth = try XCTUnwrap(AllocationProbe.heapInUseKilobytes) - before
        // Each failed setup that kept its memory would hold about 17 KiB (the buffer table of
        // VIDEO_MAX_FRAME = 32 entries, 0.5 KiB; the requeue planes, 32 x 8 v4l2_planes, 16 KiB):
        // 400 of them 6.8 MiB. The table alone leaked (deinit not freeing it) grew the heap by
        // 103 KiB over 200 setups in the rig: 206 KiB over 400.
        XCTAssertLessThan(growth, 64, "KiB of heap kept by \(attempts) failed setups")
        print("figure: heap growth over \(attempts) failed V4L2Buffers setups: \(growth) KiB")
    }
}
