import MediaDevicesCore
import Glibc

/// One output a ``VirtualCamera``'s frames are written to: a loopback device, or a PipeWire
/// node's stream. Internal. An enum, not a protocol: the pump's per-frame loop switches on it
/// with no existential boxing and no allocation.
enum FrameSink: Sendable {
    /// A v4l2loopback device (one `write()` per frame).
    case loopback(LoopbackWriter)
    #if PipeWire
    /// A PipeWire camera node (the frame copied into a buffer of its stream).
    case pipeWire(PipeWireCameraOutput)
    #endif

    /// Writes `frame`: 0, or an errno for a frame that could not be written (`EPIPE`: the
    /// PipeWire node ended). A node with no buffer free (its consumers hold them all) drops the
    /// frame, which is not a failure. Allocates nothing.
    func write(_ frame: VideoFrame) -> Int32 {
        switch self {
        case .loopback(let writer):
            return writer.write(frame)
        #if PipeWire
        case .pipeWire(let node):
            do {
                _ = try node.send(frame)
                return 0
            } catch {
                return EPIPE
            }
        #endif
        }
    }

    /// The object written to, to compare plans by identity.
    var identity: ObjectIdentifier {
        switch self {
        case .loopback(let writer): ObjectIdentifier(writer)
        #if PipeWire
        case .pipeWire(let node): ObjectIdentifier(node)
        #endif
        }
    }
}

/// Which frames one pump of a ``VirtualCamera`` reads, and the outputs it writes them to: one
/// per distinct format the outputs take, so each is converted once. Internal; unit-tested.
struct PumpPlan: Equatable, Sendable {
    /// The pixel format and size written.
    var pixelFormat: PixelFormat
    var size: Size
    /// The outputs written to.
    var sinks: [FrameSink]

    /// What the pixel pipeline converts the source's frames to for this plan; `nil`: the
    /// source's own frames (a format the pipeline does not write, at the source's own size).
    var conversion: OutputFormat? {
        LoopbackFormat.convertible.contains(pixelFormat) ? OutputFormat(pixelFormat, size: size) : nil
    }

    static func == (lhs: PumpPlan, rhs: PumpPlan) -> Bool {
        lhs.pixelFormat == rhs.pixelFormat && lhs.size == rhs.size && lhs.sinks.map(\.identity) == rhs.sinks.map(\.identity)
    }

    /// The plans for outputs each wanting a format: outputs of one pixel format and size share a
    /// plan (in the order their formats first come).
    static func grouping(_ wanted: [(format: VideoFormat, sink: FrameSink)]) -> [PumpPlan] {
        var plans: [PumpPlan] = []
        for (format, sink) in wanted {
            if let index = plans.firstIndex(where: { $0.pixelFormat == format.pixelFormat && $0.size == format.size }) {
                plans[index].sinks.append(sink)
            } else {
                plans.append(PumpPlan(pixelFormat: format.pixelFormat, size: format.size, sinks: [sink]))
            }
        }
        return plans
    }
}
