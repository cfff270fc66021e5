import Foundation
import Glibc

/// The browser console (`Examples/Console`'s `media-console`) against `ustreamer` (PiKVM's MJPEG
/// streamer) serving one camera over HTTP as `multipart/x-mixed-replace` to 1 and to N clients
/// (issue 37).
///
/// Each server is started alone on the camera, `curl` clients read its stream (counted as it comes), and
/// after a warm-up (start-up, the first client's connection, the capture's first frames) the
/// server's CPU (every thread's scheduler run time) and each client's frames so far are read
/// twice, `seconds` apart. CPU per frame served is the server's CPU between the readings over
/// the frames the first client received between them: one captured frame, however many clients
/// it went to. A client that fell behind (fewer frames than the first) shows in `fewestFrames`.
/// The least over `repeats` runs is kept: noise only adds. The clients' own CPU is not counted.
struct MJPEGServerBenchmark {
    /// One server, one client count.
    struct Row: Encodable {
        var server: String
        var command: String
        var clients: Int
        /// The server's CPU per frame the first client received in the window (least of the runs).
        var cpuPerFrameNanoseconds: Double
        /// Each run's figure, in the order run.
        var cpuPerFrameOfEachRunNanoseconds: [Double]
        /// Frames a second the first client received in the window (the run with the least CPU).
        var framesPerSecond: Double
        /// Frames the client that received fewest got in the window, over the first's.
        var fewestFrames: Double
        /// Bytes per part the first client received (the JPEGs' size).
        var bytesPerFrame: Double
        /// CPU per frame over ustreamer's with the same clients.
        var overUstreamer: Double?
        /// Glass to client (the emulated camera making a frame → the first client holding its
        /// whole part), median and 95th percentile over the window's frames, in the run with the
        /// least CPU (with `frameLog` only).
        var latencyMedianMilliseconds: Double?
        var latencyP95Milliseconds: Double?
        /// The median latency over ustreamer's with the same clients.
        var latencyOverUstreamer: Double?
    }

    var device: String
    var width: Int
    var height: Int
    var fps: Int
    /// `MJPG` (the camera's own JPEGs passed through) or `YUYV` (encoded by the server).
    var format: String
    var clientCounts: [Int]
    var warmUp: Double
    var seconds: Double
    var repeats: Int
    /// The console's executable.
    var console: String
    /// The emulated USB camera's frame log (`MEDIADEVICES_USB_FRAME_LOG`: "counter monotonic-ns"
    /// per frame made): with it, and an MJPEG stream, each row also gets glass-to-client latency.
    var frameLog: String?
    var workDirectory: String

    /// The servers: name, arguments for a port, and the stream's URL path.
    var servers: [(name: String, arguments: (Int) -> [String], path: String)] {
        let passthrough = format == "MJPG"
        let camera = URL(fileURLWithPath: device).lastPathComponent
        return [
            ("ustreamer", { port in
                ["ustreamer", "--device", device, "--format", passthrough ? "MJPEG" : "YUYV", "--resolution", "\(width)x\(height)",
                 "--desired-fps", "\(fps)", "--encoder", passthrough ? "HW" : "CPU", "--host", "127.0.0.1", "--port", "\(port)"]
            }, "/stream"),
            ("media-console", { port in [console, "--port", "\(port)"] },
             "/api/cameras/\(camera)/stream.mjpg?format=\(format)&width=\(width)&height=\(height)&fps=\(fps)"),
        ]
    }

    func run(progress: (String) -> Void) throws -> [Row] {
        try FileManager.default.createDirectory(atPath: workDirectory, withIntermediateDirectories: true)
        var rows: [Row] = []
        for server in servers {
            for clients in clientCounts {
                var runs: [Measurement] = []
                for repeat_ in 0..<repeats {
                    progress("\(server.name), \(clients) client\(clients == 1 ? "" : "s"), run \(repeat_ + 1)/\(repeats)")
                    runs.append(try measure(server, clients: clients))
                }
                let least = runs.min { $0.cpu < $1.cpu }!
                rows.append(Row(server: server.name, command: server.arguments(0).joined(separator: " ").replacingOccurrences(of: "--port 0", with: "--port PORT"),
                                clients: clients, cpuPerFrameNanoseconds: least.cpu, cpuPerFrameOfEachRunNanoseconds: runs.map(\.cpu),
                                framesPerSecond: least.fps, fewestFrames: least.fewest, bytesPerFrame: least.bytes,
                                latencyMedianMilliseconds: least.latency?.median, latencyP95Milliseconds: least.latency?.p95))
            }
        }
        for index in rows.indices {
            if let theirs = rows.first(where: { $0.server == "ustreamer" && $0.clients == rows[index].clients }), rows[index].server != "ustreamer" {
                rows[index].overUstreamer = rows[index].cpuPerFrameNanoseconds / theirs.cpuPerFrameNanoseconds
                if let ours = rows[index].latencyMedianMilliseconds, let theirs = theirs.latencyMedianMilliseconds {
                    rows[index].latencyOverUstreamer = ours / theirs
                }
            }
        }
        return rows
    }

