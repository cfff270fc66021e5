import Logging
import MediaDevicesCore

extension AudioDriverSide {
    /// Where the side logs what an operator needs, with the device and the side as metadata: a
    /// device opened (with its format, the bus's, the period and buffer) or not, started or
    /// not, stopped with its xrun count (a warning when there were xruns), ended by an error,
    /// a fallback to another device, a device switch. `nil` (the default): nothing is logged.
    /// Never per period.
    public var logger: Logger? {
        get { loggerBox.withLock { $0 } }
        set { loggerBox.withLock { $0 = newValue } }
    }

    /// Logs `message` at `level` about `device` (the side's own when nil) and `metadata`, when
    /// there is a logger.
    func log(_ level: Logger.Level, _ message: @autoclosure () -> Logger.Message, device: AudioDevice? = nil,
             _ metadata: @autoclosure () -> Logger.Metadata = [:]) {
        guard let logger else { return }
        var all = metadata()
        all["device"] = "\((device ?? self.device)?.name ?? "")"
        all["side"] = "\(direction == .input ? "capture" : "render")"
        logger.log(level: level, message(), metadata: all)
    }

    /// Logs the end of a run: its error, or a stop with its figures; a warning when it had xruns.
    func logEnd(_ failure: MediaDevicesError?) {
        guard logger != nil else { return }
        let figures = statistics
        let counts: Logger.Metadata = ["periods": "\(figures.periods)", "xruns": "\(figures.xruns)"]
        if let failure {
            log(.error, "ended: \(failure)", counts.merging(["code": "\(failure.code)"]) { $1 })
        } else {
            log(.info, "stopped", counts)
        }
        if figures.xruns > 0 { log(.warning, "xruns", counts) }
    }
}

extension AudioDriver {
    /// The logger of both sides (see ``AudioDriverSide/logger``); setting it sets both.
    public var logger: Logger? {
        get { capture.logger }
        set {
            capture.logger = newValue
            render.logger = newValue
        }
    }
}
