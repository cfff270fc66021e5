import CPipeWire
import Glibc

/// Reads a PipeWire session's camera nodes (`cpw_cameras_read` of the CPipeWire shim: the
/// registry's Video/Source nodes with media.role Camera, their properties and their
/// `EnumFormat` params) over a connection of its own, closed before it returns.
enum PipeWireCameraList {
    /// The camera nodes of the session at `fd` (taken), or of the default remote when `fd` is nil
    /// (`PIPEWIRE_REMOTE`, else `$XDG_RUNTIME_DIR/pipewire-0`). Throws `.notFound` when no
    /// PipeWire answers, `.timeout` when it does not answer within `timeout`.
    static func read(fd: Int32? = nil, timeout: Duration = .seconds(5)) throws -> [PipeWireCameraNode] {
        var message = [CChar](repeating: 0, count: 256)
        let milliseconds = Int32(clamping: timeout.components.seconds * 1000 + timeout.components.attoseconds / 1_000_000_000_000_000)
        guard let list = cpw_cameras_read(fd ?? -1, milliseconds, &message, message.count) else {
            let why = String(decoding: message.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            let remote = fd != nil ? "the given remote" : (getenv("PIPEWIRE_REMOTE").map { String(cString: $0) } ?? "$XDG_RUNTIME_DIR/pipewire-0")
            if why.contains("did not answer") {
                throw MediaDevicesError(.timeout, device: remote, operation: "pw_core_sync", errno: ETIMEDOUT,
                                        detail: "PipeWire did not list its nodes within \(timeout) (\(why)); is the session busy or stopped?")
            }
            throw MediaDevicesError(.notFound, device: remote, operation: "pw_context_connect",
                                    detail: "No PipeWire session to list cameras from (\(why)); start pipewire and wireplumber (a desktop session does), or set PIPEWIRE_REMOTE")
        }
        defer { cpw_cameras_free(list) }
        var nodes: [PipeWireCameraNode] = []
        for index in 0..<cpw_cameras_count(list) {
            var properties: [String: String] = [:]
            for property in 0..<cpw_cameras_property_count(list, index) {
                var key: UnsafePointer<CChar>?, value: UnsafePointer<CChar>?
                cpw_cameras_property(list, index, property, &key, &value)
                if let key, let value { properties[String(cString: key)] = String(cString: value) }
            }
            var entries: [cpw_format_entry] = []
            for format in 0..<cpw_cameras_format_count(list, index) {
                entries.append(cpw_cameras_format(list, index, format).pointee)
            }
            let formats = PipeWireFormats(entries)
            nodes.append(PipeWireCameraNode(id: cpw_cameras_id(list, index),
                                            serial: UInt64(properties["object.serial"] ?? "") ?? 0,
                                            properties: properties, formats: formats.formats,
                                            givesFrameRates: formats.givesFrameRates, unmappedFormats: formats.unmapped))
        }
        return nodes.sorted { $0.serial < $1.serial }
    }
}