    /// One run's figures.
    struct Measurement {
        var cpu: Double
        var fps: Double
        var fewest: Double
        var bytes: Double
        var latency: (median: Double, p95: Double)?
    }

    /// One run: the server up, `clients` readers, the two readings.
    private func measure(_ server: (name: String, arguments: (Int) -> [String], path: String), clients: Int) throws -> Measurement {
        let port = try Self.freePort()
        let log = "\(workDirectory)/\(server.name).log"
        let process = try Self.spawn(server.arguments(port), output: log)
        defer { Self.stop(process) }
        try waitUntilServing(port: port, process: process, log: log, name: server.name)
        let limit = Int(warmUp + seconds + 10)
        let readers = try (0..<clients).map { _ in
            try StreamReader(["/usr/bin/curl", "-s", "-N", "-m", "\(limit)", "http://127.0.0.1:\(port)\(server.path)"],
                             framesFromCamera: frameLog != nil && format == "MJPG")
        }
        defer { readers.forEach { $0.stop() } }
        Thread.sleep(forTimeInterval: warmUp)
        let pid = process.processIdentifier
        guard process.isRunning, let cpuBefore = ProcessCPU.cpuNanoseconds(of: pid) else {
            throw BenchmarkError("\(server.name) ended during the warm-up: \(ProcessCPU.tail(of: log))")
        }
        let framesBefore = readers.map(\.counts)
        let start = BenchmarkClock.nanoseconds()
        Thread.sleep(forTimeInterval: seconds)
        guard process.isRunning, let cpuAfter = ProcessCPU.cpuNanoseconds(of: pid) else {
            throw BenchmarkError("\(server.name) ended while measured: \(ProcessCPU.tail(of: log))")
        }
        let wall = Double(BenchmarkClock.nanoseconds() - start) / 1e9
        let framesAfter = readers.map(\.counts)
        let received = zip(framesAfter, framesBefore).map { Double($0.parts - $1.parts) }
        guard received[0] > 0 else {
            throw BenchmarkError("\(server.name): the client received no frame in \(seconds) s (\(framesAfter[0].parts) in all): \(ProcessCPU.tail(of: log))")
        }
        let bytes = Double(framesAfter[0].bytes - framesBefore[0].bytes) / received[0]
        let windowEnd = BenchmarkClock.nanoseconds()
        var latency: (median: Double, p95: Double)?
        if let frameLog, format == "MJPG" {
            let made = try Self.framesMade(frameLog)
            let delays = readers[0].cameraFrames.filter { $0.nanoseconds >= start && $0.nanoseconds <= windowEnd }
                .compactMap { arrival in made[arrival.counter].map { Double(arrival.nanoseconds) - Double($0) } }.sorted()
            guard !delays.isEmpty else {
                throw BenchmarkError("\(server.name): no part in the window carried a frame counter found in \(frameLog) (is MEDIADEVICES_USB_FRAME_LOG set for the emulator?)")
            }
            latency = (delays[delays.count / 2] / 1e6, delays[min(delays.count - 1, delays.count * 95 / 100)] / 1e6)
        }
        return Measurement(cpu: (cpuAfter - cpuBefore) / received[0], fps: received[0] / wall, fewest: received.min()! / received[0],
                           bytes: bytes, latency: latency)
    }

    /// The emulated camera's frame log: when each frame counter was made (monotonic ns).
    static func framesMade(_ path: String) throws -> [UInt32: UInt64] {
        guard let text = try? String(contentsOfFile: path, encoding: .utf8) else {
            throw BenchmarkError("cannot read the camera's frame log \(path)")
        }
        var made: [UInt32: UInt64] = [:]
        for line in text.split(separator: "\n") {
            let fields = line.split(separator: " ")
            if fields.count == 2, let counter = UInt32(fields[0]), let nanoseconds = UInt64(fields[1]) { made[counter] = nanoseconds }
        }
        return made
    }

