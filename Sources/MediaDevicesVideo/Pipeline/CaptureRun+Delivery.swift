import MediaDevicesCore

extension CaptureRun {
    /// A video source's run: its thread is marked as `delivery`'s, and its end (unless it is
    /// restarted) ends the delivery, so consumers hear `captureDidStop` and sequences end.
    convenience init(name: String, delivery: FrameDelivery,
                     loop: @escaping @Sendable (WakeUpEvent, _ shouldStop: @escaping @Sendable () -> Bool) -> MediaDevicesError?,
                     cleanup: @escaping @Sendable (MediaDevicesError?) -> Void) throws(MediaDevicesError) {
        try self.init(name: name, owner: delivery, loop: loop, cleanup: cleanup) { delivery.finish(error: $0) }
    }
}
