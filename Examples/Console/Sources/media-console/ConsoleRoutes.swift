import Foundation
import Hummingbird
import MediaDevices

/// The console's HTTP interface: the page, and the JSON and MJPEG endpoints under `/api/`.
struct ConsoleRoutes: Sendable {
    /// The page's files.
    let assets: StaticAssets
    /// The devices, discovered per request.
    let catalog: DeviceCatalog
    /// The shared captures behind the MJPEG streams.
    let hub: StreamHub
    /// The connections open, against their budget.
    let budget: ConnectionBudget

    /// Adds every route to `router`.
    func register(on router: Router<BasicRequestContext>) {
        router.get("/") { _, _ in try assets.response(for: "index.html") }
        router.get("/assets/:name") { _, context in try assets.response(for: context.parameters.require("name")) }
        router.get("/api/devices") { _, _ in try json(await catalog.listing()) }
        router.get("/api/cameras/:id/formats") { _, context in
            let id = try context.parameters.require("id")
            let formats: [CaptureFormat]
            switch try await catalog.camera(id) {
            case .testPattern: formats = TestPatternSource.supportedFormats
            case .device(let device): formats = try library { try device.supportedFormats() }
            }
            return try json(FormatListing(camera: id, formats: formats))
        }
        router.get("/api/cameras/:id/controls") { _, context in
            let camera = try await catalog.camera(try context.parameters.require("id"))
            return try json(try library { try ControlsAPI.controls(of: camera) })
        }
        router.post("/api/cameras/:id/controls") { request, context in
            let camera = try await catalog.camera(try context.parameters.require("id"))
            let settings = try ControlsAPI.settings(from: try await request.body.collect(upTo: 64 * 1024))
            try library { try ControlsAPI.apply(settings, to: camera) }
            return try json(try library { try ControlsAPI.controls(of: camera) })
        }
        router.get("/api/status") { _, _ in
            let running = await hub.running()
            return try json(ConsoleStatus(captures: running.map { .init(stream: $0.key.description, viewers: $0.viewers) },
                                          maxCaptures: hub.maxCaptures, connections: budget.current,
                                          maxConnections: budget.limit, refusedConnections: budget.refused,
                                          devicePages: await LiveEvents.deviceEvents.pages,
                                          cameraEventPages: await LiveEvents.cameraEvents.pages()))
        }
        router.get("/api/events") { _, _ in try await LiveEvents.devices() }
        router.get("/api/cameras/:id/events") { _, context in
            let id = try context.parameters.require("id")
            return try await LiveEvents.camera(id, try await catalog.camera(id), hub: hub)
        }
        router.get("/api/audio/level") { request, _ in
            guard let device = request.uri.queryParameters.get("device"), !device.isEmpty else {
                throw HTTPError(.badRequest, message: "give device=UNIQUEID (an input of GET /api/devices)")
            }
            return try await LiveEvents.level(device: device)
        }
        router.get("/api/cameras/:id/stream.mjpg") { request, context in
            let id = try context.parameters.require("id")
            let key = try MJPEGStream.key(camera: id, request: request)
            let camera = try await catalog.camera(id)
            let parts = try await library { try await hub.join(key) { MJPEGStream.makeSource(for: camera, key: key) } }
            return MJPEGStream.response(parts)
        }
    }

    /// `value` as a JSON response.
    private func json(_ value: some Encodable) throws -> Response {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return Response(status: .ok, headers: [.contentType: "application/json"],
                        body: ResponseBody(byteBuffer: ByteBuffer(bytes: try encoder.encode(value))))
    }
}

/// `GET /api/status`: what the console is serving now.
struct ConsoleStatus: Encodable, Sendable {
    struct Capture: Encodable, Sendable { let stream: String, viewers: Int }
    /// The captures running, one per camera and format.
    let captures: [Capture]
    let maxCaptures: Int
    /// Connections open now (this one included), the most served at once, and those refused.
    let connections: Int, maxConnections: Int, refusedConnections: Int
    /// Pages following the device events (one `DeviceMonitor` for all of them).
    let devicePages: Int
    /// Pages following each camera's events, by camera id (one `controlChanges()` per camera).
    let cameraEventPages: [String: Int]
}

/// Runs a library call, turning its `MediaDevicesError` into the HTTP status that fits, with
/// the library's own message as the body.
func library<R>(_ body: () async throws -> R) async throws -> R {
    do { return try await body() } catch let error as MediaDevicesError { throw HTTPError(status(for: error), message: error.description) }
}

/// The synchronous form of `library(_:)`.
func library<R>(_ body: () throws -> R) throws -> R {
    do { return try body() } catch let error as MediaDevicesError { throw HTTPError(status(for: error), message: error.description) }
}

/// The HTTP status for a library error: the client's mistake (4xx) or the device's (5xx).
func status(for error: MediaDevicesError) -> HTTPResponse.Status {
    switch error.code {
    case .invalidValue, .unsupportedFormat, .invalidState, .notFound: .badRequest
    case .busy: .conflict
    case .permissionDenied: .forbidden
    case .disconnected: .gone
    case .timeout: .gatewayTimeout
    default: .internalServerError
    }
}
