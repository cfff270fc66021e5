import MediaDevicesCore
import CDRM
import Foundation
import Glibc

/// How a framebuffer's memory is reached.
package enum FramebufferMapping: String, Sendable, CaseIterable {
    /// The dumb-buffer map (`DRM_IOCTL_MODE_MAP_DUMB` + `mmap` of the card), else PRIME.
    case automatic
    /// `DRM_IOCTL_MODE_MAP_DUMB` and `mmap` of the card node only (works on bochs, whose
    /// PRIME export fails with `ENOSYS`).
    case dumbBuffer
    /// PRIME export (`DRM_IOCTL_PRIME_HANDLE_TO_FD`) and `mmap` of the dma-buf only.
    case prime
}

/// A framebuffer as `DRM_IOCTL_MODE_GETFB2` (or `GETFB`) describes it, and how it was mapped.
package struct FramebufferDescription: Sendable, Hashable, CustomStringConvertible {
    /// The framebuffer's KMS object id.
    package let id: UInt32
    /// The pixel format.
    package let pixelFormat: PixelFormat
    /// The DRM format code `GETFB2` gave.
    package let drmFourCC: FourCC
    /// The DRM format code (`DRM_FORMAT_*`) `GETFB2` gave (`DRM_FORMAT_XRGB8888` is `XR24`); what
    /// a DMA-BUF of the framebuffer is imported as.
    package var drmFormat: UInt32 { drmFourCC.rawValue }
    /// The format modifier (`nil` when the framebuffer was made without one: linear).
    package let modifier: UInt64?
    /// Width in pixels.
    package let width: Int
    /// Height in pixels.
    package let height: Int
    /// Bytes per row (the pitch).
    package let bytesPerRow: Int
    /// Byte offset of the first pixel in the buffer object.
    package let offset: Int
    /// How the memory was mapped: `.dumbBuffer` or `.prime`.
    package let mapping: FramebufferMapping

    /// `"fb 42: XBGR32 1024x768, pitch 4096, linear, dumbBuffer"`.
    package var description: String {
        "fb \(id): \(pixelFormat.name) \(width)x\(height), pitch \(bytesPerRow), \(modifier.map(Framebuffer.modifierName) ?? "linear"), \(mapping.rawValue)"
    }
}

/// One framebuffer mapped for reading. The GEM handle the kernel gave is closed as soon as the
/// mapping exists (the mapping keeps the buffer alive); `memory` is unmapped and the PRIME
/// descriptor closed in `deinit`.
final class Framebuffer: Sendable {
    let description: FramebufferDescription
    /// Bytes per pixel, kept here: reading it from the layout goes through a generic
    /// `Collection` accessor, which allocates per call in debug builds.
    let bytesPerPixel: Int
    /// The PRIME export (`DRM_IOCTL_PRIME_HANDLE_TO_FD`), kept open when the memory was mapped
    /// through it (CPU reads are bracketed with `DMA_BUF_IOCTL_SYNC` on it) or when the
    /// framebuffer is exported as DMA-BUF; -1 otherwise.
    let primeDescriptor: Int32
    /// The DMA-BUF's whole length in bytes (`lseek(SEEK_END)`), when exported.
    let primeLength: Int
    private let memory: MappedMemory
    /// Whether `memory` is the PRIME descriptor's mapping (reads need `DMA_BUF_IOCTL_SYNC`).
    private let mappedThroughPRIME: Bool

    /// The first pixel.
    var pixels: UnsafeRawPointer { UnsafeRawPointer(memory.address!) + description.offset }

    private init(description: FramebufferDescription, memory: MappedMemory, primeDescriptor: Int32, primeLength: Int) {
        self.description = description
        bytesPerPixel = description.pixelFormat.layout?.bytesPerPixel ?? 4
        self.memory = memory
        self.primeDescriptor = primeDescriptor
        self.primeLength = primeLength
        mappedThroughPRIME = description.mapping == .prime
    }

    deinit {
        memory.unmap()
        if primeDescriptor >= 0 { close(primeDescriptor) }
    }

    /// Starts a CPU read of the pixels: `DMA_BUF_IOCTL_SYNC` (START | READ) when they are mapped
    /// through PRIME, nothing for the dumb-buffer map. Pair with `endRead()`.
    func beginRead() throws(MediaDevicesError) {
        if mappedThroughPRIME { try DMABufSync.beginRead(primeDescriptor) }
    }

    /// Ends a CPU read begun with `beginRead()` (`DMA_BUF_IOCTL_SYNC` END | READ).
    func endRead() {
        if mappedThroughPRIME { DMABufSync.endRead(primeDescriptor) }
    }

