import ArgumentParser
import Dispatch
import Foundation
import Synchronization

/// SIGINT (Ctrl-C) and SIGTERM end a recording early and cleanly, as they do in ffmpeg and
/// arecord: while an `Interruption` lives, either signal calls `handler` (which ends the wait
/// for frames or samples) instead of killing the process, so the command stops capturing,
/// completes its file with what it has and reports it; then it exits with 130 (SIGINT) or 143
/// (SIGTERM). A second signal while it finishes kills it as usual.
final class Interruption {
    /// The first signal received (0: none), shared with the signal handlers.
    private final class Received: Sendable {
        let number = Atomic<Int32>(0)
    }

    private let received = Received()
    private let sources: [any DispatchSourceSignal]

    /// Watches SIGINT and SIGTERM until `finish()` (or until it is freed).
    init(_ handler: @escaping @Sendable () -> Void) {
        let received = self.received
        sources = [SIGINT, SIGTERM].map { number in
            signal(number, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler {
                guard received.number.compareExchange(expected: 0, desired: number, ordering: .acquiringAndReleasing).exchanged else {
                    signal(number, SIG_DFL)
                    kill(getpid(), number)
                    return
                }
                signal(number, SIG_DFL)  // a second one kills
                handler()
            }
            source.resume()
            return source
        }
    }

    deinit { finish() }

    /// The signal that interrupted the command, if one did.
    var interruptingSignal: Int32? { received.number.load(ordering: .acquiring).nonZero }

    /// Stops watching: the signals' default actions are back.
    func finish() {
        for source in sources { source.cancel() }
        if received.number.load(ordering: .acquiring) == 0 {
            signal(SIGINT, SIG_DFL)
            signal(SIGTERM, SIG_DFL)
        }
    }

    /// After the file is complete: tells what happened on standard error and exits with 128 + the
    /// signal's number when a signal ended the command early.
    func exitIfInterrupted(_ what: String) throws {
        guard let number = interruptingSignal else { return }
        FileHandle.standardError.write(Data("\(what) (interrupted by \(number == SIGINT ? "SIGINT" : "SIGTERM"))\n".utf8))
        throw ExitCode(128 + number)
    }
}

private extension Int32 {
    var nonZero: Int32? { self == 0 ? nil : self }
}
