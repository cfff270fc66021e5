import ArgumentParser
import Logging
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices`: list devices and formats, and capture from cameras and the test pattern.
@main
struct MediaDevicesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "mediadevices",
        abstract: "Cameras (V4L2), screens and audio on Linux: list devices and formats, capture frames.",
        discussion: Examples.tool,
        version: ToolVersion.current,
        subcommands: [ListCommand.self, FormatsCommand.self, ControlsCommand.self, CaptureCommand.self,
                      SnapshotCommand.self, RecordCommand.self, PlayCommand.self, DuplexCommand.self, MonitorCommand.self, OrientationCommand.self,
                      ScreensCommand.self, ScreenshotCommand.self, PublishCommand.self])

    /// Sends the library's log messages to standard error, keeping standard output for results
    /// (and JSON) only, then runs the command.
    static func main() {
        LoggingSystem.bootstrap(StreamLogHandler.standardError)
        main(nil)
    }
}
