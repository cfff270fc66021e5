import MediaDevicesCore
/// Controls of a PipeWire camera node, read from its PropInfo and Props params and set through
/// Props, with the same resolution and checks as V4L2 controls (`ControlResolver`).
extension PipeWireCameraNode {
    /// The label messages name the node by (`pipewire:42`, its `object.serial`).
    var label: String { "pipewire:\(serial)" }

    /// This node as the session lists it now (its controls' current values); `.notFound` when
    /// the node is gone (same global id and serial).
    func current() throws(MediaDevicesError) -> PipeWireCameraNode {
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
    func apply(_ settings: [ControlSetting]) throws(MediaDevicesError) {
        let resolved = try ControlResolver(device: label, controls: try current().controls).resolve(settings)
        #if PipeWire
        for setting in resolved {
            try PipeWireCameraList.setControl(setting.control, to: setting.value, nodeID: id, remote: remote, device: label)
        }
        #else
        if !resolved.isEmpty { throw BuildTraits.missingPipeWire(device: label, operation: "Props") }
        #endif
    }

    /// This node's controls as the session lists them now, with current values. PipeWire
    /// 0.3.65's nodes report none (their Props carry no control values) and send no event when
    /// a control changes, so where the node wraps a V4L2 device this process may open
    /// (`api.v4l2.path`), the values are read from that device, the one the node drives; a
    /// value neither gives stays `.none`.
    func controlsWithValues() throws(MediaDevicesError) -> [CameraControl] {
        let controls = try current().controls
        guard controls.contains(where: { $0.value == .none }), let path = v4l2Path,
              let device = try? V4L2Device(path: path), let driver = try? device.queryControls() else { return controls }
        let byName = Dictionary(driver.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return controls.map { control in
            guard control.value == .none, let value = byName[control.name]?.value, value != .none else { return control }
            return CameraControl(id: control.id, name: control.name, type: control.type, minimum: control.minimum,
                                 maximum: control.maximum, step: control.step, defaultValue: control.defaultValue,
                                 flags: control.flags, menu: control.menu, value: value)
        }
    }

    /// Changes to this node's controls as they happen, from any program (`setControls` through
    /// PipeWire, `pw-cli set-param`, `v4l2-ctl` on the device), as the same `ControlChanges`
    /// sequence the V4L2 path gives, with the node's control ids and keys. PipeWire 0.3.65's
    /// nodes announce no control change (no Props or PropInfo event), so the changes are
    /// watched on the V4L2 device the node wraps (`V4L2_EVENT_CTRL`), matched to the node's
    /// controls by name. Throws `.notFound` for a node without a V4L2 device this process may
    /// open (libcamera nodes, a sandboxed application's), naming why.
    func controlChanges() throws(MediaDevicesError) -> ControlChanges {
        let controls = try current().controls
        guard let path = v4l2Path, (try? V4L2Device(path: path)) != nil else {
            throw MediaDevicesError(.notFound, device: label, operation: "control changes",
                                    detail: "PipeWire's camera node \(name) sends no event when a control changes (PipeWire 0.3.65 reports neither changes nor current values), and \(v4l2Path.map { "its V4L2 device \($0) does not open in this process" } ?? "it wraps no V4L2 device to watch instead"); read controls() again instead")
        }
        let byName = Dictionary(controls.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
        return try ControlChanges(path: path) { driver in
            var relabelled: [UInt32: CameraControl] = [:]
            for control in driver { if let node = byName[control.name] { relabelled[control.id] = node } }
            return relabelled
        }
    }

    /// Restores `entries` (a saved profile's): the ones this node has a control for are set as
    /// `apply` sets them; returns the keys of the others.
    func restore(_ entries: [ControlEntry]) throws(MediaDevicesError) -> [String] {
        let controls = try current().controls
        let known = entries.filter { controls[named: $0.key] != nil }
        try apply(known.map(\.setting))
        return entries.filter { controls[named: $0.key] == nil }.map(\.key)
    }
}
