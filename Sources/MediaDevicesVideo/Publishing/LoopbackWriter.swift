import MediaDevicesCore
import CV4L2
import Glibc

/// The producer's side of one v4l2loopback device: the format set on its output, and one
/// `write()` per frame. Internal: ``VirtualCamera`` is the public type.
///
/// What v4l2loopback 0.12.7 (Debian 12's `v4l2loopback-dkms`) accepts from a producer, read in
/// its source and checked in the rig:
/// - The format is set on the output side first: `VIDIOC_S_FMT` with
///   `V4L2_BUF_TYPE_VIDEO_OUTPUT` (any of its ~40 fourccs, up to `max_width` x `max_height`,
///   8192x8192 by default). It lays the image out tightly (planar formats: `bytesperline` =
///   width, the planes one after another) and allocates its ring of buffers
///   (`max_buffers`, 2 by default) there. Writing before that fails with `EINVAL`.
/// - Frames then go in by `write()` (each call is one frame, copied into the next buffer of the
///   ring, timestamped and given to every reader; a shorter write is a shorter frame) or by mmap
///   streaming on the output queue (`VIDIOC_REQBUFS`, `VIDIOC_QBUF`, `VIDIOC_STREAMON`). Either
///   costs one copy of the frame (ours into the driver's `vmalloc`ed ring). We write: no buffer
///   bookkeeping, and no `V4L2_BUF_TYPE_VIDEO_OUTPUT` `VIDIOC_STREAMON`, which would mark our
///   file a "writer" whose close makes the device announce `V4L2_CAP_VIDEO_OUTPUT` again. Not
///   `writev`: the driver has no `write_iter`, so the kernel would call `write` once per
///   segment, and each plane would become a frame of its own.
/// - The first write (or output `STREAMON`) makes the device "ready for capture": from then on
///   `VIDIOC_QUERYCAP` reports `V4L2_CAP_VIDEO_CAPTURE` (with `exclusive_caps=1`, only that,
///   which Chromium needs to list it), and the format is fixed: a later `VIDIOC_S_FMT` on the
///   output returns the format in force instead (with `exclusive_caps=1`, `EINVAL`: the output
///   is no longer announced). Its control `keep_format` (set here) keeps it so after the last
///   file closes; without it the ring is freed and the node reports Video Output only (once a
///   file that streamed the output has closed). A reader's `VIDIOC_STREAMON` fails with `EIO`
///   until then.
/// - A producer hears nothing of its readers: no event when one opens, streams or closes, and
///   the open count is not in sysfs (only `format`, `buffers`, `max_openers`). ``VirtualCamera``
///   finds them in `/proc` (``NodeOpeners``).
///
/// A different format on a device a producer already made ready: with `exclusive_caps=1` the
/// device then announces capture only, so `VIDIOC_S_FMT` on its output is `EINVAL` (the kernel
/// checks the type against the caps of the last `VIDIOC_QUERYCAP`). `keep_format` is cleared,
/// the output streamed on and off (a file that streamed the output announces it again when it
/// closes: a producer that only wrote left `ready_for_output` cleared) and our file closed, which
/// frees the ring when nobody else has the node open; then the format is set again. With
/// readers holding it, the device keeps its format and `init` throws `.busy`.
final class LoopbackWriter: Sendable {
    /// The device's path, as given.
    let path: String
    /// The format frames are written in, as the driver laid it out.
    let format: VideoFormat
    private let file: DeviceFile
    /// Per plane of `format`: the bytes of one row and the number of rows (tightly packed).
    private let rowBytes: [Int]
    private let rowCounts: [Int]
    /// The bytes of one frame: what each `write()` hands over.
    let frameBytes: Int
    /// Where a frame whose planes are not one tight block is gathered before its `write()`.
    private let staging: StagingMemory

    /// The driver name v4l2loopback reports in `VIDIOC_QUERYCAP`.
    static let driverName = "v4l2 loopback"
    /// The name of v4l2loopback's control that keeps the device ready for capture with no producer.
    static let keepFormatControl = "keep_format"

