import ArgumentParser
import Foundation
import Hummingbird

/// `media-console`: serves a browser console for the cameras, screens and audio devices
/// MediaDevices finds (device list, MJPEG preview, camera controls).
@main
struct MediaConsole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media-console",
        abstract: "A browser console for cameras, screens and audio devices, built on MediaDevices.")

    @Option(help: "The address to listen on. Any address but a loopback one needs --token.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port to listen on.")
    var port = 8080

    @Option(help: "A secret every request must carry, as ?token= or an 'Authorization: Bearer' header (open the page as /?token=SECRET: the browser then keeps it in a cookie for the page's own requests).")
    var token: String?

    @Flag(help: "Offer the library's built-in test pattern as a camera (for machines without one).")
    var testPattern = false

    func validate() throws {
        if token == nil && !isLoopback(host) {
            throw ValidationError("--host \(host) is not a loopback address: give --token SECRET so that only those who know it can see the cameras")
        }
        if let token, token.isEmpty { throw ValidationError("--token must not be empty") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
    }

    func run() async throws {
        let assets = try StaticAssets.load()
        let catalog = DeviceCatalog(offersTestPattern: testPattern)
        let hub = StreamHub()
        let router = Router()
        if let token { router.add(middleware: AccessToken<BasicRequestContext>(secret: token)) }
        ConsoleRoutes(assets: assets, catalog: catalog, hub: hub).register(on: router)
        let app = Application(router: router,
                              configuration: .init(address: .hostname(host, port: port), serverName: "media-console"),
                              onServerRunning: { channel in
                                  say("serving http://\(host):\(channel.localAddress?.port ?? port)/")
                              })
        try await app.runService()
    }
}

/// Writes one status line to standard output at once (unbuffered: also into a pipe or a log).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("media-console: \(line)\n".utf8))
}
