import Foundation
import Hummingbird
import HummingbirdCore
import Logging
import NIOCore
import NIOHTTPTypes
import Synchronization

/// The console's guard against running out of file descriptors and against clients that hold
/// connections without using them:
/// - the soft `RLIMIT_NOFILE` raised to the hard limit at start (`raiseDescriptorLimit()`);
/// - a connection budget under that limit (`ConnectionBudget`): a connection over it is answered
///   `503` at once and closed (a clear refusal), and past a small margin the server stops
///   accepting (Hummingbird's `MaximumAvailableConnections`: further clients wait in the
///   kernel's backlog) — never a crash for want of a descriptor;
/// - Hummingbird's idle timeout (a connection with no request in progress, including one whose
///   request head never completes: slowloris; bytes of an unfinished head do not reset it) and
///   NIO's `IdleStateHandler` write timeout (no write completed for that long while output waits
///   that the client does not read, or while a request's body is still trickling in a timeout
///   after its head, which every body part would keep from the idle timeout: `WriteTimeoutCloser`),
///   both closing the connection. An idle keep-alive connection lives until the idle timeout.
enum ServerLimits {
    /// Descriptors kept back from the connection budget for everything else the process opens
    /// (captures, device nodes, the page's files, libdispatch's /proc reads, the event loops).
    static let reservedDescriptors = 64

    /// Raises the soft descriptor limit to the hard one; returns the soft limit in force.
    @discardableResult
    static func raiseDescriptorLimit() -> Int {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0 else { return 1024 }
        if limit.rlim_cur < limit.rlim_max {
            var raised = limit
            raised.rlim_cur = limit.rlim_max
            if setrlimit(Int32(RLIMIT_NOFILE.rawValue), &raised) == 0 { limit = raised }
        }
        return Int(clamping: limit.rlim_cur)   // RLIM_INFINITY (all ones) clamps to Int.max
    }

    /// The connections the console serves at once: `requested`, but no more than the descriptor
    /// limit less the reserve (each connection is one descriptor).
    static func connectionBudget(requested: Int, descriptorLimit: Int) -> Int {
        max(8, min(requested, descriptorLimit - reservedDescriptors))
    }
}

/// The connections open now, against the budget.
final class ConnectionBudget: Sendable {
    /// The most served at once; more are answered 503 and closed.
    let limit: Int
    private let open = Atomic<Int>(0)
    private let refusedCount = Atomic<Int>(0)

    init(limit: Int) { self.limit = limit }

    /// Connections open now (refused ones included until they close).
    var current: Int { open.load(ordering: .relaxed) }
    /// Connections refused since start.
    var refused: Int { refusedCount.load(ordering: .relaxed) }

    /// Counts `channel` until it closes; false when it is over the budget.
    func admit(_ channel: any Channel) -> Bool {
        let now = open.wrappingAdd(1, ordering: .relaxed).newValue
        channel.closeFuture.whenComplete { _ in self.open.wrappingSubtract(1, ordering: .relaxed) }
        if now > limit {
            refusedCount.wrappingAdd(1, ordering: .relaxed)
            return false
        }
        return true
    }

    /// The answer a connection over the budget gets before it is closed.
    static let refusal: String = {
        let body = "media-console: too many connections at once; try again later\n"
        return "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: \(body.utf8.count)\r\n"
            + "Retry-After: 5\r\nConnection: close\r\n\r\n" + body
    }()
}

/// Hummingbird's HTTP/1 channel, with the connection budget in front of it and the write
/// timeout after its codec.
struct BudgetedHTTP1Channel: ServerChildChannel {
    let inner: HTTP1Channel
    let budget: ConnectionBudget

    func setup(channel: any Channel, logger: Logger) -> EventLoopFuture<HTTP1Channel.Value> {
        guard budget.admit(channel) else {
            // First in the pipeline: the refusal goes out as it is once the connection is
            // active, then it closes (the HTTP handlers behind it see only the close).
            return channel.pipeline.addHandler(RefuseConnection(), position: .first).flatMap {
                inner.setup(channel: channel, logger: logger)
            }
        }
        return inner.setup(channel: channel, logger: logger)
    }

    func handle(value: HTTP1Channel.Value, logger: Logger) async {
        await inner.handle(value: value, logger: logger)
    }

    /// Answers 503 and closes, as soon as the connection is active.
    final class RefuseConnection: ChannelInboundHandler, RemovableChannelHandler, Sendable {
        typealias InboundIn = ByteBuffer
        func handlerAdded(context: ChannelHandlerContext) { if context.channel.isActive { refuse(context) } }
        func channelActive(context: ChannelHandlerContext) { refuse(context) }
        func channelRead(context: ChannelHandlerContext, data: NIOAny) {}   // whatever it sends is not read
        private func refuse(_ context: ChannelHandlerContext) {
            let refusal = context.channel.allocator.buffer(string: ConnectionBudget.refusal)
            context.writeAndFlush(NIOAny(refusal)).whenComplete { _ in context.close(promise: nil) }
        }
    }

    /// The server: HTTP/1 with `idleTimeout` and `writeTimeout`, under `budget`.
    static func builder(budget: ConnectionBudget, idleTimeout: Duration, writeTimeout: Duration) -> HTTPServerBuilder {
        HTTPServerBuilder { responder in
            let configuration = HTTP1Channel.Configuration(
                additionalChannelHandlers: [IdleStateHandler(writeTimeout: .nanoseconds(Int64(writeTimeout.nanoseconds))),
                                            WriteTimeoutCloser(timeout: .nanoseconds(writeTimeout.nanoseconds))],
                idleTimeout: .nanoseconds(Int64(idleTimeout.nanoseconds)))
            return BudgetedHTTP1Channel(inner: HTTP1Channel(responder: responder, configuration: configuration), budget: budget)
        }
    }
}

/// Acts on `IdleStateHandler`'s report that no write completed within the write timeout, which
/// comes every timeout while none does (an idle keep-alive connection included), and closes the
/// connection only when it is stuck:
/// - output is waiting that the client does not take (the channel is not writable, or holds bytes
///   not yet written): a viewer that stopped reading, whose queued parts never go;
/// - a request's body is still arriving a whole timeout after its head: a trickled body, whose
///   every byte would keep it from the idle timeout.
/// Anything else (a keep-alive connection between requests, an answer being prepared, a quiet
/// event stream with nothing queued) is left to the idle timeout and to the response itself.
final class WriteTimeoutCloser: ChannelInboundHandler, RemovableChannelHandler {
    typealias InboundIn = HTTPRequestPart
    typealias InboundOut = HTTPRequestPart

    /// The write timeout, which a request's body gets to arrive whole.
    private let timeout: TimeAmount
    /// When the head of the request being read came; nil once its end has come.
    private var requestStarted: NIODeadline?

    init(timeout: TimeAmount) { self.timeout = timeout }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        switch unwrapInboundIn(data) {
        case .head: requestStarted = .now()
        case .body: break
        case .end: requestStarted = nil
        }
        context.fireChannelRead(data)
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        guard let idle = event as? IdleStateHandler.IdleStateEvent, idle == .write else {
            context.fireUserInboundEventTriggered(event)
            return
        }
        let buffered = (try? context.channel.syncOptions?.getOption(ChannelOptions.bufferedWritableBytes)) ?? 0
        let outputStuck = !context.channel.isWritable || buffered > 0
        let bodyTrickling = requestStarted.map { .now() - $0 >= timeout } ?? false
        if outputStuck || bodyTrickling { context.close(promise: nil) }
    }
}

extension Duration {
    /// The duration in whole nanoseconds.
    var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
