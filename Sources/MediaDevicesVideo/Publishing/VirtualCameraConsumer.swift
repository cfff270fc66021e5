/// A process reading a ``VirtualCamera``: one that holds one of its outputs open.
public struct VirtualCameraConsumer: Sendable, Hashable, CustomStringConvertible {
    /// The process ID.
    public var pid: Int32
    /// The process's command name, as `ps -o comm` shows it (`chromium`, `ffmpeg`); empty when
    /// it ended before it was read.
    public var command: String
    /// The output it reads.
    public var output: VirtualCamera.Output

    /// A consumer.
    package init(pid: Int32, command: String, output: VirtualCamera.Output) {
        self.pid = pid
        self.command = command
        self.output = output
    }

    /// `"ffmpeg (pid 412) on /dev/video10"`.
    public var description: String { "\(command.isEmpty ? "?" : command) (pid \(pid)) on \(output)" }
}
