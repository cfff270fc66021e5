import MediaDevicesCore
import Foundation
/// The writable controls of one camera and their values, saved as JSON and restored after a
/// replug (``CaptureDevice/controlProfile()``, `restoreControls(_:)`), keyed by the camera's
/// `uniqueID`.
public struct ControlProfile: Sendable, Hashable, Codable {
    /// The camera it was saved from.
    public let uniqueID: String
    /// The camera's name then.
    public let name: String
    /// The values, in the driver's order.
    public let controls: [ControlEntry]

    /// A profile.
    public init(uniqueID: String, name: String, controls: [ControlEntry]) {
        self.uniqueID = uniqueID
        self.name = name
        self.controls = controls
    }
}

/// One control's saved value: its `v4l2-ctl` name, id and value.
public struct ControlEntry: Sendable, Hashable, Codable {
    /// The control's key (`brightness`).
    public let key: String
    /// The control's id.
    public let id: UInt32
    /// Its value.
    public let value: ControlValue

    /// An entry for `control` with `value`.
    public init(control: CameraControl, value: ControlValue) {
        key = control.key
        id = control.id
        self.value = value
    }

    /// The setting that restores it.
    var setting: ControlSetting { ControlSetting(id: id, value: value) }
}

/// Several cameras' profiles in one file, keyed by `uniqueID` (what `mediadevices controls
/// --save/--load` read and write).
package struct ControlProfiles: Sendable, Hashable, Codable {
    /// The profiles by `uniqueID`.
    package var profiles: [String: ControlProfile]

    /// Profiles.
    package init(profiles: [String: ControlProfile] = [:]) { self.profiles = profiles }

    /// Adds or replaces `profile`.
    package mutating func store(_ profile: ControlProfile) { profiles[profile.uniqueID] = profile }

    /// Writes the profiles to `path` as pretty-printed JSON (what `mediadevices controls --save`
    /// writes), whole or not at all: a temporary file beside it, synced and renamed (mode 0644
    /// less the umask). `operation` names the write in errors: `.notFound` for a missing folder,
    /// `.permissionDenied` for a read-only one.
    package func write(to path: String, operation: String = "save control profiles") throws(MediaDevicesError) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
        let encoded = try MediaDevicesError.catching(device: path, operation: operation) { try encoder.encode(self) }
        try AtomicFile.write(Array(encoded), to: path, operation: operation)
    }
}