    /// Opens the loopback device at `path` and sets `pixelFormat` at `size` on its output, with
    /// `frameRate` as the rate its readers are told (`VIDIOC_S_PARM`).
    /// - Throws: ``/MediaDevicesCore/MediaDevicesError/Code/notFound`` (no node; the remedy says
    ///   whether the module is loaded), ``/MediaDevicesCore/MediaDevicesError/Code/permissionDenied``,
    ///   ``/MediaDevicesCore/MediaDevicesError/Code/busy`` (`max_openers` reached, or readers hold
    ///   another format), ``/MediaDevicesCore/MediaDevicesError/Code/invalidValue`` (a node of
    ///   another driver), ``/MediaDevicesCore/MediaDevicesError/Code/unsupportedFormat``.
    init(path: String, pixelFormat: PixelFormat, size: Size, frameRate: FrameRate) throws(MediaDevicesError) {
        self.path = path
        var file = try LoopbackWriter.open(path)
        let granted: VideoFormat
        if let first = try LoopbackWriter.setFormatUnlessFixed(file, pixelFormat, size),
           first.pixelFormat == pixelFormat, first.size == size {
            granted = first
        } else if case let readers = LoopbackWriter.otherOpeners(path), !readers.isEmpty {
            // Fixed by an earlier producer, and held by other processes: it keeps its format.
            let fixed = LoopbackWriter.currentFormat(file, cv4l2_BUF_TYPE_VIDEO_CAPTURE)
            file.close()
            throw LoopbackWriter.formatKept(fixed, path: path, holders: readers)
        } else {
            // Fixed by an earlier producer (keep_format): free the ring if nobody else holds it.
            // A producer that only wrote left the device announcing no output (`write()` clears
            // `ready_for_output`, and only a file that streamed the output sets it again when it
            // closes); the device's caps, which the kernel checks `VIDIOC_S_FMT` against, are what
            // the last `VIDIOC_QUERYCAP` made them. So this file streams the output on and off
            // (no buffers needed), and its close announces output again; the next open's
            // `VIDIOC_QUERYCAP` makes the caps say so.
            LoopbackWriter.setKeepFormat(file, false)
            var type = Int32(cv4l2_BUF_TYPE_VIDEO_OUTPUT)
            _ = file.ioctlErrno(cv4l2_VIDIOC_STREAMON, &type)
            _ = file.ioctlErrno(cv4l2_VIDIOC_STREAMOFF, &type)
            file.close()
            file = try LoopbackWriter.open(path)
            let second = Result { () throws(MediaDevicesError) -> VideoFormat in try LoopbackWriter.setFormat(file, pixelFormat, size) }
            let inForce: VideoFormat
            switch second {
            case .success(let format): inForce = format
            case .failure(let error):
                // Refused: a format still in force (readers hold the ring) is `.busy` below;
                // none is the driver's own refusal (a format it does not take).
                guard let fixed = LoopbackWriter.currentFormat(file, cv4l2_BUF_TYPE_VIDEO_OUTPUT) else { file.close(); throw error }
                inForce = fixed
            }
            guard inForce.pixelFormat == pixelFormat, inForce.size == size else {
                LoopbackWriter.setKeepFormat(file, true)
                file.close()
                throw LoopbackWriter.formatKept(inForce, path: path, holders: [])
            }
            granted = inForce
        }
        LoopbackWriter.setKeepFormat(file, true)
        var parm = v4l2_streamparm()
        parm.type = cv4l2_BUF_TYPE_VIDEO_OUTPUT
        parm.parm.output.timeperframe = V4L2Device.fract(frameRate.frameInterval)
        _ = file.ioctlErrno(cv4l2_VIDIOC_S_PARM, &parm)  // only what readers are told; 0.12.7 takes any
        self.file = file
        format = granted
        let layout = pixelFormat.layout
        let planes = layout?.planes ?? [PlaneDescription(bytesPerSample: 1)]
        rowBytes = planes.map { $0.minimumBytesPerRow(width: size.width) }
        rowCounts = planes.map { $0.rows(height: size.height) }
        frameBytes = zip(rowBytes, rowCounts).reduce(0) { $0 + $1.0 * $1.1 }
        staging = StagingMemory(byteCount: frameBytes)
        // Not capture-ready yet (with exclusive_caps=1 it announces output only; with 0, both
        // always): one black frame makes it a camera now, before the source's first frame.
        let caps = LoopbackWriter.capabilities(file)
        if caps & UInt32(V4L2_CAP_VIDEO_CAPTURE) == 0 || caps & UInt32(V4L2_CAP_VIDEO_OUTPUT) != 0 {
            LoopbackWriter.fillBlack(staging.memory, format: granted, rowBytes: rowBytes, rowCounts: rowCounts)
            let failure = writeAll(UnsafeRawPointer(staging.memory), frameBytes)
            guard failure == 0 else { throw MediaDevicesError.fromErrno(failure, device: path, operation: "write") }
        }
    }

