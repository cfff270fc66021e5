import Foundation
@testable import MediaDevices
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
        let attempts = 200
        for _ in 0..<attempts { failedSetup() }
        let growth = try XCTUnwrap(AllocationProbe.heapInUseKilobytes) - before
        // Each failed setup that kept its memory would hold 33 KiB (the table of 64 entries,
        // 1 KiB; the requeue planes, 32 KiB): 200 of them 6.6 MiB, the table alone 200 KiB.
        XCTAssertLessThan(growth, 64, "KiB of heap kept by \(attempts) failed setups")
        print("figure: heap growth over \(attempts) failed V4L2Buffers setups: \(growth) KiB")
    }
}
