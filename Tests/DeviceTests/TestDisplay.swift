import CDRM
import Foundation
import Glibc
import MediaDevices
import XCTest

/// A test helper that owns the display as DRM master: it shows framebuffers with a known
/// pattern (coloured quadrants, a one-pixel grid every 16 pixels, and position bits in blue)
/// on the first connected connector's CRTC, changes modes, and sets the cursor. Closing it
/// gives the screen back to the console (fbcon restores its framebuffer).
final class TestDisplay {
    struct Buffer {
        let handle: UInt32
        let fb: UInt32
        let width: Int
        let height: Int
        let pitch: Int
        let size: Int
        let pixels: UnsafeMutableRawPointer
    }

    let path: String
    let fd: Int32
    let connectorID: UInt32
    let crtcID: UInt32
    /// The modes the connector offers.
    let modes: [drmModeModeInfo]
    private var buffers: [Buffer] = []
    /// The buffer on the CRTC now.
    private(set) var shown: Buffer?

    /// Opens `path` (default: the first card) and checks that this process is DRM master.
    init(path: String = "/dev/dri/card0") throws {
        self.path = path
        fd = open(path, O_RDWR | O_CLOEXEC)
        guard fd >= 0 else { throw TestDisplayError.failed("open \(path): \(String(cString: strerror(errno)))") }
        guard drmIsMaster(fd) != 0 else {
            close(fd)
            throw TestDisplayError.failed("\(path): this process is not DRM master (another process holds the display)")
        }
        guard let resources = drmModeGetResources(fd) else { throw TestDisplayError.failed("drmModeGetResources") }
        defer { drmModeFreeResources(resources) }
        var found: (UInt32, UInt32, [drmModeModeInfo])?
        for index in 0..<Int(resources.pointee.count_connectors) {
            guard let connector = drmModeGetConnector(fd, resources.pointee.connectors[index]) else { continue }
            defer { drmModeFreeConnector(connector) }
            guard connector.pointee.connection == DRM_MODE_CONNECTED, connector.pointee.encoder_id != 0,
                  let encoder = drmModeGetEncoder(fd, connector.pointee.encoder_id) else { continue }
            let crtc = encoder.pointee.crtc_id
            drmModeFreeEncoder(encoder)
            let modes = Array(UnsafeBufferPointer(start: connector.pointee.modes, count: Int(connector.pointee.count_modes)))
            found = (connector.pointee.connector_id, crtc, modes)
            break
        }
        guard let found, found.1 != 0 else { close(fd); throw TestDisplayError.failed("no connected connector with a CRTC on \(path)") }
        (connectorID, crtcID, modes) = found
    }

    deinit {
        for buffer in buffers { release(buffer) }
        close(fd)
    }

    private func release(_ buffer: Buffer) {
        munmap(buffer.pixels, buffer.size)
        drmModeRmFB(fd, buffer.fb)
        drmModeDestroyDumbBuffer(fd, buffer.handle)
    }

