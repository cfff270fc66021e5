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
                var runs: [(cpu: Double, fps: Double, fewest: Double, bytes: Double)] = []
                for repeat_ in 0..<repeats {
                    progress("\(server.name), \(clients) client\(clients == 1 ? "" : "s"), run \(repeat_ + 1)/\(repeats)")
                    runs.append(try measure(server, clients: clients))
                }
                let least = runs.min { $0.cpu < $1.cpu }!
                rows.append(Row(server: server.name, command: server.arguments(0).joined(separator: " ").replacingOccurrences(of: "--port 0", with: "--port PORT"),
                                clients: clients, cpuPerFrameNanoseconds: least.cpu, cpuPerFrameOfEachRunNanoseconds: runs.map(\.cpu),
                                framesPerSecond: least.fps, fewestFrames: least.fewest, bytesPerFrame: least.bytes))
            }
        }
        for index in rows.indices {
            if let theirs = rows.first(where: { $0.server == "ustreamer" && $0.clients == rows[index].clients }), rows[index].server != "ustreamer" {
                rows[index].overUstreamer = rows[index].cpuPerFrameNanoseconds / theirs.cpuPerFrameNanoseconds
            }
        }
        return rows
    }

    /// One run: the server up, `clients` readers, the two readings.
    private func measure(_ server: (name: String, arguments: (Int) -> [String], path: String), clients: Int) throws
        -> (cpu: Double, fps: Double, fewest: Double, bytes: Double) {
        let port = try Self.freePort()
        let log = "\(workDirectory)/\(server.name).log"
        let process = try Self.spawn(server.arguments(port), output: log)
        defer { Self.stop(process) }
        try waitUntilServing(port: port, process: process, log: log, name: server.name)
        let limit = Int(warmUp + seconds + 10)
        let readers = try (0..<clients).map { _ in
            try StreamReader(["/usr/bin/curl", "-s", "-N", "-m", "\(limit)", "http://127.0.0.1:\(port)\(server.path)"])
        }
        defer { readers.forEach { $0.stop() } }
        Thread.sleep(forTimeInterval: warmUp)
        let pid = process.processIdentifier
        guard process.isRunning, let cpuBefore = ProcessCPU.cpuNanoseconds(of: pid) else {
            throw BenchmarkError("\(server.name) ended during the warm-up: \(Self.tail(log))")
        }
        let framesBefore = readers.map(\.counts)
        let start = BenchmarkClock.nanoseconds()
        Thread.sleep(forTimeInterval: seconds)
        guard process.isRunning, let cpuAfter = ProcessCPU.cpuNanoseconds(of: pid) else {
            throw BenchmarkError("\(server.name) ended while measured: \(Self.tail(log))")
        }
        let wall = Double(BenchmarkClock.nanoseconds() - start) / 1e9
        let framesAfter = readers.map(\.counts)
        let received = zip(framesAfter, framesBefore).map { Double($0.parts - $1.parts) }
        guard received[0] > 0 else {
            throw BenchmarkError("\(server.name): the client received no frame in \(seconds) s (\(framesAfter[0].parts) in all): \(Self.tail(log))")
        }
        let bytes = Double(framesAfter[0].bytes - framesBefore[0].bytes) / received[0]
        return ((cpuAfter - cpuBefore) / received[0], received[0] / wall, received.min()! / received[0], bytes)
    }

    private func waitUntilServing(port: Int, process: Process, log: String, name: String) throws {
        // A Swift binary's first start over the rig's 9p takes 10–20 s.
        for _ in 0..<600 {
            guard process.isRunning else { throw BenchmarkError("\(name) did not start: \(Self.tail(log))") }
            if Self.accepts(port: port) { return }
            usleep(100_000)
        }
        throw BenchmarkError("\(name) did not listen on port \(port) within 60 s: \(Self.tail(log))")
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

    static func tail(_ log: String) -> String {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").suffix(5).joined(separator: "\n")
    }

    var title: String {
        "Serving \(device) \(format == "MJPG" ? "MJPEG \(width)x\(height) passed through" : "YUYV \(width)x\(height) encoded to JPEG") at \(fps) fps"
            + " over HTTP (multipart/x-mixed-replace) to curl clients: the server's CPU (all threads, schedstat) over \(seconds) s after a"
            + " \(warmUp) s warm-up, per frame the first client received; least of \(repeats). Goal: media-console ≤ 1.0× ustreamer"
    }

    func table(_ rows: [Row]) -> String {
        var table = BenchmarkTable("server", "clients", "CPU/frame", "each run", "fps", "fewest ÷ first", "bytes/frame", "÷ ustreamer", "goal (≤1.0× ustreamer)")
        for row in rows {
            table.add(row.server, "\(row.clients)", formatDuration(row.cpuPerFrameNanoseconds),
                      row.cpuPerFrameOfEachRunNanoseconds.map(formatDuration).joined(separator: " / "),
                      String(format: "%.1f", row.framesPerSecond), String(format: "%.2f", row.fewestFrames),
                      String(format: "%.0f", row.bytesPerFrame), formatRatio(row.overUstreamer ?? .nan),
                      row.overUstreamer.map { goalMark($0, 1.0) } ?? "")
        }
        return table.text
    }
}

/// One client: `curl` reading a multipart stream into a pipe, and a thread of ours counting its
/// parts (each part's header names `image/jpeg`) and bytes as they come, keeping none of them
/// (a 1080p stream is ~200 MB in 16 s: stored and searched afterwards, it took minutes in the rig).
final class StreamReader: @unchecked Sendable {
    private let process = Process()
    private let lock = NSLock()
    private var parts = 0
    private var bytes = 0
    private var thread: Thread?

    init(_ arguments: [String]) throws {
        let pipe = Pipe()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardOutput = pipe
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        do { try process.run() } catch { throw BenchmarkError("cannot start \(arguments[0]): \(error)") }
        let descriptor = pipe.fileHandleForReading.fileDescriptor
        let thread = Thread { [self] in
            let marker = Array("image/jpeg".utf8)
            let capacity = 1 << 16
            // The marker may straddle two reads: the last marker.count - 1 bytes are kept in front.
            let buffer = UnsafeMutablePointer<UInt8>.allocate(capacity: capacity + marker.count)
            defer { buffer.deallocate() }
            var carried = 0
            while true {
                let count = read(descriptor, buffer + carried, capacity)
                if count <= 0 { if count < 0 && errno == EINTR { continue }; break }
                let length = carried + count
                var found = 0, offset = 0
                // memchr finds each candidate first byte; memcmp checks the rest (glibc's memmem
                // is not in Swift's Glibc module).
                while offset + marker.count <= length,
                      let hit = memchr(buffer + offset, Int32(marker[0]), length - offset) {
                    let at = buffer.distance(to: hit.assumingMemoryBound(to: UInt8.self))
                    guard at + marker.count <= length else { break }
                    if memcmp(buffer + at, marker, marker.count) == 0 {
                        found += 1
                        offset = at + marker.count
                    } else {
                        offset = at + 1
                    }
                }
                carried = min(marker.count - 1, length - offset)
                memmove(buffer, buffer + length - carried, carried)
                lock.lock(); parts += found; bytes += count; lock.unlock()
            }
            _ = pipe   // kept open until the stream ends
        }
        self.thread = thread
        thread.start()
    }

    /// Parts and bytes received so far.
    var counts: (parts: Int, bytes: Int) {
        lock.lock(); defer { lock.unlock() }
        return (parts, bytes)
    }

    func stop() { MJPEGServerBenchmark.stop(process) }
}
