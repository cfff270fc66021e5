import Foundation

/// A private X server a test started (`XvfbServer`, `XorgDummyServer`): its display, and
/// `xrandr` run against it.
protocol TestXServer {
    /// `":N"`.
    var display: String { get }
}

extension TestXServer {
    /// Runs `process` (an X server started with `-displayfd 1`) and reads the display number it
    /// writes to its standard output: `(":N", seconds from launch until then)`. End of file
    /// means the server died: `whyItDied(status)` says why.
    ///
    /// The server runs under `setpriv --pdeathsig TERM` (which execs it: its PID is the
    /// server's): when the test process dies without stopping it (killed by a CI timeout), the
    /// kernel ends the server too. The parent-death signal follows the launching thread, so
    /// launch from the test's own thread (the synchronous tests' main thread), not a pool thread.
    static func launch(_ process: Process, whyItDied: (Int32) -> String) throws -> (display: String, startupSeconds: Double) {
        if let server = process.executableURL?.path {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--pdeathsig", "TERM", "--", server] + (process.arguments ?? [])
        }
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        let started = Date()
        try process.run()
        // The display number, then a newline.
        var text = ""
        while !text.hasSuffix("\n") {
            let chunk = output.fileHandleForReading.availableData
            if chunk.isEmpty {
                process.waitUntilExit()
                throw XvfbError(whyItDied(process.terminationStatus))
            }
            text += String(decoding: chunk, as: UTF8.self)
        }
        return (":" + text.trimmingCharacters(in: .whitespacesAndNewlines), Date().timeIntervalSince(started))
    }

    /// Runs `xrandr -d DISPLAY arguments…` and fails when it does.
    func xrandr(_ arguments: String...) throws {
        try xrandr(arguments)
    }

    /// Runs `xrandr -d DISPLAY arguments…`, fails when it does, and returns what it printed.
    @discardableResult
    func xrandr(_ arguments: [String]) throws -> String {
        let tool = Process()
        tool.executableURL = URL(fileURLWithPath: "/usr/bin/xrandr")
        tool.arguments = ["-d", display] + arguments
        let output = Pipe()
        tool.standardOutput = output
        try tool.run()
        let printed = output.fileHandleForReading.readDataToEndOfFile()
        tool.waitUntilExit()
        guard tool.terminationStatus == 0 else {
            throw XvfbError("xrandr \(arguments.joined(separator: " ")) failed with status \(tool.terminationStatus)")
        }
        return String(decoding: printed, as: UTF8.self)
    }
}
