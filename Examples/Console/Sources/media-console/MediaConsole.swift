import ArgumentParser
import Foundation
import Hummingbird
import HummingbirdCore

/// `media-console`: serves a browser console for the cameras, screens and audio devices
/// MediaDevices finds (device list, MJPEG preview, camera controls).
@main
struct MediaConsole: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "media-console",
        abstract: "A browser console for cameras, screens and audio devices, built on MediaDevices.",
        discussion: """
            The token (--token-file, MEDIA_CONSOLE_TOKEN or --token) is checked on every request; \
            it travels in plain HTTP, so off this machine put the console behind TLS (a reverse proxy).
            """)

    @Option(help: "The address to listen on. Any address but a loopback one needs a token.")
    var host = "127.0.0.1"

    @Option(help: "The TCP port to listen on.")
    var port = 8080

    @Option(help: "A secret every request must carry, as ?token= or an 'Authorization: Bearer' header (open the page as /?token=SECRET: the browser then keeps it in a cookie for the page's own requests). Shows in ps: prefer --token-file or MEDIA_CONSOLE_TOKEN.")
    var token: String?

    @Option(help: "A file whose first line is the token (kept out of ps).")
    var tokenFile: String?

    @Option(help: "A name the Host header may give besides loopback names, addresses and --host (the name a proxy or a browser reaches this console by); repeat for more.")
    var allowedHost: [String] = []

    @Option(help: "The most connections served at once (fewer when the descriptor limit is lower); more are answered 503.")
    var maxConnections = 512

    @Option(help: "The most captures running at once (one per camera and format, shared by its viewers).")
    var maxCaptures = 4

    @Option(help: "Seconds a connection may stay open with no request in progress (or with a request head not yet whole).")
    var idleTimeout = 30

    @Option(help: "Seconds a connection may go without a write reaching the client while output waits for it (a viewer that stopped reading), or while a request's body is still trickling in that long after its head, before it is closed (an idle keep-alive connection is left to --idle-timeout).")
    var writeTimeout = 20

    @Flag(help: "Offer the library's built-in test pattern as a camera (for machines without one).")
    var testPattern = false

    /// The token from --token-file, MEDIA_CONSOLE_TOKEN or --token (in that order); nil for none.
    func resolvedToken() throws -> String? {
        if let tokenFile {
            guard let text = try? String(contentsOfFile: tokenFile, encoding: .utf8) else {
                throw ValidationError("--token-file \(tokenFile): cannot be read")
            }
            let first = text.split(separator: "\n", omittingEmptySubsequences: false).first.map(String.init) ?? ""
            let trimmed = first.trimmingCharacters(in: .whitespacesAndNewlines)
            guard !trimmed.isEmpty else { throw ValidationError("--token-file \(tokenFile): the first line is empty") }
            return trimmed
        }
        if let value = ProcessInfo.processInfo.environment["MEDIA_CONSOLE_TOKEN"], !value.isEmpty { return value }
        return token
    }

    func validate() throws {
        let token = try resolvedToken()
        if token == nil && !isLoopback(host) {
            throw ValidationError("--host \(host) is not a loopback address: give a token (--token-file FILE, MEDIA_CONSOLE_TOKEN or --token) so that only those who know it can see the cameras")
        }
        if let token, token.isEmpty { throw ValidationError("--token must not be empty") }
        guard (0...65535).contains(port) else { throw ValidationError("--port must be from 0 to 65535") }
        guard maxConnections > 0, maxCaptures > 0, idleTimeout > 0, writeTimeout > 0 else {
            throw ValidationError("--max-connections, --max-captures, --idle-timeout and --write-timeout must be above 0")
        }
    }

    func run() async throws {
        let token = try resolvedToken()
        let descriptors = ServerLimits.raiseDescriptorLimit()
        let budget = ConnectionBudget(limit: ServerLimits.connectionBudget(requested: maxConnections, descriptorLimit: descriptors))
        let assets = try StaticAssets.load()
        let catalog = DeviceCatalog(offersTestPattern: testPattern)
        let hub = StreamHub(maxCaptures: maxCaptures)
        let router = Router()
        router.add(middleware: SecurityHeaders<BasicRequestContext>())
        var names = Set(allowedHost.map { RequestGuard<BasicRequestContext>.hostName($0) })
        names.insert(RequestGuard<BasicRequestContext>.hostName(host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host))
        router.add(middleware: RequestGuard<BasicRequestContext>(allowedHosts: names))
        let access = token.map { AccessToken<BasicRequestContext>(secret: $0, port: port) }
        if let access { router.add(middleware: access) }
        ConsoleRoutes(assets: assets, catalog: catalog, hub: hub, budget: budget).register(on: router)
        let app = Application(router: router,
                              server: BudgetedHTTP1Channel.builder(budget: budget, idleTimeout: .seconds(idleTimeout),
                                                                   writeTimeout: .seconds(writeTimeout)),
                              configuration: .init(address: .hostname(host, port: port), serverName: "media-console",
                                                   // Past the budget's margin, stop accepting (the kernel's backlog holds the rest).
                                                   availableConnectionsDelegate: MaximumAvailableConnections(budget.limit + 16)),
                              onServerRunning: { [budget] channel in
                                  let bound = channel.localAddress?.port ?? port
                                  access?.port.value.store(bound, ordering: .relaxed)
                                  say("serving http://\(host):\(bound)/ (at most \(budget.limit) connections, descriptor limit \(descriptors))")
                              })
        try await app.runService()
    }
}

/// Writes one status line to standard output at once (unbuffered: also into a pipe or a log).
func say(_ line: String) {
    FileHandle.standardOutput.write(Data("media-console: \(line)\n".utf8))
}
