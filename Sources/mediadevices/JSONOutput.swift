import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// A device in `list --json`.
struct CameraJSON: Encodable {
    let index: Int
    let path: String
    let name: String
    let driver: String
    let busInfo: String
    let uniqueID: String
    let position: String
    let multiplanar: Bool
    /// A virtual camera (a v4l2loopback device, or a node a VirtualCamera publishes): `CaptureDevice.isVirtual`.
    let virtual: Bool
    let capabilities: String
    let routes: [RouteJSON]
    /// `CaptureDevice.group` (`null`: none).
    let group: String?

    /// One way to reach the camera: `{"backend": "v4l2", "path": …}` or `{"backend": "pipewire",
    /// "node": ID, "serial": N, "name": …, "path": DEVICE?}`.
    struct RouteJSON: Encodable {
        let backend: String
        let path: String?
        let node: UInt32?
        let serial: UInt64?
        let name: String?
    }

    init(index: Int, _ device: CaptureDevice) {
        routes = device.routes.map { route in
            switch route {
            case .v4l2(let path): RouteJSON(backend: "v4l2", path: path, node: nil, serial: nil, name: nil)
            case .pipewire(let node):
                RouteJSON(backend: "pipewire", path: node.v4l2Path ?? node.libcameraPath, node: node.id, serial: node.serial, name: node.name)
            }
        }
        self.index = index
        path = device.path
        name = device.name
        driver = device.driver
        busInfo = device.busInfo
        uniqueID = device.uniqueID
        position = device.position.rawValue
        multiplanar = device.isMultiplanar
        virtual = device.isVirtual
        capabilities = String(format: "0x%08x", device.capabilities)
        group = device.group
    }
}

/// An exact fraction in JSON: `{"numerator": 1, "denominator": 30}`.
struct FractionJSON: Encodable {
    let numerator: Int
    let denominator: Int
    init(_ value: Fraction) { numerator = value.numerator; denominator = value.denominator }
}

/// A size in JSON.
struct SizeJSON: Encodable {
    let width: Int
    let height: Int
    init(_ size: Size) { width = size.width; height = size.height }
}

/// One frame-interval entry in `formats --json`.
struct FrameRateJSON: Encodable {
    let type: String
    /// Discrete: the interval; stepwise/continuous: the shortest interval.
    let interval: FractionJSON
    let maxInterval: FractionJSON?
    let step: FractionJSON?
    init(_ range: FrameRateRange) {
        type = range.kind.rawValue
        interval = FractionJSON(range.minFrameInterval)
        maxInterval = range.kind == .discrete ? nil : FractionJSON(range.maxFrameInterval)
        step = range.intervalStep.map(FractionJSON.init)
    }
}

/// One frame-size entry in `formats --json`.
struct FrameSizeJSON: Encodable {
    let type: String
    let width: Int?
    let height: Int?
    let min: SizeJSON?
    let max: SizeJSON?
    let step: SizeJSON?
    let frameRates: [FrameRateJSON]
    init(_ option: FrameSizeOption) {
        frameRates = option.frameRateRanges.map(FrameRateJSON.init)
        switch option.sizes {
        case .discrete(let size):
            type = "discrete"; width = size.width; height = size.height; min = nil; max = nil; step = nil
        case .stepwise(let lo, let hi, let st):
            type = "stepwise"; width = nil; height = nil; min = SizeJSON(lo); max = SizeJSON(hi); step = SizeJSON(st)
        case .continuous(let lo, let hi):
            type = "continuous"; width = nil; height = nil; min = SizeJSON(lo); max = SizeJSON(hi); step = nil
        }
    }
}

/// One pixel format in `formats --json`.
struct FormatJSON: Encodable {
    let fourcc: String
    let name: String
    let description: String
    let compressed: Bool
    let emulated: Bool
    /// Whether the pixel pipeline converts it (to NV12, I420, ARGB, Y4M).
    let convertible: Bool
    let sizes: [FrameSizeJSON]
    init(_ format: CaptureFormat) {
        fourcc = format.pixelFormat.fourCC.description
        name = format.pixelFormat.name
        description = format.description
        compressed = format.isCompressed
        emulated = format.isEmulated
        convertible = format.isConvertible
        sizes = format.frameSizes.map(FrameSizeJSON.init)
    }
}

/// A negotiated video format in `capture --json`.
struct VideoFormatJSON: Encodable {
    let fourcc: String
    let name: String
    let width: Int
    let height: Int
    let bytesPerRow: [Int]
    let bufferSizes: [Int]
    init(_ format: VideoFormat) {
        fourcc = format.pixelFormat.fourCC.description
        name = format.pixelFormat.name
        width = format.width
        height = format.height
        bytesPerRow = format.bytesPerRow
        bufferSizes = format.bufferSizes
    }
}

/// An adjustment in `capture --json`.
struct AdjustmentJSON: Encodable {
    let field: String
    let requested: String
    let chosen: String
    let reason: String
    init(_ adjustment: FormatAdjustment) {
        field = adjustment.field.rawValue
        requested = adjustment.requested
        chosen = adjustment.chosen
        reason = adjustment.reason
    }
}
