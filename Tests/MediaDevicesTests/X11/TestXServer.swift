import Foundation

/// A private X server a test started (`XvfbServer`, `XorgDummyServer`): its display, and
/// `xrandr` run against it.
protocol TestXServer {
    /// `":N"`.
    var display: String { get }
}

extension TestXServer {
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
