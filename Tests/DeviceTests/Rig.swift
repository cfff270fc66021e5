import Foundation
import TestSupport
import XCTest

/// The device tests' view of the rig (scripts/rig.sh): they run as root inside the virtual machine,
/// load the kernel's virtual drivers themselves and use the reference tools (v4l2-ctl, ffmpeg)
/// from the host's root filesystem. Outside the rig they fail loudly, never skip.
enum Rig {
    /// Fails the calling test unless it runs inside the rig.
    static func require(file: StaticString = #filePath, line: UInt = #line) throws {
        guard ProcessInfo.processInfo.environment["MEDIADEVICES_RIG"] == "1" else {
            XCTFail("DeviceTests need the real kernel drivers: run them inside the rig with `scripts/test.sh` or `scripts/rig.sh run -- <test binary> DeviceTests`", file: file, line: line)
            throw XCTSkip("not in the rig")  // unreachable in practice: XCTFail already failed the test
        }
        // A capture buffer still mapped here was left by an earlier test: name it, so the test
        // that checks for mappings does not take the blame.
        let maps = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        let left = maps.split(separator: "\n").filter { $0.contains("/dev/video") }
        if !left.isEmpty { print("rig: \(left.count) /dev/video mapping(s) left by an earlier test: \(left)") }
    }

    /// For the tests that count heap allocations: in a sanitizer build (the rig's TSan run),
    /// whose sanitizer owns malloc, says why and skips; otherwise fails unless the counter counts.
    static func requireAllocationCounting(file: StaticString = #filePath, line: UInt = #line) throws {
        if let why = AllocationProbe.unavailableReason {
            print("skip: \(why)")
            throw XCTSkip(why)
        }
        XCTAssertTrue(AllocationProbe.isActive, "malloc is interposed in the test binary", file: file, line: line)
    }

