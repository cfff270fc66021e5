import Foundation
import MediaDevices
import Synchronization
import TestSupport

/// An application's audio code on a thread of its own: plays the test tone into the driver's
/// render side (if initialized), keeping 16 periods queued, and drains its capture side (if
/// initialized), keeping the last `keepSeconds` captured.
final class TonePump: @unchecked Sendable {
    let driver: AudioDriver
    let format: AudioFormat
    private let stop = Atomic<Bool>(false)
    private let done = DispatchSemaphore(value: 0)
    private let lock = NSLock()
    private var last: [Float]
    private var position = 0
    private var captured = 0

    init(driver: AudioDriver, format: AudioFormat, keepSeconds: Double) {
        self.driver = driver
        self.format = format
        last = [Float](repeating: 0, count: Int(keepSeconds * Double(format.sampleRate)) * format.channels)
    }

    func start() {
        let renders = driver.isRenderingInitialized, captures = driver.isCaptureInitialized
        Thread { [self] in
            var sine = SineGenerator(frequency: AudioToneRun.frequency, amplitude: AudioToneRun.amplitude, sampleRate: format.sampleRate)
            let period = driver.render.periodFrames ?? 512
            var chunk = [Float](repeating: 0, count: period * format.channels)
            var incoming = [Float](repeating: 0, count: 8192 * format.channels)
            while !stop.load(ordering: .acquiring) {
                // 16 periods (a third of a second at 1024 frames) queued: latency does not matter
                // here, and a test thread starved that long on a busy host would leave gaps of silence.
                while renders && driver.bus.renderSamplesQueued < 16 * chunk.count {
                    chunk.withUnsafeMutableBufferPointer { sine.fill($0, channels: format.channels) }
                    _ = chunk.withUnsafeBufferPointer { driver.bus.writeRenderData($0) }
                }
                let got = captures ? incoming.withUnsafeMutableBufferPointer { driver.bus.readCaptureData(into: $0) } : 0
                if got > 0 {
                    // In bulk: a loop per sample (a debug build, under emulation) fell seconds
                    // behind on a busy host, and the bus then held what the counts said had come.
                    lock.withLock {
                        incoming.withUnsafeBufferPointer { source in
                            last.withUnsafeMutableBufferPointer { ring in
                                guard ring.count > 0 else { return }
                                var copied = 0
                                while copied < got {
                                    let count = min(got - copied, ring.count - position)
                                    (ring.baseAddress! + position).update(from: source.baseAddress! + copied, count: count)
                                    position = (position + count) % ring.count
                                    copied += count
                                }
                            }
                        }
                        captured += got
                    }
                }
                usleep(2000)
            }
            done.signal()
        }.start()
    }

    /// Stops the thread and waits for it.
    func finish() {
        stop.store(true, ordering: .releasing)
        done.wait()
    }

    /// Interleaved samples captured so far.
    var samplesCaptured: Int { lock.withLock { captured } }
    /// The last `keepSeconds` captured (fewer before that much came), oldest first.
    var kept: [Float] { keptSince.samples }

    /// `kept`, and the position of its first sample among all samples captured (0 until more
    /// than `keepSeconds` came): sample counts taken earlier (`samplesCaptured`) index it as
    /// `count - first`.
    var keptSince: (samples: [Float], first: Int) {
        lock.withLock {
            captured < last.count ? (Array(last[..<position]), 0) : (Array(last[position...] + last[..<position]), captured - last.count)
        }
    }
}