    /// The framebuffer as a DMA-BUF, showing the `width`x`height` rectangle at (`x`, `y`): the
    /// PRIME descriptor, the DRM fourcc and modifier `GETFB2` gave, the pitch, and the offset
    /// of the rectangle's first pixel. `nil` when the framebuffer was not exported.
    func dmaBuf(x: Int, y: Int) -> DMABufFrame? {
        guard primeDescriptor >= 0 else { return nil }
        let offset = description.offset + y * description.bytesPerRow + x * bytesPerPixel
        return DMABufFrame(drmFourCC: description.drmFourCC, modifier: description.modifier ?? DMABufFrame.linearModifier,
                           planes: [DMABufPlane(descriptor: primeDescriptor, offset: offset,
                                                bytesPerRow: description.bytesPerRow, length: primeLength)])
    }

    /// libdrm's name of a modifier (`"I915_FORMAT_MOD_Y_TILED"`), else its hex value.
    static func modifierName(_ modifier: UInt64) -> String {
        if modifier == cdrm_FORMAT_MOD_LINEAR { return "linear" }
        var name = String(format: "0x%016llx", modifier)
        if let text = drmGetFormatModifierName(modifier) {
            name = "\(String(cString: text)) (\(name))"
            free(text)
        }
        return name
    }