    private func waitUntilServing(port: Int, process: Process, log: String, name: String) throws {
        // A Swift binary's first start over the rig's 9p takes 10–20 s.
        for _ in 0..<600 {
            guard process.isRunning else { throw BenchmarkError("\(name) did not start: \(ProcessCPU.tail(of: log))") }
            if Self.accepts(port: port) { return }
            usleep(100_000)
        }
        throw BenchmarkError("\(name) did not listen on port \(port) within 60 s: \(ProcessCPU.tail(of: log))")
    }

    static func freePort() throws -> Int {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw BenchmarkError("socket: \(String(cString: strerror(errno)))") }
        defer { close(socket) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: 0, sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")),
                                  sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(socket, $0, length) == 0 && getsockname(socket, $0, &length) == 0 }
        }
        guard bound else { throw BenchmarkError("no free port: \(String(cString: strerror(errno)))") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    static func accepts(port: Int) -> Bool {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { return false }
        defer { close(socket) }
        var address = sockaddr_in(sin_family: sa_family_t(AF_INET), sin_port: UInt16(port).bigEndian,
                                  sin_addr: in_addr(s_addr: inet_addr("127.0.0.1")), sin_zero: (0, 0, 0, 0, 0, 0, 0, 0))
        return withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }

    static func spawn(_ arguments: [String], output: String) throws -> Process {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0].hasPrefix("/") ? arguments[0] : "/usr/bin/env")
        process.arguments = arguments[0].hasPrefix("/") ? Array(arguments.dropFirst()) : arguments
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = FileHandle(forWritingAtPath: output)
        process.standardOutput = handle
        process.standardError = handle
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchmarkError("cannot start \(arguments[0]): \(error)") }
        return process
    }

    static func stop(_ process: Process) {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<50 where process.isRunning { usleep(100_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        process.waitUntilExit()
    }

    var title: String {
        "Serving \(device) \(format == "MJPG" ? "MJPEG \(width)x\(height) passed through" : "YUYV \(width)x\(height) encoded to JPEG") at \(fps) fps"
            + " over HTTP (multipart/x-mixed-replace) to curl clients: the server's CPU (all threads, schedstat) over \(seconds) s after a"
            + " \(warmUp) s warm-up, per frame the first client received; least of \(repeats). Goal: media-console ≤ 1.0× ustreamer"
            + (frameLog != nil && format == "MJPG" ? "\nLatency: the emulated camera making a frame (its counter, in its COM segment) → the first client holding the whole part,"
               + " median and p95 over the window's frames, in the run with the least CPU; goal: media-console's median ≤ ustreamer's" : "")
    }

    func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("server", "clients", "CPU/frame", "each run", "fps", "fewest ÷ first", "bytes/frame", "÷ ustreamer",
                                   "latency p50 / p95", "latency ÷ ustreamer", "goals (≤1.0× ustreamer)")
        for row in rows {
            var marks = row.overUstreamer.map { ["CPU " + goalMark($0, 1.0)] } ?? []
            if let ratio = row.latencyOverUstreamer { marks.append("latency " + goalMark(ratio, 1.0)) }
            table.add(row.server, "\(row.clients)", formatDuration(row.cpuPerFrameNanoseconds),
                      row.cpuPerFrameOfEachRunNanoseconds.map(formatDuration).joined(separator: " / "),
                      String(format: "%.1f", row.framesPerSecond), String(format: "%.2f", row.fewestFrames),
                      String(format: "%.0f", row.bytesPerFrame), formatRatio(row.overUstreamer ?? .nan),
                      row.latencyMedianMilliseconds.map { String(format: "%.1f / %.1f ms", $0, row.latencyP95Milliseconds ?? .nan) } ?? "–",
                      formatRatio(row.latencyOverUstreamer ?? .nan), marks.joined(separator: ", "))
        }
        return table.text
    }
}

