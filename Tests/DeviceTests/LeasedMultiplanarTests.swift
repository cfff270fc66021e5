import CDRM
import Foundation
import Glibc
import MediaDevices
import Synchronization
import TestSupport
import XCTest

/// Leases of the multi-planar `M` formats (one driver buffer per plane: NV12M, YUV420M) on
/// vivid's multi-planar device: every plane stays the driver's buffer on lease, and each plane
/// carries its own DMA-BUF (`VIDIOC_EXPBUF` with the plane's index).
final class LeasedMultiplanarTests: XCTestCase {
    override func setUpWithError() throws { try Rig.require() }

    /// Copies of every plane of the frames the callback consumer saw, by sequence number.
    final class PlaneCopies: VideoFrameConsumer, @unchecked Sendable {
        private let copies = Mutex<[UInt32: [[UInt8]]]>([:])
        func consumeFrame(_ frame: VideoFrame) {
            var planes: [[UInt8]] = []
            for index in 0..<frame.planeCount { planes.append(Array(frame.plane(index).bytes)) }
            copies.withLock { $0[frame.sequence] = planes }
        }
        func copy(of sequence: UInt32) -> [[UInt8]]? { copies.withLock { $0[sequence] } }
    }

    func testNV12MFramesAreLeasedWithTheRightPixelsAndADMABufPerPlane() async throws {
        try await checkLeases(.nv12m, drm: "NV12", planeSizes: [640 * 480, 640 * 240])
    }

    func testYUV420MFramesAreLeasedWithADMABufPerPlane() async throws {
        try await checkLeases(.yuv420m, drm: "YU12", planeSizes: [640 * 480, 320 * 240, 320 * 240])
    }

    /// A single-buffer format on the multi-planar API: vivid starts the data 128 bytes into the
    /// buffer (`data_offset`), and the DMA-BUF's plane offset says so.
    func testYUYVOnTheMultiplanarAPICarriesTheDataOffsetInItsDMABuf() async throws {
        try await checkLeases(.yuyv, drm: "YUYV", planeSizes: [640 * 480 * 2])
    }

