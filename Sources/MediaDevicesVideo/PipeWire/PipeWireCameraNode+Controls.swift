import MediaDevicesCore
/// Controls of a PipeWire camera node, read from its PropInfo and Props params and set through
/// Props, with the same resolution and checks as V4L2 controls (`ControlResolver`).
extension PipeWireCameraNode {
    /// The label messages name the node by (`pipewire:42`, its `object.serial`).
    var label: String { "pipewire:\(serial)" }

    /// This node as the session lists it now (its controls' current values); `.notFound` when
    /// the node is gone (same global id and serial).
    func current() throws -> PipeWireCameraNode {
        #if !PipeWire
        throw BuildTraits.missingPipeWire(device: label, operation: "PropInfo")
        #else
        guard let now = try PipeWireCameraList.read(remote: remote).first(where: { $0.id == id && $0.serial == serial }) else {
            throw MediaDevicesError(.notFound, device: label, operation: "PropInfo",
                                    detail: "The PipeWire camera node \(name) is gone; list the cameras again")
        }
        return now
        #endif
    }

    /// Sets `settings`: all are resolved and checked against the node's controls as the session
    /// lists them now (nothing is set when one is unknown or out of range), then each goes to
    /// the node as a Props param, in order. Throws `.io` when PipeWire refuses one (those before
    /// it stay set: Props has no all-or-nothing request).
    func apply(_ settings: [ControlSetting]) throws {
        let resolved = try ControlResolver(device: label, controls: try current().controls).resolve(settings)
        #if PipeWire
        for setting in resolved {
            try PipeWireCameraList.setControl(setting.control, to: setting.value.integer ?? 0, nodeID: id, remote: remote, device: label)
        }
        #else
        if !resolved.isEmpty { throw BuildTraits.missingPipeWire(device: label, operation: "Props") }
        #endif
    }

    /// Restores `entries` (a saved profile's): the ones this node has a control for are set as
    /// `apply` sets them; returns the keys of the others.
    func restore(_ entries: [ControlEntry]) throws -> [String] {
        let controls = try current().controls
        let known = entries.filter { controls[named: $0.key] != nil }
        try apply(known.map(\.setting))
        return entries.filter { controls[named: $0.key] == nil }.map(\.key)
    }
}
