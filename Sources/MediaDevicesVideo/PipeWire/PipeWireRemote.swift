import MediaDevicesCore
/// Which PipeWire connection reaches a camera node: the session's default remote
/// (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`), or a remote the Camera portal opens
/// (sandboxed applications; one `OpenPipeWireRemote` per connection).
enum PipeWireRemote: Sendable, Hashable {
    /// The session's default remote.
    case session
    /// The Camera portal on the session bus at this address (the environment's when `nil`).
    case cameraPortal(busAddress: String?)

    /// A descriptor for a new connection (taken by whoever connects over it), or -1 for the
    /// default remote (the shim connects itself). Throws what `OpenPipeWireRemote` throws.
    func open() throws(MediaDevicesError) -> Int32 {
        switch self {
        case .session: -1
        case .cameraPortal(let address):
            #if PipeWire
            try CameraPortal(busAddress: address).openPipeWireRemote()
            #else
            throw BuildTraits.missingPipeWire(device: "portal", operation: "OpenPipeWireRemote")
            #endif
        }
    }
}
