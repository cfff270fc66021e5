import Logging
import MediaDevicesCore

extension ScreenSource {
    /// The X11 grabber of `screen`, or `.notFound` naming the package trait X11 in a build without it.
    static func makeX11Grabber(screen: Screen, region: Rect?, showsCursor: Bool) throws(MediaDevicesError) -> any ScreenGrabbing {
        #if X11
        try X11ScreenGrabber(screen: screen, region: region, showsCursor: showsCursor)
        #else
        throw BuildTraits.missingX11(device: screen.uniqueID, operation: "open X11 screen")
        #endif
    }

    /// The portal grabber of `screen`, or `.notFound` naming the package trait PipeWire in a build
    /// without it; the portal's request and answer go to `log`; the source's capture threads are
    /// `owner`'s.
    static func makePortalGrabber(screen: Screen, region: Rect?, showsCursor: Bool, options: PortalOptions, owner: AnyObject,
                                  log: (Logger.Level, Logger.Message, Logger.Metadata) -> Void) throws(MediaDevicesError) -> any ScreenGrabbing {
        #if PipeWire
        try PortalScreenGrabber(screen: screen, region: region, showsCursor: showsCursor, options: options, owner: owner, log: log)
        #else
        throw BuildTraits.missingPipeWire(device: screen.uniqueID, operation: "open portal screen")
        #endif
    }
}