    /// The node's capabilities now (`VIDIOC_QUERYCAP`'s `device_caps`; 0 when it fails).
    private static func capabilities(_ file: DeviceFile) -> UInt32 {
        var capability = v4l2_capability()
        guard file.ioctlErrno(cv4l2_VIDIOC_QUERYCAP, &capability) == 0 else { return 0 }
        return capability.capabilities & UInt32(V4L2_CAP_DEVICE_CAPS) != 0 ? capability.device_caps : capability.capabilities
    }

    /// A black picture in `format` (YCbCr: limited-range black, neutral chroma; others: zeros).
    private static func fillBlack(_ memory: UnsafeMutableRawPointer, format: VideoFormat, rowBytes: [Int], rowCounts: [Int]) {
        let total = zip(rowBytes, rowCounts).reduce(0) { $0 + $1.0 * $1.1 }
        switch format.pixelFormat {
        case .yu12, .yv12, .nv12, .nv21, .grey:
            let luma = rowBytes[0] * rowCounts[0]
            memory.initializeMemory(as: UInt8.self, repeating: 16, count: luma)
            (memory + luma).initializeMemory(as: UInt8.self, repeating: 128, count: total - luma)
        case .yuyv, .yvyu:
            let pairs = memory.bindMemory(to: UInt16.self, capacity: total / 2)
            for index in 0..<(total / 2) { pairs[index] = UInt16(16) | UInt16(128) << 8 }
        case .uyvy, .vyuy:
            let pairs = memory.bindMemory(to: UInt16.self, capacity: total / 2)
            for index in 0..<(total / 2) { pairs[index] = UInt16(128) | UInt16(16) << 8 }
        default:
            memory.initializeMemory(as: UInt8.self, repeating: 0, count: total)
        }
    }

    /// A writer of `format` frames to `file` as it is, with no V4L2 set-up (for the tests: a
    /// regular file or `/dev/null` stands in for the device).
    init(file: DeviceFile, format: VideoFormat) {
        path = file.path
        self.file = file
        self.format = format
        let planes = format.pixelFormat.layout?.planes ?? [PlaneDescription(bytesPerSample: 1)]
        rowBytes = planes.map { $0.minimumBytesPerRow(width: format.width) }
        rowCounts = planes.map { $0.rows(height: format.height) }
        frameBytes = zip(rowBytes, rowCounts).reduce(0) { $0 + $1.0 * $1.1 }
        staging = StagingMemory(byteCount: frameBytes)
    }

    deinit { file.close() }

    /// Closes the device; the format stays (`keep_format`), so readers still see a camera.
    func close() { file.close() }

    /// Writes `frame` as one frame of the device. Returns 0, or the errno of a frame that could
    /// not be written (`EINVAL`: its format is not the device's; anything else: `write()`'s).
    /// Allocates nothing.
    func write(_ frame: VideoFrame) -> Int32 {
        guard frame.format.pixelFormat == format.pixelFormat, frame.width == format.width, frame.height == format.height,
              frame.planeCount >= rowBytes.count else { return EINVAL }
        // One tight block (the converter's output and the test pattern's are): write it as it is.
        var contiguous = true
        let start = frame.plane(0).bytes.baseAddress
        var expected = start
        var index = 0
        while index < rowBytes.count {
            let plane = frame.plane(index)
            if plane.bytes.baseAddress != expected || plane.bytesPerRow != rowBytes[index]
                || plane.bytes.count < rowBytes[index] * rowCounts[index] {
                contiguous = false
                break
            }
            expected = expected.map { $0 + rowBytes[index] * rowCounts[index] }
            index += 1
        }
        if contiguous, let start { return writeAll(start, frameBytes) }
        // Otherwise gather the rows.
        let target = staging.memory
        var offset = 0
        index = 0
        while index < rowBytes.count {
            let plane = frame.plane(index)
            let width = rowBytes[index], stride = plane.bytesPerRow
            guard let base = plane.bytes.baseAddress, stride >= width,
                  plane.bytes.count >= stride * (rowCounts[index] - 1) + width else { return EINVAL }
            var row = 0
            while row < rowCounts[index] {
                (target + offset).copyMemory(from: base + row * stride, byteCount: width)
                offset += width
                row += 1
            }
            index += 1
        }
        return writeAll(UnsafeRawPointer(target), frameBytes)
    }

