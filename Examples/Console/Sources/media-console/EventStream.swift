import Foundation
import Hummingbird

/// One server-sent-events stream (`text/event-stream`) to one page: named JSON events, and a
/// comment every few seconds so that a page that has gone is noticed even when nothing happens.
/// What feeds it is stopped (`onEnd`) when the page goes, however it goes.
struct EventStream: Sendable {
    /// How often a quiet stream sends its keep-alive comment.
    static let keepAlive = Duration.seconds(2)
    /// Events a slow page may have waiting; the oldest go first (a meter's old levels are worthless).
    static let backlog = 64

    private let stream: AsyncStream<ByteBuffer>
    private let continuation: AsyncStream<ByteBuffer>.Continuation

    init() {
        (stream, continuation) = AsyncStream.makeStream(bufferingPolicy: .bufferingNewest(Self.backlog))
    }

    /// Sends `value` as the event `name` (one `event:` line and one `data:` line of JSON).
    func send(_ name: String, _ value: some Encodable) {
        if let message = Self.message(name, value) { send(message) }
    }

    /// Sends an event `message(_:_:)` made (one encoding for every page it goes to).
    func send(_ message: ByteBuffer) { continuation.yield(message) }

    /// The event `name` carrying `value` as JSON; nil when `value` does not encode.
    static func message(_ name: String, _ value: some Encodable) -> ByteBuffer? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        guard let json = try? encoder.encode(value) else { return nil }
        var buffer = ByteBuffer(string: "event: \(name)\ndata: ")
        buffer.writeBytes(json)
        buffer.writeString("\n\n")
        return buffer
    }

    /// Ends the stream (the page's EventSource then reconnects by itself).
    func finish() { continuation.finish() }

    /// The streaming response; `onEnd` runs once when the stream ends or the page goes.
    func response(onEnd: @escaping @Sendable () -> Void) -> Response {
        let continuation = self.continuation
        let keepAlive = Task {
            while !Task.isCancelled {
                try? await Task.sleep(for: Self.keepAlive)
                continuation.yield(ByteBuffer(string: ": alive\n\n"))
            }
        }
        continuation.onTermination = { _ in
            keepAlive.cancel()
            onEnd()
        }
        let stream = self.stream
        return Response(status: .ok,
                        headers: [.contentType: "text/event-stream", .cacheControl: "no-cache, no-store"],
                        body: ResponseBody { writer in
                            defer { continuation.finish() }   // the page went: a write failed
                            continuation.yield(ByteBuffer(string: ": open\n\n"))
                            for await message in stream { try await writer.write(message) }
                            try await writer.finish(nil)
                        })
    }
}
