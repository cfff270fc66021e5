import Foundation

/// The `mediadevices` tool (built beside the test bundle) run to its end, whatever its exit
/// status: for the host tests of its usage errors, messages and JSON (`ToolRun` throws on a
/// failure instead).
struct ToolProcess {
    /// The exit status.
    let status: Int32
    /// Standard output and standard error.
    let output: String
    let errors: String

    /// The tool's path, beside the test bundle.
    static var toolPath: String {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("mediadevices").path
    }

    /// Runs the tool with `arguments` in `folder` (the current one when `nil`), with this
    /// process's environment and `environment` over it, and waits for it to end.
    static func run(_ arguments: [String], in folder: String? = nil, environment: [String: String] = [:]) throws -> ToolProcess {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: toolPath)
        process.arguments = arguments
        process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        if let folder { process.currentDirectoryURL = URL(fileURLWithPath: folder) }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        // Read both pipes before waiting, so a full pipe cannot stall the tool.
        let text = Text()
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            text.errors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            done.signal()
        }
        let printed = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        done.wait()
        process.waitUntilExit()
        return ToolProcess(status: process.terminationStatus, output: printed, errors: text.errors)
    }

    /// Standard error, handed from the reading thread (read after the semaphore).
    private final class Text: @unchecked Sendable {
        var errors = ""
    }
}
