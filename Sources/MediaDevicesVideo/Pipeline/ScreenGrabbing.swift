import MediaDevicesCore
/// What one grab of a screen gave.
enum ScreenGrabOutcome: Equatable {
    /// A frame was lent to the body.
    case delivered
    /// Nothing to show (the output is off or between framebuffers): a sequence gap.
    case nothingToShow
    /// The screen has not changed since the last frame (X11 damage): no frame, no gap, counted
    /// in `CaptureStatistics.unchangedFrames`.
    case unchanged
}

/// One backend's grabber behind ``ScreenSource`` (KMS: `ScreenGrabber`, X11: `X11ScreenGrabber`,
/// the portal: `PortalScreenGrabber`):
/// grabs its screen, cut to a region and with the cursor if asked, and lends each grab as a
/// frame. Runs on one thread at a time (the capture thread, or the control thread while not
/// capturing); steady state allocates no pixel buffers.
protocol ScreenGrabbing: AnyObject {
    /// The screen grabbed.
    var screen: Screen { get }

    /// Grabs the screen as it is now and lends it to `body` as a frame stamped `timestamp`.
    /// With `onlyIfChanged`, a backend that tracks damage returns `.unchanged` instead of
    /// lending the same picture again; without it, it lends the picture it holds.
    func grab(timestamp: MonotonicInstant, sequence: UInt32, onlyIfChanged: Bool, _ body: (VideoFrame) -> Void) throws(MediaDevicesError) -> ScreenGrabOutcome

    /// A descriptor that becomes readable when the screen may have changed, for a backend that
    /// is told of changes (the portal's PipeWire stream, X11 DAMAGE events): after a frame or
    /// an unchanged grab the capture thread sleeps on it instead of waking at every deadline.
    /// `nil` (KMS; X11 with the cursor, whose moves send no event): grab at every deadline.
    var changeDescriptor: Int32? { get }

    /// Whether a change was already received that `changeDescriptor` will not announce (X11:
    /// events libxcb read along with a reply). Checked before sleeping on it.
    func hasQueuedChange() throws(MediaDevicesError) -> Bool

    /// A run's capture thread now grabs, sleeping on `wake` (`nil`: the run ended), for a backend
    /// whose lent buffers go back through the grabbing thread (the portal's PipeWire buffers): a
    /// frame given back from another thread signals `wake`.
    func attachRun(wake: WakeUpEvent?)

    /// On the capture thread at the start of each step, before it may sleep: takes back what
    /// sequences gave back (the portal returns lent buffers to its stream).
    func settleLeases()
}

extension ScreenGrabbing {
    /// Default: no change notification; grabs are paced.
    var changeDescriptor: Int32? { nil }

    /// Default: nothing is held back.
    func hasQueuedChange() throws(MediaDevicesError) -> Bool { false }

    /// Default: lent frames need no thread to come back (X11's segments, KMS's DMA-BUFs).
    func attachRun(wake: WakeUpEvent?) {}

    /// Default: nothing to take back.
    func settleLeases() {}
}