    /// Runs `command` with /bin/sh and returns its exit status, standard output, and standard
    /// error.
    @discardableResult
    static func shell(_ command: String) -> (status: Int32, output: String, errors: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", command]
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        do { try process.run() } catch { return (127, "", "\(error)") }
        // Drain standard error on another thread so neither pipe fills up and blocks the child.
        let errors = ErrorCollector()
        let drain = Thread { errors.data = err.fileHandleForReading.readDataToEndOfFile(); errors.done.signal() }
        drain.start()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        errors.done.wait()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self), String(decoding: errors.data, as: UTF8.self))
    }

    /// Runs `commands` at the same time (each as `shell` runs it) and returns their results in
    /// order: independent command-line runs, each of which costs seconds to start under emulation,
    /// use both of the guest's CPUs.
    static func shells(_ commands: [String]) -> [(status: Int32, output: String, errors: String)] {
        let results = ShellResults(count: commands.count)
        DispatchQueue.concurrentPerform(iterations: commands.count) { index in
            results.set(index, shell(commands[index]))
        }
        return results.all
    }

    private final class ShellResults: @unchecked Sendable {
        private let lock = NSLock()
        private var results: [(status: Int32, output: String, errors: String)]
        init(count: Int) { results = Array(repeating: (0, "", ""), count: count) }
        func set(_ index: Int, _ result: (status: Int32, output: String, errors: String)) { lock.withLock { results[index] = result } }
        var all: [(status: Int32, output: String, errors: String)] { lock.withLock { results } }
    }

    private final class ErrorCollector: @unchecked Sendable {
        var data = Data()
        let done = DispatchSemaphore(value: 0)
    }

    /// Runs `command` and fails the test if it exits non-zero.
    @discardableResult
    static func run(_ command: String, file: StaticString = #filePath, line: UInt = #line) throws -> String {
        let (status, output, errors) = shell(command)
        guard status == 0 else {
            XCTFail("`\(command)` exited \(status):\n\(output)\n\(errors)", file: file, line: line)
            throw RigError.commandFailed(command)
        }
        return output
    }

    /// Unloads vivid (if loaded) and loads it with `parameters`; waits for its nodes; returns
    /// the capture nodes in order, as v4l2-ctl reports them.
    @discardableResult
    static func loadVivid(_ parameters: String = "", file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        shell("modprobe -r vivid")
        try run("modprobe vivid \(parameters)", file: file, line: line)
        for _ in 0..<100 {
            if shell("v4l2-ctl --list-devices").output.contains("vivid") { break }
            usleep(50_000)
        }
        let nodes = try V4L2Reference.captureNodes()
        guard !nodes.isEmpty else {
            XCTFail("vivid \(parameters) gave no capture nodes:\n\(shell("v4l2-ctl --list-devices").output)", file: file, line: line)
            throw RigError.commandFailed("modprobe vivid")
        }
        return nodes
    }

    /// Sets a control with v4l2-ctl (`test_pattern=1`).
    static func setControl(_ node: String, _ assignment: String, file: StaticString = #filePath, line: UInt = #line) throws {
        try run("v4l2-ctl -d \(node) -c \(assignment)", file: file, line: line)
    }

    /// Prepares a vivid node for pixel checks: 100% colour bars, no on-screen text.
    static func colourBars(_ node: String) throws {
        try setControl(node, "test_pattern=1")
        try setControl(node, "osd_text_mode=2")
    }

    /// The `mediadevices` executable built beside the test bundle.
    static var tool: String { builtBeside("mediadevices") }
    /// The USB device emulator program (Tests/USBDeviceEmulator), built beside the tests.
    static var usbEmulator: String { builtBeside("usb-device-emulator") }

    /// The `mediadevices-benchmark` executable built beside the test bundle.
    static var benchmarkTool: String { builtBeside("mediadevices-benchmark") }

    /// The executable `name` of this package's build, beside the test bundle.
    private static func builtBeside(_ name: String) -> String {
        let bundle = Bundle.main.bundleURL.deletingLastPathComponent()
        let candidates = [bundle.appendingPathComponent(name).path,
                          URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent(name).path]
        return candidates.first { FileManager.default.isExecutableFile(atPath: $0) } ?? candidates[0]
    }

    /// Starts `arguments` as a child process whose output goes to files (no pipes: a background
    /// child holding a pipe would hang `shell`). Wait for it with `waitUntilExit()`.
    static func spawn(_ arguments: [String], output: String, errors: String) throws -> Process {
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        _ = FileManager.default.createFile(atPath: errors, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: arguments[0])
        process.arguments = Array(arguments.dropFirst())
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle(forWritingAtPath: output)
        process.standardError = FileHandle(forWritingAtPath: errors)
        try process.run()
        return process
    }

    /// Waits up to `seconds` for `process` to end; false if it is still running.
    static func wait(for process: Process, seconds: Double) -> Bool {
        let deadline = Date().addingTimeInterval(seconds)
        while process.isRunning && Date() < deadline { usleep(50_000) }
        return !process.isRunning
    }

    /// The size of a file in bytes (0 when missing).
    static func fileSize(_ path: String) -> Int {
        ((try? FileManager.default.attributesOfItem(atPath: path)[.size]) as? NSNumber)?.intValue ?? 0
    }

    /// The PCMs `aplay -l` or `arecord -l` lists, as "CARD,DEVICE", and the listing itself.
    static func alsaPCMs(_ tool: String) throws -> (pcms: Set<String>, listing: String) {
        let listing = try run(tool)
        // "card 0: Loopback [Loopback], device 1: Loopback PCM [Loopback PCM]"
        var pcms = Set<String>()
        for line in listing.split(separator: "\n") where line.hasPrefix("card ") {
            let words = line.split(separator: " ")
            guard let card = Int(words[1].dropLast()), let deviceIndex = words.firstIndex(of: "device"),
                  let number = Int(words[deviceIndex + 1].dropLast()) else { continue }
            pcms.insert("\(card),\(number)")
        }
        return (pcms, listing)
    }

    /// The text in a NUL-terminated C buffer (an error message a C function wrote).
    static func text(_ buffer: [CChar]) -> String {
        String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// Calls `name`, a C function of the emulated USB devices that returns 0 or an errno and
    /// writes its reason into the error buffer it is given (`usbdev_*_replug`); fails the test
    /// with the errno and the reason, and throws, unless it returned 0.
    static func usbCall(_ name: String, file: StaticString = #filePath, line: UInt = #line,
                        _ call: (UnsafeMutablePointer<CChar>, Int) -> Int32) throws {
        var error = [CChar](repeating: 0, count: 256)
        let result = error.withUnsafeMutableBufferPointer { call($0.baseAddress!, $0.count) }
        guard result == 0 else {
            XCTFail("\(name): \(result) \(text(error))", file: file, line: line)
            throw RigError.commandFailed(name)
        }
    }

    /// The path of `scripts/NAME` in the repository these tests were built from (the guest sees
    /// the host's filesystem, so the same path).
    static func script(_ name: String) -> String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("scripts").appendingPathComponent(name).path
    }

    /// A writable scratch directory inside the guest.
    static var scratch: String {
        let path = "/tmp/mediadevices-tests"
        try? FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }
}

/// A rig step that failed (the test has already been failed with the details).
enum RigError: Error { case commandFailed(String) }
