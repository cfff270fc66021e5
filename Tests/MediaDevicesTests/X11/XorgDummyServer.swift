import Foundation

/// A private Xorg with the dummy video driver for one test: xserver-xorg-video-dummy 0.4.0
/// gives 16 RandR outputs, `DUMMY0` (connected, on at the start) to `DUMMY15` (disconnected:
/// they take modes only through `xrandr --addmode`). It writes a minimal xorg.conf (dummy
/// device, a monitor with wide sync ranges, depth 24) into a directory of its own and starts
/// `Xorg -config FILE -configdir OWN -displayfd 1 -noreset -nolisten tcp -novtswitch
/// -sharevts` without input devices; `stop()` ends it and removes the directory. Runs as root
/// on the host (Xorg opens the console to share its VT). A machine without Xorg or the driver
/// fails the test, saying what to install: these tests never skip.
final class XorgDummyServer: TestXServer {
    /// `":N"`.
    let display: String
    /// Seconds from launch to the display number arriving (the server is listening).
    let startupSeconds: Double
    private let process: Process
    private let directory: URL

    /// Starts Xorg with `DUMMY0` at `width`×`height` (a mode the driver lists) and a framebuffer
    /// of up to `maximum` (the dummy's video memory is sized for it).
    init(width: Int = 640, height: Int = 480, maximum: (width: Int, height: Int) = (4096, 2048)) throws {
        let (server, driver) = ("/usr/lib/xorg/Xorg", "/usr/lib/xorg/modules/drivers/dummy_drv.so")
        for path in [server, driver] where !FileManager.default.fileExists(atPath: path) {
            throw XvfbError("\(path) is missing: install Debian's xserver-xorg-core and xserver-xorg-video-dummy (scripts/install.sh does) to run the Xorg tests")
        }
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("xorg-dummy-\(UUID().uuidString)")
        self.directory = directory
        let configDirectory = directory.appendingPathComponent("xorg.conf.d")
        try FileManager.default.createDirectory(at: configDirectory, withIntermediateDirectories: true)
        // Xorg logs an empty config directory as an error: give it a file.
        try "# nothing: the test's xorg.conf says it all\n".write(to: configDirectory.appendingPathComponent("00-empty.conf"), atomically: true, encoding: .utf8)
        let config = directory.appendingPathComponent("xorg.conf"), log = directory.appendingPathComponent("Xorg.log")
        let videoKilobytes = maximum.width * maximum.height * 4 / 1024 + 1024
        try XorgDummyServer.configuration(mode: "\(width)x\(height)", maximum: maximum, videoKilobytes: videoKilobytes)
            .write(to: config, atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: server)
        process.arguments = ["-config", config.path, "-configdir", configDirectory.path, "-logfile", log.path, "-displayfd", "1",
                             "-noreset", "-nolisten", "tcp", "-novtswitch", "-sharevts"]
        (display, startupSeconds) = try XorgDummyServer.launch(process) { status in
            // Its log says why.
            let errors = ((try? String(contentsOf: log, encoding: .utf8)) ?? "").split(separator: "\n").filter { $0.contains("(EE)") }
            try? FileManager.default.removeItem(at: directory)
            return "Xorg exited (status \(status)) before naming its display: \(errors.joined(separator: " | "))"
        }
        self.process = process
    }

    /// The xorg.conf: no input devices, the dummy device, a monitor any test mode fits.
    private static func configuration(mode: String, maximum: (width: Int, height: Int), videoKilobytes: Int) -> String {
        """
        Section "ServerFlags"
            Option "AutoAddDevices" "false"
            Option "AutoEnableDevices" "false"
            Option "AutoAddGPU" "false"
            Option "AutoBindGPU" "false"
        EndSection
        Section "Device"
            Identifier "dummy"
            Driver "dummy"
            VideoRam \(videoKilobytes)
        EndSection
        Section "Monitor"
            Identifier "monitor"
            HorizSync 5.0 - 1000.0
            VertRefresh 5.0 - 200.0
        EndSection
        Section "Screen"
            Identifier "screen"
            Device "dummy"
            Monitor "monitor"
            DefaultDepth 24
            SubSection "Display"
                Depth 24
                Virtual \(maximum.width) \(maximum.height)
                Modes "\(mode)"
            EndSubSection
        EndSection

        """
    }

    /// Stops the server, waits for it and removes its directory.
    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
        try? FileManager.default.removeItem(at: directory)
    }
}