    /// One `write()` of `count` bytes (v4l2loopback takes a frame per call, whole), retrying `EINTR`.
    private func writeAll(_ bytes: UnsafeRawPointer, _ count: Int) -> Int32 {
        while true {
            let fd = file.rawValue
            if fd < 0 { return EBADF }
            let written = Glibc.write(fd, bytes, count)
            if written >= 0 { return 0 }
            if Glibc.errno != EINTR { return Glibc.errno }
        }
    }

    // MARK: Opening

    /// Opens `path` and checks that it is a v4l2loopback node.
    private static func open(_ path: String) throws(MediaDevicesError) -> DeviceFile {
        let file: DeviceFile
        do {
            file = try DeviceFile(path: path)
        } catch {
            throw openFailure(error, path: path)
        }
        var capability = v4l2_capability()
        let failure = file.ioctlErrno(cv4l2_VIDIOC_QUERYCAP, &capability)
        let driver = failure == 0 ? cString(capability.driver) : ""
        guard driver == driverName else {
            file.close()
            let what = failure == 0 ? "a \(driver) device (\(cString(capability.card)))" : "not a V4L2 device (VIDIOC_QUERYCAP: \(MediaDevicesError.errnoName(failure)))"
            throw MediaDevicesError(.invalidValue, device: path, operation: "open as a v4l2loopback output",
                                    detail: "\(path) is \(what), not a v4l2loopback device",
                                    remedy: loopbackRemedy(path))
        }
        return file
    }

    /// The error for a loopback node that could not be opened, with what to do.
    static func openFailure(_ error: MediaDevicesError, path: String) -> MediaDevicesError {
        switch error.code {
        case .notFound:
            return MediaDevicesError(.notFound, device: path, operation: "open", errno: error.errno,
                                     detail: isModuleLoaded
                                         ? "No such device node; the v4l2loopback module is loaded, but with other devices"
                                         : "No such device node, and the v4l2loopback module is not loaded",
                                     remedy: loopbackRemedy(path))
        case .busy:
            return MediaDevicesError(.busy, device: path, operation: "open", errno: error.errno,
                                     detail: "The loopback device is open as many times as its max_openers allows",
                                     remedy: "Close a reader (`fuser \(path)` names them) or raise the limit (`echo 20 > /sys/class/video4linux/\(lastComponent(path))/max_openers`, or load v4l2loopback with max_openers=20)")
        case .permissionDenied:
            return MediaDevicesError(.permissionDenied, device: path, operation: "open", errno: error.errno,
                                     detail: "This user may not open \(path) for writing",
                                     remedy: "Add the user to the `video` group (`usermod -aG video $USER`, then log in again), or install the rules in udev/")
        default:
            return error
        }
    }

    /// Whether the v4l2loopback module is loaded.
    static var isModuleLoaded: Bool { access("/sys/module/v4l2loopback", F_OK) == 0 }

    /// How to get a loopback device at `path`.
    static func loopbackRemedy(_ path: String) -> String {
        let name = lastComponent(path)
        let number = name.hasPrefix("video") ? String(name.dropFirst(5)) : ""
        let option = Int(number).map { "video_nr=\($0) " } ?? ""
        return "Name a v4l2loopback node, or make one: `sudo modprobe v4l2loopback \(option)exclusive_caps=1 card_label=\"Virtual Camera\"` (Debian and Ubuntu: `apt install v4l2loopback-dkms`; with the module loaded already, `sudo modprobe -r v4l2loopback` first); `v4l2-ctl --list-devices` lists the nodes there are"
    }

    private static func lastComponent(_ path: String) -> String {
        path.split(separator: "/").last.map(String.init) ?? path
    }

    /// `VIDIOC_S_FMT` on the output; the format granted.
    private static func setFormat(_ file: DeviceFile, _ pixelFormat: PixelFormat, _ size: Size) throws(MediaDevicesError) -> VideoFormat {
        var format = v4l2_format()
        format.type = cv4l2_BUF_TYPE_VIDEO_OUTPUT
        format.fmt.pix.width = UInt32(size.width)
        format.fmt.pix.height = UInt32(size.height)
        format.fmt.pix.pixelformat = pixelFormat.v4l2Code
        format.fmt.pix.field = V4L2_FIELD_NONE.rawValue
        try file.ioctl(cv4l2_VIDIOC_S_FMT, &format, "VIDIOC_S_FMT")
        let pix = format.fmt.pix
        let granted = PixelFormat(v4l2: FourCC(rawValue: pix.pixelformat))
        return VideoFormat(pixelFormat: granted, width: Int(pix.width), height: Int(pix.height))
    }