    /// Reads framebuffer `id` with `GETFB2` (`GETFB` on kernels before 5.7) and maps it; with
    /// `exportingDMABuf`, also exports it by PRIME and keeps the descriptor (and, with the
    /// `.automatic` method, maps through it). Returns `nil` if the framebuffer no longer exists
    /// (it was replaced meanwhile).
    ///
    /// Throws `.permissionDenied` when the kernel withholds the buffer handle (this process is
    /// neither DRM master nor has `CAP_SYS_ADMIN`), `.unsupportedFormat` for tiled or
    /// compressed modifiers, multi-plane and unknown formats; `.unsupportedFormat` too when
    /// `exportingDMABuf` and the driver has no PRIME export (bochs: `ENOSYS`).
    static func map(card: DRMCard, id: UInt32, method: FramebufferMapping, what: String,
                    exportingDMABuf: Bool = false) throws(MediaDevicesError) -> Framebuffer? {
        var info = drm_mode_fb_cmd2()
        info.fb_id = id
        var operation = "DRM_IOCTL_MODE_GETFB2"
        switch card.file.ioctlErrno(cdrm_IOCTL_MODE_GETFB2, &info) {
        case 0: break
        case ENOENT: return nil
        case EINVAL, ENOTTY:
            // Before Linux 5.7: GETFB, which knows depth and bpp but no format or modifier.
            operation = "DRM_IOCTL_MODE_GETFB"
            var legacy = drm_mode_fb_cmd()
            legacy.fb_id = id
            let error = card.file.ioctlErrno(cdrm_IOCTL_MODE_GETFB, &legacy)
            if error == ENOENT { return nil }
            if error != 0 { throw MediaDevicesError.fromErrno(error, device: card.path, operation: operation) }
            let formats: [String: UInt32] = ["32/24": cdrm_FORMAT_XRGB8888, "32/32": cdrm_FORMAT_ARGB8888,
                                             "16/16": cdrm_FORMAT_RGB565, "32/30": cdrm_FORMAT_XRGB2101010]
            info = drm_mode_fb_cmd2()
            (info.fb_id, info.width, info.height) = (id, legacy.width, legacy.height)
            info.pixel_format = formats["\(legacy.bpp)/\(legacy.depth)"] ?? 0
            info.handles.0 = legacy.handle
            info.pitches.0 = legacy.pitch
        case let error:
            throw MediaDevicesError.fromErrno(error, device: card.path, operation: operation)
        }
        // Every distinct handle the kernel gave is closed once the mapping exists (or failed).
        let handles = Set([info.handles.0, info.handles.1, info.handles.2, info.handles.3].filter { $0 != 0 })
        defer {
            for handle in handles {
                var close = drm_gem_close(handle: handle, pad: 0)
                _ = card.file.ioctlErrno(cdrm_IOCTL_GEM_CLOSE, &close)
            }
        }
        let code = FourCC(rawValue: info.pixel_format)
        let modifier: UInt64? = info.flags & cdrm_MODE_FB_MODIFIERS != 0 ? info.modifier.0 : nil
        if let modifier, modifier != cdrm_FORMAT_MOD_LINEAR {
            throw MediaDevicesError(.unsupportedFormat, device: card.path, operation: "\(operation) (\(what))",
                                    detail: "The framebuffer uses the modifier \(modifierName(modifier)) (tiled or compressed memory), which cannot be read as linear pixels; only linear framebuffers can be captured. Set the display server to use linear buffers (e.g. `WLR_DRM_NO_MODIFIERS=1`) or capture through it instead")
        }
        guard let format = PixelFormat.framebufferFormat(drm: info.pixel_format), let layout = format.layout,
              layout.planes.count == 1, !layout.isCompressed else {
            throw MediaDevicesError(.unsupportedFormat, device: card.path, operation: "\(operation) (\(what))",
                                    detail: "The framebuffer's format \(code) is not one MediaDevices reads (linear XRGB8888, ARGB8888, XBGR8888, ABGR8888, RGB565, XRGB2101010 and other single-plane RGB formats)")
        }
        guard info.handles.0 != 0 else { throw privilegeError(card: card, operation: operation) }
        let pitch = Int(info.pitches.0), offset = Int(info.offsets.0), height = Int(info.height)
        let length = offset + pitch * height
        var errors: [String] = []
        // The PRIME export: the DMA-BUF asked for, or the fallback map when the dumb one fails.
        var prime: (fd: Int32, length: Int)?
        func exportPRIME() -> (fd: Int32, length: Int)? {
            var descriptor: Int32 = -1
            guard drmPrimeHandleToFD(card.file.rawValue, info.handles.0, cdrm_CLOEXEC, &descriptor) == 0 else {
                errors.append("DRM_IOCTL_PRIME_HANDLE_TO_FD: \(MediaDevicesError.errnoName(errno))")
                return nil
            }
            let size = lseek(descriptor, 0, SEEK_END)  // a DMA-BUF's size; only SEEK_END and SEEK_SET to 0 are allowed
            lseek(descriptor, 0, SEEK_SET)
            return (descriptor, size > 0 ? Int(size) : length)
        }
        if exportingDMABuf {
            prime = exportPRIME()
            guard prime != nil else {
                throw MediaDevicesError(.unsupportedFormat, device: card.path, operation: "DRM_IOCTL_PRIME_HANDLE_TO_FD (\(what))",
                                        detail: "The driver \(card.driver) cannot export its framebuffers as DMA-BUF (\(errors.joined(separator: "; "))); capture without exportsDMABuf, or on a driver with PRIME export (virtio-gpu, i915, amdgpu)")
            }
        }
        var memory: MappedMemory?
        var used = FramebufferMapping.dumbBuffer
        // With an export at hand, `.automatic` maps through it: one buffer, one way in.
        if method == .dumbBuffer || (method == .automatic && prime == nil) {
            var request = drm_mode_map_dumb(handle: info.handles.0, pad: 0, offset: 0)
            let error = card.file.ioctlErrno(cdrm_IOCTL_MODE_MAP_DUMB, &request)
            if error == 0 {
                do {
                    memory = try MappedMemory(descriptor: card.file.rawValue, device: card.path, length: length,
                                              offset: Int(request.offset), protection: PROT_READ, operation: "mmap (dumb buffer)")
                } catch { errors.append("mmap of the dumb buffer: \(MediaDevicesError.errnoName(error.errno?.rawValue ?? 0))") }
            } else {
                errors.append("DRM_IOCTL_MODE_MAP_DUMB: \(MediaDevicesError.errnoName(error))")
            }
        }
        if memory == nil && method != .dumbBuffer {
            used = .prime
            if prime == nil { prime = exportPRIME() }
            if let prime {
                do {
                    memory = try MappedMemory(descriptor: prime.fd, device: card.path, length: length, offset: 0,
                                              protection: PROT_READ, operation: "mmap (PRIME dma-buf)")
                } catch { errors.append("mmap of the dma-buf: \(MediaDevicesError.errnoName(error.errno?.rawValue ?? 0))") }
            }
        }
        guard let memory else {
            if let prime { close(prime.fd) }
            throw MediaDevicesError(.io, device: card.path, operation: "map framebuffer \(id) (\(what))",
                                    detail: "The driver \(card.driver) let no method map it (\(errors.joined(separator: "; "))); its buffers may live in memory the CPU cannot read")
        }
        let description = FramebufferDescription(id: id, pixelFormat: format, drmFourCC: code, modifier: modifier, width: Int(info.width),
                                                 height: height, bytesPerRow: pitch, offset: offset, mapping: used)
        return Framebuffer(description: description, memory: memory, primeDescriptor: prime?.fd ?? -1, primeLength: prime?.length ?? 0)
    }

    /// The error for a framebuffer handle of 0: not master, no `CAP_SYS_ADMIN`.
    static func privilegeError(card: DRMCard, operation: String) -> MediaDevicesError {
        let binary = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? "BINARY"
        return MediaDevicesError(.permissionDenied, device: card.path, operation: operation,
                                 detail: "The kernel gave no framebuffer handle: reading another program's screen needs CAP_SYS_ADMIN or being the DRM master, and this process is neither (another process, e.g. the display server, is master). Grant the one capability to this binary only: `sudo setcap cap_sys_admin+ep \(binary)` (remove it with `setcap -r`), or run it on a VT where no display server holds \(card.path), so that it becomes master itself")
    }
}
