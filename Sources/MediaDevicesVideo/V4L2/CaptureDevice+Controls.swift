import MediaDevicesCore
/// Camera controls (brightness, exposure, focus, white balance, zoom, ... and every other control
/// the driver exposes), as AVCaptureDevice, libcamera's ControlList and `v4l2-ctl -l` give them.
/// Each call opens the node for itself, so controls work while another source (or process)
/// streams from it, from any thread, without stopping the stream.
extension CaptureDevice {
    /// Every control the driver exposes, grouped by class in the driver's order, with menus and
    /// current values. The corresponding ioctls are `VIDIOC_QUERY_EXT_CTRL`,
    /// `VIDIOC_QUERYMENU` and `VIDIOC_G_EXT_CTRLS`. A camera only PipeWire offers lists its
    /// node's controls, read again from the session (``PipeWireCameraNode/controls``).
    public func controls() throws(MediaDevicesError) -> [CameraControl] {
        if let node = onlyPipeWireNode { return try node.controlsWithValues() }
        return try V4L2Device(path: path).queryControls()
    }

    /// The standard control `id` with its current value, or nil when the driver has none.
    public func control(_ id: CameraControlID) throws(MediaDevicesError) -> CameraControl? {
        try controls()[id]
    }

    /// Sets the controls as one request: all of them or, when any cannot be set (out of range,
    /// read-only, inactive, unknown), none, with an error naming it and what it takes. The
    /// corresponding ioctls are `VIDIOC_TRY_EXT_CTRLS` and `VIDIOC_S_EXT_CTRLS`. A camera only
    /// PipeWire offers sets them through its node's Props as ``PipeWireCameraSource/setControls(_:)``.
    public func setControls(_ settings: [ControlSetting]) throws(MediaDevicesError) {
        if let node = onlyPipeWireNode { return try node.apply(settings) }
        let device = try V4L2Device(path: path)
        try ControlWriter(device: device, controls: try device.queryControls()).apply(settings)
    }

    /// Sets one standard control.
    public func setControl(_ id: CameraControlID, to value: Int64) throws(MediaDevicesError) {
        try setControls([ControlSetting(id, value)])
    }

    /// Sets every writable control to its default: automatic modes first, then the values that
    /// are not governed by one. Returns the keys of controls it left alone (inactive ones, and
    /// string and array controls, whose default is not one number).
    @discardableResult
    public func resetControls() throws(MediaDevicesError) -> [String] {
        let restorable = try controls().filter { $0.isRestorable }
        let defaults = restorable.filter { $0.type.isInteger }.map { ControlEntry(control: $0, value: .integer($0.defaultValue)) }
        return try restore(defaults) + restorable.filter { !$0.type.isInteger }.map(\.key)
    }

    /// Changes to the controls as they happen (value, range and flags), including those made
    /// by other processes. The corresponding ioctls are `VIDIOC_SUBSCRIBE_EVENT` with
    /// `V4L2_EVENT_CTRL` and `VIDIOC_DQEVENT`. A camera only PipeWire offers reports them as
    /// ``PipeWireCameraSource/controlChanges()`` does (`.notFound` where PipeWire cannot say).
    ///
    /// The sequence has its own file descriptor and thread, subscribed to every control. It ends
    /// when the reading task is cancelled, or when the sequence and its iterator are dropped:
    ///
    /// ```swift
    /// let watching = Task {
    ///     for await change in try camera.controlChanges() { print(change) }
    /// }
    /// …
    /// watching.cancel()   // stops watching
    /// ```
    public func controlChanges() throws(MediaDevicesError) -> some AsyncSequence<ControlChange, Never> & Sendable {
        try controlWatch()
    }

    /// ``controlChanges()`` as its concrete type, which the command-line tool and the tests stop.
    package func controlWatch() throws(MediaDevicesError) -> ControlChanges {
        if let node = onlyPipeWireNode { return try node.controlChanges() }
        return try ControlChanges(path: path)
    }

    /// The writable controls' values, to restore later (after a replug, on the next start).
    public func controlProfile() throws(MediaDevicesError) -> ControlProfile {
        let entries = try controls().filter { $0.isRestorable && $0.value != .none }.map { ControlEntry(control: $0, value: $0.value) }
        return ControlProfile(uniqueID: uniqueID, name: name, controls: entries)
    }

    /// Restores a profile saved from this camera (same `uniqueID`): automatic modes first, then the values they leave active. Returns the keys it skipped
    /// because they are inactive under the restored modes, or unknown to this driver.
    @discardableResult
    public func restoreControls(_ profile: ControlProfile) throws(MediaDevicesError) -> [String] {
        guard profile.uniqueID == uniqueID else {
            throw MediaDevicesError(.invalidValue, device: path, operation: "restore controls",
                                    detail: "The profile is for \(profile.uniqueID), not this camera (\(uniqueID))")
        }
        return try restore(profile.controls)
    }

    /// Sets `entries` in dependency order: the automatic modes as one request,
    /// then, re-read, every other entry whose control is writable now as another.
    private func restore(_ entries: [ControlEntry]) throws(MediaDevicesError) -> [String] {
        if let node = onlyPipeWireNode { return try node.restore(entries) }
        let device = try V4L2Device(path: path)
        let before = try device.queryControls()
        let masters = entries.filter { before[named: $0.key]?.isAutomaticMode == true }
        try ControlWriter(device: device, controls: before).apply(masters.map(\.setting))
        let after = try device.queryControls()
        var skipped: [String] = []
        var rest: [ControlSetting] = []
        for entry in entries where !masters.contains(entry) {
            guard let control = after[named: entry.key], control.isWritable else { skipped.append(entry.key); continue }
            rest.append(entry.setting)
        }
        try ControlWriter(device: device, controls: after).apply(rest)
        return skipped
    }
}

extension CaptureDevice {
    /// The PipeWire node controls go through: the first of a camera without a V4L2 route.
    var onlyPipeWireNode: PipeWireCameraNode? { backends.contains(.v4l2) ? nil : pipeWireNodes.first }
}

extension CameraControl {
    /// Whether setting it may change which other controls are active: the driver flags it
    /// `update` (vivid's clusters), or it is one of the standard automatic modes (uvcvideo does
    /// not flag its masters).
    var isAutomaticMode: Bool {
        flags.contains(.update) || Self.automaticModes.contains(id)
    }

    /// Exposure, white balance, focus, gain and hue automatic modes.
    static let automaticModes: Set<UInt32> = [CameraControlID.exposureAuto.rawValue, CameraControlID.whiteBalanceAutomatic.rawValue,
                                              CameraControlID.focusAuto.rawValue, 0x0098_0912, 0x0098_0919]

    /// Whether a profile keeps it: a value a user sets (not a button, class, read-only or
    /// write-only control).
    var isRestorable: Bool {
        type != .button && type != .controlClass && flags.isDisjoint(with: [.readOnly, .writeOnly, .disabled])
    }
}

extension CameraSource {
    /// The controls of the camera this source captures from (see ``CaptureDevice/controls()``);
    /// works while capturing.
    public func controls() throws(MediaDevicesError) -> [CameraControl] { try device.controls() }

    /// Sets controls on the camera this source captures from, all or none, without stopping
    /// the stream (see ``CaptureDevice/setControls(_:)``).
    public func setControls(_ settings: [ControlSetting]) throws(MediaDevicesError) { try device.setControls(settings) }
}