    /// ``setFormat(_:_:_:)``, or nil when the driver refuses a change of a format an earlier
    /// producer fixed: 0.12.7 mostly answers with the format in force, but a ready device whose
    /// ring was sized for a smaller frame answers `EINVAL` (640x360 in force, 640x480 asked), and
    /// one with buffers mapped `EBUSY`.
    private static func setFormatUnlessFixed(_ file: DeviceFile, _ pixelFormat: PixelFormat, _ size: Size) throws(MediaDevicesError) -> VideoFormat? {
        switch Result(catching: { () throws(MediaDevicesError) -> VideoFormat in try setFormat(file, pixelFormat, size) }) {
        case .success(let format): return format
        case .failure(let error) where error.errno == .invalidArgument || error.errno == .resourceBusy: return nil
        case .failure(let error): throw error
        }
    }

    /// The processes other than this one that hold `path` open.
    private static func otherOpeners(_ path: String) -> [NodeOpeners.Opener] {
        NodeOpeners().scan([NodeOpeners.canonical(path)])
    }

    /// `.busy`: the device keeps `fixed`, the format an earlier producer set, while `holders`
    /// (or other processes) have it open.
    private static func formatKept(_ fixed: VideoFormat?, path: String, holders: [NodeOpeners.Opener]) -> MediaDevicesError {
        let format = fixed.map { "the format \($0)" } ?? "the format"
        let held = holders.isEmpty ? "other processes have it open" : "\(holders.map { "\($0.command) (pid \($0.pid))" }.joined(separator: ", ")) \(holders.count == 1 ? "has" : "have") it open"
        let publish = fixed.map { "Publish \($0) (format: FormatRequest(pixelFormat: .\($0.pixelFormat), size: Size(width: \($0.width), height: \($0.height)))), or c" } ?? "C"
        return MediaDevicesError(.busy, device: path, operation: "VIDIOC_S_FMT", errno: EBUSY,
                                 detail: "The loopback device keeps \(format) an earlier producer set, while \(held) (v4l2loopback fixes the format until every file is closed)",
                                 remedy: "\(publish)lose the applications that read it (`fuser \(path)`) and start again")
    }

    /// The format in force on one side (`VIDIOC_G_FMT` of `type`: the output a producer set, or
    /// the capture side a ready device serves its readers); nil when the driver has none.
    private static func currentFormat(_ file: DeviceFile, _ type: UInt32) -> VideoFormat? {
        var format = v4l2_format()
        format.type = type
        guard file.ioctlErrno(cv4l2_VIDIOC_G_FMT, &format) == 0, format.fmt.pix.width > 0 else { return nil }
        let pix = format.fmt.pix
        return VideoFormat(pixelFormat: PixelFormat(v4l2: FourCC(rawValue: pix.pixelformat)), width: Int(pix.width), height: Int(pix.height))
    }

    /// Sets v4l2loopback's `keep_format` control, found by its name (the module's private
    /// control IDs are in no uapi header). Best effort: a module without it keeps going.
    private static func setKeepFormat(_ file: DeviceFile, _ keep: Bool) {
        var query = v4l2_queryctrl()
        query.id = cv4l2_CTRL_FLAG_NEXT_CTRL
        while file.ioctlErrno(cv4l2_VIDIOC_QUERYCTRL, &query) == 0 {
            if cString(query.name) == keepFormatControl {
                var control = v4l2_control(id: query.id, value: keep ? 1 : 0)
                _ = file.ioctlErrno(cv4l2_VIDIOC_S_CTRL, &control)
                return
            }
            query.id |= cv4l2_CTRL_FLAG_NEXT_CTRL
        }
    }
}

/// Memory for one frame, owned here and freed with it.
// @unchecked Sendable: the bytes are written only by the one thread that writes frames.
final class StagingMemory: @unchecked Sendable {
    let memory: UnsafeMutableRawPointer

    init(byteCount: Int) { memory = .allocate(byteCount: max(byteCount, 1), alignment: 64) }

    deinit { memory.deallocate() }
}
