import MediaDevicesCore

extension CaptureBackend {
    /// Whether this build of MediaDevices has the backend: `.pipewire` and `.portal` need the
    /// package trait `PipeWire` (on by default); `.v4l2` is always there.
    public var isBuiltIn: Bool {
        switch self {
        case .v4l2: true
        case .pipewire, .portal: BuildTraits.pipeWire
        }
    }
}

extension ScreenBackend {
    /// Whether this build of MediaDevices has the backend: `.x11` needs the package trait `X11`,
    /// `.portal` the trait `PipeWire` (both on by default); `.kms` is always there.
    public var isBuiltIn: Bool {
        switch self {
        case .kms: true
        case .x11: BuildTraits.x11
        case .portal: BuildTraits.pipeWire
        }
    }
}

/// The package traits this module was built with, and the error for a backend left out.
package enum BuildTraits {
    /// The `PipeWire` trait: PipeWire cameras, the Camera and ScreenCast portals.
    package static var pipeWire: Bool {
        #if PipeWire
        true
        #else
        false
        #endif
    }

    /// The `X11` trait: X server screens.
    package static var x11: Bool {
        #if X11
        true
        #else
        false
        #endif
    }

    /// `.notFound` for `operation` on `backend`, whose package trait `trait` this build left out.
    package static func missing(_ backend: String, trait: String, packages: String, device: String?,
                                operation: String) -> MediaDevicesError {
        MediaDevicesError(.notFound, device: device, operation: operation,
                          detail: "This build of MediaDevices has no \(backend) backend: build it with the package trait \(trait) (on by default), which needs \(packages)")
    }

    /// `missing` for the PipeWire backends.
    package static func missingPipeWire(device: String?, operation: String) -> MediaDevicesError {
        missing("PipeWire", trait: "PipeWire", packages: "libpipewire-0.3-dev and libsystemd-dev", device: device, operation: operation)
    }

    /// `missing` for the X11 backend.
    package static func missingX11(device: String?, operation: String) -> MediaDevicesError {
        missing("X11", trait: "X11", packages: "libxcb1-dev, libxcb-shm0-dev, libxcb-randr0-dev, libxcb-damage0-dev and libxcb-xfixes0-dev",
                device: device, operation: operation)
    }
}
