import CPNG
import Foundation

/// The `mediadevices` tool (built beside the test bundle) run by a host-tier test, as root or
/// as an unprivileged user (`setpriv`, no capabilities, the user's own groups: the tests that
/// show a screen is shared without root). For an unprivileged user the tool is copied to a
/// directory of its own that anyone may read, so the checkout's permissions do not matter (the
/// Swift runtime it loads lies under /opt/swift, readable by all).
enum ToolRun {
    /// Runs the tool with `arguments`, as `user` (user and group names) when given, with this
    /// process's environment and `environment` over it (for a user: only PATH, HOME=/tmp and
    /// `environment`); calls `whileWaiting` every second until it ends. Returns its standard
    /// output, or throws with its standard error when it fails.
    static func run(_ arguments: [String], as user: (name: String, group: String)? = nil, environment: [String: String],
                    whileWaiting: () throws -> Void = {}) throws -> String {
        let built = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent().appendingPathComponent("mediadevices").path
        guard FileManager.default.isExecutableFile(atPath: built) else { throw ToolRunError("\(built) is missing: swift build first") }
        let process = Process()
        var directory: String?
        defer { if let directory { try? FileManager.default.removeItem(atPath: directory) } }
        if let user {
            let copies = try temporaryDirectory()
            directory = copies
            let tool = copies + "/mediadevices"
            try FileManager.default.copyItem(atPath: built, toPath: tool)
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: tool)
            process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
            process.arguments = ["--reuid=\(user.name)", "--regid=\(user.group)", "--init-groups", "--inh-caps=-all", "--", tool] + arguments
            process.environment = ["PATH": "/usr/bin:/bin", "HOME": "/tmp"].merging(environment) { $1 }
        } else {
            process.executableURL = URL(fileURLWithPath: built)
            process.arguments = arguments
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let output = Pipe(), errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        try process.run()
        let done = DispatchSemaphore(value: 0)
        let text = Text()
        Thread.detachNewThread {
            text.output = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            text.errors = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
            process.waitUntilExit()
            done.signal()
        }
        while done.wait(timeout: .now() + 1) == .timedOut { try whileWaiting() }
        guard process.terminationStatus == 0 else {
            throw ToolRunError("mediadevices \(arguments.joined(separator: " "))\(user.map { " as \($0.name)" } ?? "") failed (\(process.terminationStatus)): \(text.errors) \(text.output)")
        }
        return text.output
    }

    /// A new directory anyone may read and write (for the tool and its output), under /tmp.
    static func temporaryDirectory() throws -> String {
        let path = "/tmp/mediadevices-unprivileged-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o777])
        try FileManager.default.setAttributes([.posixPermissions: 0o777], ofItemAtPath: path)
        return path
    }

    /// The RGB pixels of a PNG (libpng's simplified API), with its size.
    static func rgb(_ path: String) throws -> (width: Int, height: Int, pixels: [UInt8]) {
        var image = png_image()
        image.version = cpng_IMAGE_VERSION
        guard png_image_begin_read_from_file(&image, path) != 0 else { throw ToolRunError("libpng cannot read \(path)") }
        image.format = cpng_FORMAT_RGB
        var pixels = [UInt8](repeating: 0, count: Int(image.width * image.height * 3))
        guard png_image_finish_read(&image, nil, &pixels, 0, nil) != 0 else { throw ToolRunError("libpng cannot decode \(path)") }
        return (Int(image.width), Int(image.height), pixels)
    }

    /// What the tool wrote, handed from the reading thread (read after the semaphore).
    private final class Text: @unchecked Sendable {
        var output = ""
        var errors = ""
    }
}

/// Why the tool could not be run, or failed.
struct ToolRunError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
