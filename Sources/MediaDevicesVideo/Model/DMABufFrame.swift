import MediaDevicesCore
import SystemPackage
/// One plane of a frame exported as a DMA-BUF: the file descriptor a hardware encoder, EGL
/// (`EGL_LINUX_DMA_BUF_EXT`), Vulkan (`VK_EXT_external_memory_dma_buf`) or GStreamer
/// (`video/x-raw(memory:DMABuf)`) imports, and where the plane lies in it.
public struct DMABufPlane: Sendable, Hashable {
    /// The DMA-BUF file descriptor. It belongs to the source: valid while the frame's lease
    /// (or the consumer callback) lasts; `dup` it (`descriptor.duplicate()`) to keep it longer.
    public let descriptor: FileDescriptor
    /// Where the plane starts in the DMA-BUF, in bytes.
    public let offset: Int
    /// Bytes per row.
    public let bytesPerRow: Int
    /// The DMA-BUF's whole length in bytes (for `mmap`).
    public let length: Int

    /// A plane at `offset` of `descriptor`, rows `bytesPerRow` apart, in a buffer of `length` bytes.
    package init(descriptor: Int32, offset: Int, bytesPerRow: Int, length: Int) {
        self.descriptor = FileDescriptor(rawValue: descriptor)
        self.offset = offset
        self.bytesPerRow = bytesPerRow
        self.length = length
    }
}

/// A frame's pixels as DMA-BUFs, described the way DRM and EGL import them: the DRM fourcc, the
/// format modifier, and up to three planes. Built once per driver buffer; carrying it in a frame
/// allocates nothing.
public struct DMABufFrame: Sendable, Hashable {
    /// The DRM format code of the pixels.
    package let drmFourCC: FourCC
    /// The DRM format code (`DRM_FORMAT_*`) of the pixels: what EGL's `EGL_LINUX_DRM_FOURCC_EXT`
    /// and Vulkan's format mapping take.
    public var drmFormat: UInt32 { drmFourCC.rawValue }
    /// The DRM format modifier; V4L2 buffers are linear (`DRM_FORMAT_MOD_LINEAR`, 0), screens
    /// give their framebuffer's (linear: only linear framebuffers are captured).
    public let modifier: UInt64
    /// The number of planes (1 to 3).
    public let planeCount: Int
    private let plane0: DMABufPlane
    private let plane1: DMABufPlane?
    private let plane2: DMABufPlane?

    /// `DRM_FORMAT_MOD_LINEAR`.
    package static let linearModifier: UInt64 = 0

    /// A description of `planes` (1 to 3; extra ones are ignored) in `drmFourCC` with `modifier`.
    package init(drmFourCC: FourCC, modifier: UInt64 = DMABufFrame.linearModifier, planes: [DMABufPlane]) {
        precondition(!planes.isEmpty, "a DMA-BUF frame has at least one plane")
        self.drmFourCC = drmFourCC
        self.modifier = modifier
        planeCount = min(planes.count, 3)
        plane0 = planes[0]
        plane1 = planes.count > 1 ? planes[1] : nil
        plane2 = planes.count > 2 ? planes[2] : nil
    }

    /// Plane `index` (0 ..< `planeCount`).
    public func plane(_ index: Int) -> DMABufPlane {
        switch index {
        case 0: return plane0
        case 1: return plane1 ?? plane0
        default: return plane2 ?? plane0
        }
    }
}
