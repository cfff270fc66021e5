#if PipeWire
import MediaDevicesCore
import CPipeWire
import Glibc
import Synchronization

/// A camera node of our own in the PipeWire session (`cpw_output` of the CPipeWire shim): a
/// `pw_stream` in the output direction with `media.class` "Video/Source", `media.role` "Camera",
/// the caller's `node.name` and `node.description`, and `mediadevices.virtual` = "true" (so our
/// own listings can tell it from a real camera). `pw-cli`, `gst-launch-1.0 pipewiresrc`, OBS,
/// browsers (through the Camera portal) and MediaDevices' own PipeWire backend see it.
///
/// The building block of a virtual camera's PipeWire output; its owner (the publishing type)
/// does the rest:
/// - It offers the ``PipeWireCameraOffer``s it is given, one `EnumFormat` param each (the first
///   preferred). A consumer's link fixes one of them; ``Status/format`` says which, and the owner
///   converts its frames to it with the pixel pipeline (`FrameConverter`) before ``send(_:)``.
///   PipeWire gives a node's output port one format at a time: a second consumer shares the
///   format the first fixed (a consumer that cannot take it fails to link).
/// - Buffers: memfd that PipeWire allocates for the link (2 to 8, one tightly packed frame each),
///   mapped by the stream (`PW_STREAM_FLAG_MAP_BUFFERS`); not DMA-BUF. ``send(_:)`` copies the
///   frame into a free one and queues it; the node is its graph's driver, so queueing starts a
///   cycle that hands it to every consumer. No heap allocation per frame.
/// - Consumers: ``Status/isStreaming`` is the stream's state. With PipeWire 0.3.65 a producer's
///   stream learns nothing of links or consumers as such; it goes STREAMING when its graph starts
///   (a consumer linked and started) and PAUSED when the graph stops (the last consumer left: the
///   node is idle). The owner starts its source on the first and stops it on the second.
///   Who reads is learnt from the session's registry on the node's own connection: each Link
///   global whose `link.output.node` is the node is a consumer (``Status/consumers``), named by
///   the reading node's `node.name` and its client's `pipewire.sec.pid`.
/// - Errors: no PipeWire to connect to is `.notFound`; PipeWire going away while the node is
///   published ends it: ``Status/error`` (`.disconnected`), and ``send(_:)`` throws it.
/// - Controls are not passed through yet: the seam is the stream's `Props` param (a consumer's
///   `pw_node_set_param(Props)` arrives at the stream's `param_changed` with `SPA_PARAM_Props`,
///   which the shim does not subscribe to yet; the node would announce `PropInfo` params beside
///   `EnumFormat`).
///
/// Changes of ``status`` reach `onChange` on a thread of the node's own (no lock held: it may
/// call ``send(_:)``, ``status`` or ``close()``). `send` may be called from any one thread at a
/// time (typically the source's capture thread). ``close()`` (or `deinit`) removes the node and
/// releases everything.
package final class PipeWireCameraOutput: @unchecked Sendable {
    /// The property that marks the nodes MediaDevices publishes, with the value "true".
    package static let markerKey = PipeWireCameraNode.virtualMarkerKey

    /// What the node is doing.
    package struct Status: Sendable, Equatable, CustomStringConvertible {
        /// The node's global id in the session (`pw-cli`, `pipewiresrc path=`), once PipeWire made it.
        package var nodeID: UInt32?
        /// Whether a consumer streams from the node (its stream is STREAMING, not PAUSED).
        package var isStreaming = false
        /// The offer a consumer's link fixed, `nil` while none is fixed (no consumer, or the
        /// node idle and suspended by the session manager).
        package var format: PipeWireCameraOffer?
        /// The buffers PipeWire gave the stream for `format`.
        package var bufferCount = 0
        /// Why the node ended (PipeWire went away, or refused the node); `nil` while it is published.
        package var error: MediaDevicesError?
        /// The links from the node to readers, as the session's registry announces them (a link
        /// exists from when the session manager connects a reader until it leaves), by link id.
        package var consumers: [Consumer] = []

        /// `"node 42 streaming YUYV 640x480 @ 30 fps (4 buffers)"`.
        package var description: String {
            var text = "node \(nodeID.map(String.init) ?? "?") \(error != nil ? "ended" : isStreaming ? "streaming" : "idle")"
            if let format { text += " \(format) (\(bufferCount) buffers)" }
            if let error { text += ": \(error)" }
            return text
        }
    }

    /// A reader of the node: a link from it to another node, that node's name and its process.
    package struct Consumer: Sendable, Hashable {
        /// The link's global id.
        package var linkID: UInt32
        /// The reading node's global id.
        package var nodeID: UInt32
        /// Its client's process (`pipewire.sec.pid`; 0 when not known).
        package var pid: Int32
        /// Its `node.name` (`gst-launch-1.0`, a stream's name; "" when not known).
        package var nodeName: String
    }

    /// The most consumers ``Status/consumers`` lists.
    static let maximumConsumers = 32

    /// What ``send(_:)`` did with a frame.
    package enum SendResult: Equatable, Sendable {
        /// Copied into a buffer and handed to the consumers.
        case sent
        /// Dropped: no consumer streams, or every buffer is with the consumers.
        case noBuffer
        /// Dropped: the frame is not in the negotiated format (convert it to ``Status/format`` first).
        case formatMismatch
    }

    /// `node.name`.
    package let name: String
    /// `node.description`, the name people see.
    package let nodeDescription: String
    /// The formats the node offers, in the order given.
    package let offers: [PipeWireCameraOffer]

    /// Where each offer's planes go in a buffer: byte offset, bytes per row, rows, per plane.
    private let layouts: [[(offset: Int, bytesPerRow: Int, rows: Int)]]
    /// The shim's node (its address; 0 once closed). Taken by `send`, `status` and `close`, never by the
    /// node's threads (PipeWire's loop thread takes only the shim's lock, which is taken after this).
    private let output: Mutex<UInt>
    private let notifications: WakeUpEvent
    private let closing = Atomic<Bool>(false)
    private var events: CaptureThread?
    /// Frames sent, and dropped for want of a buffer or for their format.
    private let counts = Mutex((sent: UInt64(0), noBuffer: UInt64(0), mismatched: UInt64(0)))

    /// Publishes a node named `name` (`node.name`: unique in the session; letters, digits, `_`,
    /// `-`, `.`) described as `description`, offering `offers`, on the default PipeWire remote
    /// (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`) or over `remoteFD` (taken). Returns
    /// once PipeWire made the node (at most `timeout`). `onChange` gets every new ``status`` on
    /// the node's thread. Throws `.notFound` without a PipeWire to connect to, `.unsupportedFormat`
    /// for no offers, `.busy` when another node of the session has the name (PipeWire itself
    /// would make a second one), `.io` when PipeWire refuses the node, `.timeout` when it does
    /// not answer.
    package init(name: String, description: String, offers: [PipeWireCameraOffer], remoteFD: Int32? = nil,
                 timeout: Duration = .seconds(5), onChange: (@Sendable (Status) -> Void)? = nil) throws(MediaDevicesError) {
        self.name = name
        nodeDescription = description
        self.offers = offers
        layouts = offers.map { offer in
            let format = offer.format
            let planes = format.pixelFormat.layout?.planes ?? []
            let locations = format.planeLocations
            return planes.indices.map { i in
                (locations[i].offset, format.bytesPerRow[i], planes[i].rows(height: format.height))
            }
        }
        let device = "pipewire:\(name)"
        guard !offers.isEmpty else {
            if let remoteFD { Glibc.close(remoteFD) }
            throw MediaDevicesError(.unsupportedFormat, device: device, operation: "pw_stream_connect",
                                    detail: "a camera node needs at least one format to offer",
                                    remedy: "PipeWireCameraOffer.standard(size:frameRate:) makes the usual ones")
        }
        let wake = try WakeUpEvent()
        notifications = wake
        var message = [CChar](repeating: 0, count: 256)
        var shimFormats = offers.map(\.shimFormat)
        let opened: OpaquePointer? = name.withCString { cName in
            description.withCString { cDescription in
                Self.markerKey.withCString { cKey in
                    "true".withCString { cValue in
                        var config = cpw_output_config(node_name: cName, node_description: cDescription,
                                                       marker_key: cKey, marker_value: cValue)
                        return cpw_output_open(remoteFD ?? -1, &config, &shimFormats, shimFormats.count, wake.descriptor,
                                               Int32(clamping: timeout.millisecondCount), &message, message.count)
                    }
                }
            }
        }
        guard let opened else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            throw Self.openError(why, device: device, remoteGiven: remoteFD != nil, timeout: timeout)
        }
        output = Mutex(UInt(bitPattern: opened))
        guard let onChange else { return }
        do {
            let node = WeakNode(self)
            events = try CaptureThread(name: "md-pw-node-ev") { Self.deliverChanges(of: node, wake: wake, to: onChange) }
        } catch {
            close()
            throw error
        }
    }

    deinit { close() }

    /// The node's status now.
    package var status: Status {
        output.withLock { address in
            guard let output = OpaquePointer(bitPattern: address) else {
                return Status(error: MediaDevicesError(.invalidState, device: "pipewire:\(name)", operation: "pw_stream",
                                                       detail: "the node was closed"))
            }
            var raw = cpw_output_status()
            cpw_output_get_status(output, &raw)
            var status = status(of: &raw)
            var links = [cpw_output_consumer](repeating: cpw_output_consumer(), count: Self.maximumConsumers)
            let count = links.withUnsafeMutableBufferPointer { cpw_output_get_consumers(output, $0.baseAddress, $0.count) }
            status.consumers = links.prefix(Int(max(count, 0))).map { link in
                var link = link
                let name = withUnsafeBytes(of: &link.node_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                return Consumer(linkID: link.link_id, nodeID: link.node_id, pid: link.pid, nodeName: name)
            }.sorted { $0.linkID < $1.linkID }
            return status
        }
    }

    /// Frames sent so far, and frames dropped for want of a buffer (no consumer streaming, or
    /// all buffers with the consumers) or because they were not in the negotiated format.
    package var frameCounts: (sent: UInt64, noBuffer: UInt64, mismatched: UInt64) { counts.withLock { $0 } }

    /// Copies `frame` (in ``Status/format``'s pixel format and size; any row padding) into a free
    /// buffer and hands it to the consumers, with its timestamp and sequence number. Throws what
    /// ended the node (PipeWire went away: `.disconnected`) and `.invalidState` once closed.
    @discardableResult
    package func send(_ frame: VideoFrame) throws(MediaDevicesError) -> SendResult {
        let result: Result<SendResult, MediaDevicesError> = output.withLock { address in
            guard let output = OpaquePointer(bitPattern: address) else {
                return .failure(MediaDevicesError(.invalidState, device: "pipewire:\(name)", operation: "send",
                                                  detail: "the node was closed"))
            }
            // The offer the frame is (an index loop over a few offers: no allocation).
            var index = 0
            while index < offers.count {
                let offer = offers[index].format
                if offer.pixelFormat == frame.format.pixelFormat && offer.width == frame.width && offer.height == frame.height { break }
                index += 1
            }
            guard index < offers.count else { return .success(.formatMismatch) }
            var buffer = cpw_output_buffer()
            switch cpw_output_begin(output, UInt32(index), &buffer) {
            case 1: break
            case 0: return .success(.noBuffer)
            case 2: return .success(.formatMismatch)
            default:
                var raw = cpw_output_status()
                cpw_output_get_status(output, &raw)
                return .failure(status(of: &raw).error ?? MediaDevicesError(.disconnected, device: "pipewire:\(name)",
                                                                             operation: "pw_stream", detail: "the node ended"))
            }
            guard let base = buffer.data else {
                cpw_output_end(output, 0, 0, 0)
                return .success(.noBuffer)
            }
            let planes = layouts[index]
            var end = 0
            var plane = 0
            while plane < planes.count {
                let target = planes[plane]
                end = max(end, target.offset + target.bytesPerRow * target.rows)
                plane += 1
            }
            guard end <= Int(buffer.capacity), frame.planeCount >= planes.count else {
                cpw_output_end(output, 0, 0, 0)
                return .success(.formatMismatch)
            }
            plane = 0
            while plane < planes.count {
                let target = planes[plane]
                let source = frame.plane(plane)
                let rowBytes = min(target.bytesPerRow, source.bytesPerRow)
                if let from = source.bytes.baseAddress, source.bytes.count >= source.bytesPerRow * (target.rows - 1) + rowBytes {
                    if source.bytesPerRow == target.bytesPerRow {
                        memcpy(base + target.offset, from, target.bytesPerRow * target.rows)
                    } else {
                        var row = 0
                        while row < target.rows {
                            memcpy(base + target.offset + row * target.bytesPerRow, from + row * source.bytesPerRow, rowBytes)
                            row += 1
                        }
                    }
                }
                plane += 1
            }
            cpw_output_end(output, UInt32(end), Int64(clamping: frame.timestamp.nanoseconds), UInt64(frame.sequence))
            return .success(.sent)
        }
        switch result {
        case .success(let sent):
            counts.withLock { counts in
                switch sent {
                case .sent: counts.sent += 1
                case .noBuffer: counts.noBuffer += 1
                case .formatMismatch: counts.mismatched += 1
                }
            }
            return sent
        case .failure(let error):
            throw error
        }
    }

    /// Removes the node from the session, stops its threads and releases its connection and
    /// buffers; later calls do nothing. Safe from `onChange`.
    package func close() {
        guard !closing.exchange(true, ordering: .acquiringAndReleasing) else { return }
        notifications.signal()
        events?.join()
        output.withLock { address in
            if let output = OpaquePointer(bitPattern: address) { cpw_output_close(output) }
            address = 0
        }
    }

    /// The node thread's loop: on each notification, the status, to `onChange` when it changed;
    /// until the node is closed, ended or dropped (it holds the node only while it reads and calls).
    private static func deliverChanges(of weakNode: WeakNode, wake: WakeUpEvent, to onChange: @Sendable (Status) -> Void) {
        var last: Status?
        var poller = pollfd(fd: wake.descriptor, events: Int16(POLLIN), revents: 0)
        while true {
            let delivered: Bool = {
                guard let node = weakNode.node, !node.closing.load(ordering: .acquiring) else { return false }
                let current = node.status
                if current != last {
                    last = current
                    onChange(current)
                }
                return current.error == nil
            }()
            guard delivered else { return }
            poller.revents = 0
            _ = poll(&poller, 1, -1)
            wake.reset()
        }
    }

    /// The node as its thread holds it: weakly, so that dropping the node closes it.
    private final class WeakNode: @unchecked Sendable {
        weak var node: PipeWireCameraOutput?
        init(_ node: PipeWireCameraOutput) { self.node = node }
    }

    /// The shim's status as a ``Status``.
    private func status(of raw: inout cpw_output_status) -> Status {
        var status = Status()
        status.nodeID = raw.node_id == UInt32.max ? nil : raw.node_id
        status.isStreaming = raw.state == CPW_STATE_STREAMING.rawValue
        status.format = Int(raw.negotiated) < offers.count ? offers[Int(raw.negotiated)] : nil
        status.bufferCount = Int(raw.buffers)
        if raw.state == CPW_STATE_ENDED.rawValue {
            let why = withUnsafeBytes(of: &raw.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            status.error = MediaDevicesError(.disconnected, device: "pipewire:\(name)", operation: "pw_stream",
                                             detail: "The camera node \(name) ended (\(why))",
                                             remedy: "PipeWire quit or removed the node; publish it again once PipeWire runs")
        }
        return status
    }

    private static func openError(_ why: String, device: String, remoteGiven: Bool, timeout: Duration) -> MediaDevicesError {
        if why.hasPrefix("name taken:") {
            return MediaDevicesError(.busy, device: device, operation: "pw_stream_connect",
                                     detail: "Another node of the PipeWire session has this name (\(why.dropFirst(12)))",
                                     remedy: "choose another name, or stop what publishes it (`pw-cli ls Node` lists the nodes)")
        }
        if why.contains("pw_context_connect") {
            let remote = remoteGiven ? "the given remote" : (getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR/pipewire-0")
            return MediaDevicesError(.notFound, device: device, operation: "pw_context_connect",
                                     detail: "No PipeWire session at \(remote) to publish the camera node in (\(why))",
                                     remedy: "start pipewire and wireplumber (a desktop session does), or set PIPEWIRE_REMOTE")
        }
        if why.contains("pw_context_new") {
            // No client configuration or modules here (a root with libpipewire and no PipeWire).
            return MediaDevicesError(.notFound, device: device, operation: "pw_context_new",
                                     detail: "PipeWire cannot start a client here (\(why)): its configuration or modules are missing",
                                     remedy: "install pipewire, then start pipewire and wireplumber (a desktop session does)")
        }
        if why.contains("within the time given") {
            return MediaDevicesError(.timeout, device: device, operation: "pw_stream_connect", errno: ETIMEDOUT,
                                     detail: "PipeWire did not make the camera node within \(timeout)",
                                     remedy: "is the session busy or stopped?")
        }
        return MediaDevicesError(.io, device: device, operation: "pw_stream_connect",
                                 detail: "PipeWire refused the camera node (\(why))",
                                 remedy: "check the node name (letters, digits, '_', '-', '.') and the session's log")
    }
}
#endif