    private func checkLeases(_ format: PixelFormat, drm: String, planeSizes: [Int]) async throws {
        let node = try Rig.loadVivid("n_devs=1 multiplanar=2")[0]
        try Rig.colourBars(node)
        let before = ProcessFigures.settled()
        var summary = ""
        var offsets: Set<Int> = []
        do {
            let source = CameraSource(device: try CaptureDevice(path: node),
                                      request: FormatRequest(pixelFormat: format, size: .vga, frameRate: FrameRate(25)),
                                      exportsDMABuf: true)
            defer { source.release() }
            let reference = PlaneCopies()
            source.consumer = reference
            let frames = source.frameSequence(bufferSize: 2)
            try source.start()
            var checked = 0, leased = 0, dmaBufChecked = 0
            for try await buffer in frames {
                let expected = reference.copy(of: buffer.sequence)
                let isLeased = buffer.isLeased
                try buffer.withFrame { frame in
                    XCTAssertEqual(frame.planeCount, planeSizes.count)
                    for plane in 0..<frame.planeCount {
                        XCTAssertEqual(frame.plane(plane).bytes.count, planeSizes[plane], "plane \(plane)")
                        XCTAssertTrue(sameBytes(frame.plane(plane).bytes, expected?[plane]),
                                      "frame \(frame.sequence) plane \(plane): the bytes equal the callback's")
                    }
                    guard isLeased else { return XCTAssertNil(frame.dmaBuf, "a copy has no DMA-BUF") }
                    leased += 1
                    let dmaBuf = try XCTUnwrap(frame.dmaBuf, "exportsDMABuf: every leased frame carries its DMA-BUF")
                    XCTAssertEqual(dmaBuf.drmFourCC, FourCC(drm))
                    XCTAssertEqual(dmaBuf.planeCount, planeSizes.count)
                    XCTAssertEqual(Set((0..<dmaBuf.planeCount).map { dmaBuf.plane($0).descriptor }).count, planeSizes.count,
                                   "one DMA-BUF per plane")
                    if leased % 4 == 1 {
                        for plane in 0..<dmaBuf.planeCount {
                            XCTAssertEqual(dmaBuf.plane(plane).bytesPerRow, frame.plane(plane).bytesPerRow)
                            offsets.insert(dmaBuf.plane(plane).offset)
                            try dmaBuf.plane(plane).withCPUAccess { mapped in
                                let bytes = frame.plane(plane).bytes
                                XCTAssertTrue(startsWithBytes(mapped, bytes),
                                              "plane \(plane)'s DMA-BUF, mapped with DMA_BUF_IOCTL_SYNC, holds the plane's bytes")
                            }
                        }
                        dmaBufChecked += 1
                    }
                }
                if isLeased {
                    // The whole image, gathered from the planes apart.
                    let all = buffer.withUnsafeBytes { Array($0) }
                    XCTAssertEqual(all.count, planeSizes.reduce(0, +))
                    XCTAssertTrue(expected.map { all == $0.flatMap { $0 } } ?? false, "withUnsafeBytes: the planes one after another")
                }
                checked += 1
                if checked == 20 { break }
            }
            source.stop()
            XCTAssertEqual(checked, 20)
            // How many: the reader's pace against the camera's. A reader that falls behind holds
            // buffers, and the policy then copies rather than leave vivid fewer than two (10 of 20
            // leased beside two busy loops, most when idle); each frame equals the callback's either way.
            XCTAssertGreaterThan(leased, 0, "frames read on lease")
            XCTAssertGreaterThan(dmaBufChecked, 0)
            summary = "figure: vivid \(format.name) 640x480 (multiplanar): \(checked) frames equal the callback's plane by plane, \(leased) of them leased (sequence: leased \(frames.leasedFrames), copied \(frames.copiedFrames)); \(dmaBufChecked) x \(planeSizes.count) per-plane DMA-BUFs compared with the planes (plane offsets in them, data_offset included: \(offsets.sorted()))"
        }
        print(summary)
        let after = ProcessFigures.assertDescriptorsBack(to: before, "after release")
        XCTAssertFalse(after.descriptorTargets.contains { $0.contains("dmabuf") }, "no DMA-BUF descriptor left: \(after.descriptorTargets)")
        XCTAssertEqual(after.deviceMaps, before.deviceMaps, "no buffer mapped")
    }

    /// Leasing the planes apart and carrying their DMA-BUFs costs the capture thread no heap
    /// allocation per frame (the reader on the capture thread, as in `SteadyStateTests`).
    func testLeasedNV12MWithDMABufAllocatesNothingPerFrame() async throws {
        try Rig.requireAllocationCounting()
        let node = try Rig.loadVivid("n_devs=1 multiplanar=2")[0]
        let source = CameraSource(device: try CaptureDevice(path: node),
                                  request: FormatRequest(pixelFormat: .nv12m, size: .vga, frameRate: FrameRate(25)),
                                  exportsDMABuf: true)
        defer { source.release() }
        let (probe, frames, planes) = try await CaptureRuns.allocationsWithALeasedReader(source) { frames, _ in
            var planes = 0
            for try await buffer in frames { planes += buffer.withFrame { $0.dmaBuf?.planeCount ?? 0 } }
            return planes
        }
        print("figure: heap allocations on the capture thread over 50 leased NV12M frames with DMA-BUF: \(probe.allocations) (leased \(frames.leasedFrames), copied \(frames.copiedFrames); \(planes) DMA-BUF planes seen)")
        XCTAssertEqual(probe.allocations, 0, "heap allocations on the capture thread over 50 frames")
        XCTAssertGreaterThan(frames.leasedFrames, 25, "most frames leased")
    }
}
