import Foundation
import XCTest

/// A private Xvfb for one test (`Xvfb -displayfd 1 -noreset`, depth 24, RandR on), stopped by
/// `stop()`. Xvfb picks a free display and writes its number to the pipe. A machine without
/// Xvfb fails the test, saying what to install: these tests never skip.
final class XvfbServer: TestXServer {
    /// `":N"`.
    let display: String
    /// Seconds from launch to the display number arriving (the server is listening).
    let startupSeconds: Double
    private let process: Process

    /// Starts Xvfb with one `width`×`height` screen.
    init(width: Int = 640, height: Int = 480) throws {
        let path = "/usr/bin/Xvfb"
        guard FileManager.default.isExecutableFile(atPath: path) else {
            throw XvfbError("\(path) is missing: install Debian's xvfb (scripts/install.sh does) to run the X11 tests")
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = ["-displayfd", "1", "-noreset", "-nolisten", "tcp", "-screen", "0", "\(width)x\(height)x24", "+extension", "RANDR"]
        (display, startupSeconds) = try XvfbServer.launch(process) { "Xvfb exited (status \($0)) before naming its display" }
        self.process = process
    }

    /// Stops the server and waits for it.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }
}

/// Why the test X server could not be used.
struct XvfbError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
