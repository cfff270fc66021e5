import Hummingbird
import MediaDevices

/// `GET /api/cameras/{id}/stream.mjpg?format=&width=&height=&fps=`: a `multipart/x-mixed-replace`
/// stream of JPEGs, from the capture every viewer of that camera and format shares.
enum MJPEGStream {
    /// The multipart boundary between parts.
    static let boundary = "mediaconsoleframe"

    /// The request's query as a `StreamKey` (400 for a value that does not parse).
    static func key(camera: String, request: Request) throws -> StreamKey {
        let query = request.uri.queryParameters
        func integer(_ name: String) throws -> Int? {
            guard let text = query.get(name), !text.isEmpty else { return nil }
            guard let value = Int(text), (1...16384).contains(value) else {
                throw HTTPError(.badRequest, message: "\(name)=\(text): give a whole number of pixels from 1 to 16384")
            }
            return value
        }
        let format = query.get("format").flatMap { $0.isEmpty ? nil : $0 }
        let pixelFormat = format.flatMap(PixelFormat.init(named:))
        if let format, pixelFormat == nil {
            throw HTTPError(.badRequest, message: "format=\(format): not a pixel format MediaDevices knows (GET /api/cameras/\(camera)/formats lists the camera's)")
        }
        let fps = query.get("fps").flatMap { $0.isEmpty ? nil : $0 }
        let frameRate = fps.flatMap(FrameRate.init(parsing:))
        if let fps, frameRate == nil {
            throw HTTPError(.badRequest, message: "fps=\(fps): give a rate such as 30 or 30000/1001")
        }
        let (width, height) = (try integer("width"), try integer("height"))
        if (width == nil) != (height == nil) {
            throw HTTPError(.badRequest, message: "give both width and height, or neither")
        }
        return StreamKey(camera: camera, pixelFormat: pixelFormat, width: width, height: height, frameRate: frameRate)
    }

    /// The source a key asks for.
    static func makeSource(for camera: DeviceCatalog.Camera, key: StreamKey) -> (source: VideoSource, name: String) {
        let request = FormatRequest(pixelFormat: key.pixelFormat,
                                    size: key.width.map { Size(width: $0, height: key.height ?? $0) },
                                    frameRate: key.frameRate)
        switch camera {
        case .testPattern: return (TestPatternSource(pattern: .colorBars, request: request), DeviceCatalog.testPatternID)
        case .device(let device): return (CameraSource(device: device, request: request), device.path)
        }
    }

    /// The streaming response for a viewer's parts.
    static func response(_ parts: AsyncStream<ByteBuffer>) -> Response {
        Response(status: .ok,
                 headers: [.contentType: "multipart/x-mixed-replace; boundary=\(boundary)",
                           .cacheControl: "no-cache, no-store", .connection: "close"],
                 body: ResponseBody { writer in
                     for await part in parts { try await writer.write(part) }
                     try await writer.finish(nil)
                 })
    }
}