    /// A new dumb buffer of `width`x`height` XRGB8888 (or ARGB8888) with the pattern drawn.
    func makeBuffer(width: Int, height: Int, format: UInt32 = cdrm_FORMAT_XRGB8888) throws -> Buffer {
        var handle: UInt32 = 0, pitch: UInt32 = 0, size: UInt64 = 0, fb: UInt32 = 0, offset: UInt64 = 0
        guard drmModeCreateDumbBuffer(fd, UInt32(width), UInt32(height), 32, 0, &handle, &pitch, &size) == 0 else {
            throw TestDisplayError.failed("drmModeCreateDumbBuffer \(width)x\(height): \(String(cString: strerror(errno)))")
        }
        var handles: (UInt32, UInt32, UInt32, UInt32) = (handle, 0, 0, 0)
        var pitches: (UInt32, UInt32, UInt32, UInt32) = (pitch, 0, 0, 0)
        var offsets: (UInt32, UInt32, UInt32, UInt32) = (0, 0, 0, 0)
        let added = withUnsafePointer(to: &handles) { h in withUnsafePointer(to: &pitches) { p in withUnsafePointer(to: &offsets) { o in
            drmModeAddFB2(fd, UInt32(width), UInt32(height), format,
                          UnsafeRawPointer(h).assumingMemoryBound(to: UInt32.self), UnsafeRawPointer(p).assumingMemoryBound(to: UInt32.self),
                          UnsafeRawPointer(o).assumingMemoryBound(to: UInt32.self), &fb, 0)
        } } }
        guard added == 0 else { throw TestDisplayError.failed("drmModeAddFB2: \(String(cString: strerror(errno)))") }
        guard drmModeMapDumbBuffer(fd, handle, &offset) == 0 else { throw TestDisplayError.failed("drmModeMapDumbBuffer") }
        let pointer = mmap(nil, Int(size), PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))
        guard let pointer, pointer != MAP_FAILED else { throw TestDisplayError.failed("mmap dumb buffer: \(String(cString: strerror(errno)))") }
        let buffer = Buffer(handle: handle, fb: fb, width: width, height: height, pitch: Int(pitch), size: Int(size), pixels: pointer)
        buffers.append(buffer)
        draw(buffer)
        return buffer
    }

    /// The pattern's XRGB value at (x, y) of a `width`x`height` buffer.
    static func expected(x: Int, y: Int, width: Int, height: Int) -> UInt32 {
        if x % 16 == 0 || y % 16 == 0 { return 0xFFFF00 }  // the grid: yellow
        let left = x < width / 2, top = y < height / 2
        let base: UInt32 = top ? (left ? 0xFF0000 : 0x00FF00) : (left ? 0x0000FF : 0xFFFFFF)
        return (base & 0xFFFFC0) | UInt32((x + 3 * y) & 0x3F)  // position bits in the low blue bits
    }

    /// Draws the pattern into `buffer` (again: QEMU zeroes VRAM on a mode change).
    func draw(_ buffer: Buffer) {
        for y in 0..<buffer.height {
            let row = (buffer.pixels + y * buffer.pitch).assumingMemoryBound(to: UInt32.self)
            for x in 0..<buffer.width {
                row[x] = TestDisplay.expected(x: x, y: y, width: buffer.width, height: buffer.height) | 0xFF00_0000
            }
        }
    }

    /// The connector's mode of `width`x`height`.
    func mode(width: Int, height: Int) -> drmModeModeInfo? {
        modes.first { Int($0.hdisplay) == width && Int($0.vdisplay) == height }
    }

    /// Shows `buffer` on the CRTC in the mode of its size, then draws the pattern again.
    func show(_ buffer: Buffer) throws {
        guard var mode = mode(width: buffer.width, height: buffer.height) else {
            throw TestDisplayError.failed("the connector has no \(buffer.width)x\(buffer.height) mode")
        }
        var connector = connectorID
        guard drmModeSetCrtc(fd, crtcID, buffer.fb, 0, 0, &connector, 1, &mode) == 0 else {
            throw TestDisplayError.failed("drmModeSetCrtc \(buffer.width)x\(buffer.height): \(String(cString: strerror(errno)))")
        }
        draw(buffer)
        shown = buffer
    }

    /// Shows a new pattern buffer of `width`x`height` in that mode.
    @discardableResult
    func showPattern(width: Int, height: Int) throws -> Buffer {
        let buffer = try makeBuffer(width: width, height: height)
        try show(buffer)
        return buffer
    }

    /// Sets a `size`x`size` cursor filled with opaque `colour` (XRGB) at (x, y).
    func setCursor(colour: UInt32, size: Int = 64, x: Int32, y: Int32) throws {
        var handle: UInt32 = 0, pitch: UInt32 = 0, bytes: UInt64 = 0, offset: UInt64 = 0
        guard drmModeCreateDumbBuffer(fd, UInt32(size), UInt32(size), 32, 0, &handle, &pitch, &bytes) == 0,
              drmModeMapDumbBuffer(fd, handle, &offset) == 0 else { throw TestDisplayError.failed("cursor buffer") }
        let pointer = mmap(nil, Int(bytes), PROT_READ | PROT_WRITE, MAP_SHARED, fd, off_t(offset))!
        for row in 0..<size {
            let line = (pointer + row * Int(pitch)).assumingMemoryBound(to: UInt32.self)
            for column in 0..<size { line[column] = colour | 0xFF00_0000 }
        }
        munmap(pointer, Int(bytes))
        guard drmModeSetCursor(fd, crtcID, handle, UInt32(size), UInt32(size)) == 0,
              drmModeMoveCursor(fd, crtcID, x, y) == 0 else {
            throw TestDisplayError.failed("drmModeSetCursor: \(String(cString: strerror(errno)))")
        }
    }

    /// Hides the cursor.
    func hideCursor() { drmModeSetCursor(fd, crtcID, 0, 0, 0) }
}

enum TestDisplayError: Error { case failed(String) }

/// Pixel checks of grabbed XRGB8888 frames.
enum ScreenCheck {
    /// The XRGB value (alpha/X byte dropped) at (x, y) of a 32-bit frame.
    static func pixel(_ frame: VideoFrame, x: Int, y: Int) -> UInt32 {
        let plane = frame.plane(0)
        return plane.bytes.load(fromByteOffset: y * plane.bytesPerRow + x * 4, as: UInt32.self) & 0xFF_FFFF
    }

    /// The first pixel where `frame` differs from the pattern of a `width`x`height` screen
    /// seen from (originX, originY), as a message; `nil` when every pixel matches.
    static func firstMismatch(_ frame: VideoFrame, screenWidth: Int, screenHeight: Int, originX: Int = 0, originY: Int = 0,
                              override: ((Int, Int) -> UInt32?)? = nil) -> String? {
        for y in 0..<frame.height {
            for x in 0..<frame.width {
                let (sx, sy) = (x + originX, y + originY)
                let want = override?(sx, sy) ?? TestDisplay.expected(x: sx, y: sy, width: screenWidth, height: screenHeight)
                let got = pixel(frame, x: x, y: y)
                if got != want { return String(format: "pixel (%d, %d) is %06x, expected %06x", x, y, got, want) }
            }
        }
        return nil
    }
}