/// One client: `curl` reading a multipart stream into a pipe, and a thread of ours parsing it
/// as it comes (each part's headers, then its `Content-Length` bytes; both ustreamer and the
/// console send one) and counting its parts and bytes, keeping only the part being read (a
/// 1080p stream is ~200 MB in 16 s: stored and searched afterwards, it took minutes in the rig).
/// With `framesFromCamera`, each part's JPEG is searched for the emulated USB camera's frame
/// counter (its COM segment, "MediaDevices frame NNNNNNNNNN") and the moment the part was whole
/// is kept with it: the client's end of a glass-to-client latency.
// @unchecked Sendable: the counts and arrivals are touched only under `lock`; `process` and `thread` are set before the reader starts.
final class StreamReader: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var parts = 0
    private var bytes = 0
    private var arrivals: [(counter: UInt32, nanoseconds: UInt64)] = []
    private var thread: Thread?

    init(_ arguments: [String], framesFromCamera: Bool = false) throws {
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchmarkError("cannot start \(arguments[0]): \(error)") }
        let thread = Thread { [self] in
            var input = BufferedInput(descriptor: pipe.fileHandleForReading.fileDescriptor)
            var body = [UInt8]()
            while let length = input.nextPartLength() {
                guard input.read(length, into: &body) else { break }
                let now = BenchmarkClock.nanoseconds()
                let counter = framesFromCamera ? Self.cameraCounter(in: body) : nil
                lock.lock()
                parts += 1
                bytes += length
                if let counter { arrivals.append((counter, now)) }
                lock.unlock()
            }
        }
        self.thread = thread
        thread.start()
    }

    /// Parts and bytes received so far.
    var counts: (parts: Int, bytes: Int) {
        lock.lock(); defer { lock.unlock() }
        return (parts, bytes)
    }

    /// The camera's frame counters seen so far, each with the moment its part was whole.
    var cameraFrames: [(counter: UInt32, nanoseconds: UInt64)] {
        lock.lock(); defer { lock.unlock() }
        return arrivals
    }

    func stop() { MJPEGServerBenchmark.stop(process) }

    /// The emulated camera's counter in a JPEG's header (its COM segment), if there.
    static func cameraCounter(in jpeg: [UInt8]) -> UInt32? {
        let prefix = Array("MediaDevices frame ".utf8), digits = 10
        let searched = min(jpeg.count, 4096)
        guard searched >= prefix.count + digits else { return nil }
        for start in 0...(searched - prefix.count - digits) where jpeg[start] == prefix[0] {
            guard jpeg[start..<(start + prefix.count)].elementsEqual(prefix) else { continue }
            let text = jpeg[(start + prefix.count)..<(start + prefix.count + digits)]
            return UInt32(String(decoding: text, as: UTF8.self))
        }
        return nil
    }
}

/// A pipe read in 64 KB blocks, handing out lines and runs of bytes.
struct BufferedInput {
    let descriptor: Int32
    private var buffer = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0, end = 0

    init(descriptor: Int32) { self.descriptor = descriptor }

    /// Refills an empty buffer; false at the end of the stream.
    private mutating func fill() -> Bool {
        start = 0
        end = 0
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress!, $0.count) }
            if count > 0 { end = count; return true }
            if count < 0 && errno == EINTR { continue }
            return false
        }
    }

    /// The next line, without its CR LF; nil at the end of the stream.
    mutating func line() -> String? {
        var line = [UInt8]()
        while true {
            if start == end, !fill() { return line.isEmpty ? nil : String(decoding: line, as: UTF8.self) }
            let byte = buffer[start]
            start += 1
            if byte == UInt8(ascii: "\n") {
                if line.last == UInt8(ascii: "\r") { line.removeLast() }
                return String(decoding: line, as: UTF8.self)
            }
            line.append(byte)
        }
    }

    /// Skips to the next part's headers and reads them: its `Content-Length`, or nil at the end
    /// of the stream (or a part without one).
    mutating func nextPartLength() -> Int? {
        var length: Int?
        var inHeaders = false
        while let line = line() {
            if !inHeaders {
                if line.hasPrefix("--") { inHeaders = true }
                continue
            }
            if line.isEmpty { return length }
            let parts = line.split(separator: ":", maxSplits: 1)
            if parts.count == 2, parts[0].lowercased() == "content-length" {
                length = Int(parts[1].trimmingCharacters(in: .whitespaces))
            }
        }
        return nil
    }

    /// Reads exactly `count` bytes into `body` (resized); false if the stream ended first.
    mutating func read(_ count: Int, into body: inout [UInt8]) -> Bool {
        if body.count != count { body = [UInt8](repeating: 0, count: count) }
        var copied = 0
        while copied < count {
            if start == end, !fill() { return false }
            let take = min(count - copied, end - start)
            body.withUnsafeMutableBytes { target in
                buffer.withUnsafeBytes { source in
                    (target.baseAddress! + copied).copyMemory(from: source.baseAddress! + start, byteCount: take)
                }
            }
            copied += take
            start += take
        }
        return true
    }
}
