import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices controls DEVICE`: a camera's controls (brightness, exposure, focus, …) as
/// `v4l2-ctl -L` lists them; set, reset, save, load and watch them.
struct ControlsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "controls",
        abstract: "List a camera's controls (like v4l2-ctl -L); set, reset, save, load or watch them.",
        discussion: """
            Without options, prints every control grouped by class, with menus. The actions run in \
            this order: --reset, --load, --set (all --set values as one request: all or none), \
            --save, then --watch. Names are v4l2-ctl's (brightness, auto_exposure); menu values \
            by index or name, booleans as 0/1/true/false, arrays comma-separated. With --watch, \
            "controls: watching …" on standard error says when changes are being received.

            """ + Examples.controls)

    @Argument(help: "A camera: a device path, an index from `list`, a uniqueID, or a PipeWire camera (`pipewire:SERIAL` or `pipewire:NODE_NAME`).")
    var device: String

    @OptionGroup var backendOption: CameraBackendOption

    @Flag(help: "Print JSON (see docs/cli.md for the shape; one object per line with --watch).")
    var json = false

    @Option(name: .customLong("set"), help: ArgumentHelp("Set a control, NAME=VALUE (repeatable; applied together, all or none).", valueName: "NAME=VALUE"))
    var settings: [String] = []

    @Flag(help: "Set every writable control to its default (automatic modes first).")
    var reset = false

    @Option(help: ArgumentHelp("Save this camera's writable controls into FILE (a JSON file of profiles keyed by uniqueID; other cameras' profiles are kept).", valueName: "FILE"))
    var save: String?

    @Option(help: ArgumentHelp("Restore this camera's controls from FILE (saved with --save).", valueName: "FILE"))
    var load: String?

    @Flag(help: "Print each change (value, flags, range) as it happens, also those other processes make.")
    var watch = false

    @OptionGroup(title: "With --watch") var streaming: StreamingOptions

    func validate() throws {
        for setting in settings where ControlSetting(parsing: setting) == nil {
            throw ValidationError("--set takes NAME=VALUE, e.g. brightness=10 (got '\(setting)')")
        }
        if !watch && (streaming.count != nil || streaming.timeout != nil) {
            throw ValidationError("--count and --timeout go with --watch")
        }
    }

    /// Whether the command changes or saves anything (then it prints what it did, not the table).
    private var hasActions: Bool { reset || load != nil || !settings.isEmpty || save != nil }

    func run() throws {
        try reportingErrors(json: json) {
            let camera = try Self.camera(device, backend: backendOption.backend)
            var skipped: [String]?
            var messages: [String] = []
            if reset {
                let left = try camera.resetControls()
                skipped = left
                messages.append("reset the controls of \(camera.path) to their defaults"
                                + Self.skippedText(left, reason: "inactive now, or strings and arrays"))
            }
            if let load {
                let (profile, left) = try Self.load(load, into: camera)
                skipped = (skipped ?? []) + left
                messages.append("restored \(profile.controls.count - left.count) controls of \(camera.path) from \(load)"
                                + Self.skippedText(left, reason: "inactive under the restored automatic modes, or unknown to this driver"))
            }
            if !settings.isEmpty {
                let parsed = settings.compactMap(ControlSetting.init(parsing:))
                try camera.setControls(parsed)
                messages.append("set " + parsed.map(\.description).joined(separator: ", "))
            }
            if let save {
                let profile = try Self.save(camera, to: save)
                messages.append("saved \(profile.controls.count) controls of \(camera.path) (\(camera.uniqueID)) to \(save)")
            }
            if watch {
                if !json { messages.forEach { print($0) } }
                try watchChanges(camera)
                return
            }
            if json {
                let controls = try camera.controls()
                printJSON(ControlsJSON(camera, controls, skipped: skipped))
            } else if hasActions {
                messages.forEach { print($0) }
            } else {
                print(Self.table(try camera.controls()), terminator: "")
            }
        }
    }

    /// Prints each change until Ctrl-C, `--count` or `--timeout`.
    private func watchChanges(_ camera: CaptureDevice) throws {
        let changes = try camera.controlWatch()
        FileHandle.standardError.write(Data("controls: watching \(camera.path) (\(camera.uniqueID))\n".utf8))
        let json = self.json
        streaming.forEach(changes) { change in
            if json { printJSON(ControlChangeJSON(change), compact: true) } else { print(change) }
        }
        changes.stop()
    }

    /// The camera `text` names; `.notFound` for anything else.
    static func camera(_ text: String, backend: CaptureBackend? = nil) throws -> CaptureDevice {
        guard case .camera(let camera) = try DeviceSelection.resolve(text, cameraBackend: backend) else {
            throw MediaDevicesError(.notFound, device: text, operation: "controls",
                                    detail: "Only cameras have controls; give a camera's path, index from `mediadevices list`, or uniqueID")
        }
        return camera
    }

    private static func skippedText(_ keys: [String], reason: String) -> String {
        keys.isEmpty ? "" : "; skipped (\(reason)): " + keys.joined(separator: ", ")
    }

    // MARK: Profiles

    /// Reads the profiles file at `path`; nil when there is no such file.
    private static func readProfiles(_ path: String, operation: String) throws -> ControlProfiles? {
        guard FileManager.default.fileExists(atPath: path) else { return nil }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw MediaDevicesError(.permissionDenied, device: nil, operation: operation, detail: "\(path) cannot be read")
        }
        do {
            return try JSONDecoder().decode(ControlProfiles.self, from: data)
        } catch {
            throw MediaDevicesError(.invalidValue, device: nil, operation: operation,
                                    detail: "\(path) is not a control profile file written by `mediadevices controls --save` (\(error))")
        }
    }

    /// Merges the camera's profile into the file at `path` (creating it).
    private static func save(_ camera: CaptureDevice, to path: String) throws -> ControlProfile {
        var profiles = try readProfiles(path, operation: "controls --save") ?? ControlProfiles()
        let profile = try camera.controlProfile()
        profiles.store(profile)
        try profiles.write(to: path, operation: "controls --save")
        return profile
    }

    /// Restores the camera's profile from the file at `path`; returns it and the keys skipped.
    private static func load(_ path: String, into camera: CaptureDevice) throws -> (ControlProfile, [String]) {
        guard let profiles = try readProfiles(path, operation: "controls --load") else {
            throw MediaDevicesError(.notFound, device: nil, operation: "controls --load",
                                    detail: "\(path) does not exist; write it with `mediadevices controls \(camera.path) --save \(path)`")
        }
        guard let profile = profiles.profiles[camera.uniqueID] else {
            let others = profiles.profiles.keys.sorted()
            throw MediaDevicesError(.notFound, device: camera.path, operation: "controls --load",
                                    detail: "\(path) has no profile for this camera (\(camera.uniqueID)); it has "
                                        + (others.isEmpty ? "none" : others.joined(separator: ", "))
                                        + ". Save one with `mediadevices controls \(camera.path) --save \(path)`")
        }
        return (profile, try camera.restoreControls(profile))
    }

    // MARK: The table

    /// The controls as `v4l2-ctl -L` prints them: a header per class, one line per control,
    /// menu entries under menus.
    static func table(_ controls: [CameraControl]) -> String {
        var text = ""
        var currentClass: ControlClass?
        for control in controls {
            if control.type == .controlClass {
                text += "\n\(control.name)\n\n"
                currentClass = control.controlClass
                continue
            }
            if control.controlClass != currentClass {
                text += "\n\(control.controlClass)\n\n"
                currentClass = control.controlClass
            }
            text += line(control) + "\n"
            for entry in control.menu {
                if control.type == .integerMenu, let value = entry.value {
                    text += "\t\t\t\t\(entry.index): \(value) (0x\(String(UInt64(bitPattern: value), radix: 16)))\n"
                } else {
                    text += "\t\t\t\t\(entry.index): \(entry.name)\n"
                }
            }
        }
        return text
    }

    /// `   brightness 0x00980900 (int)    : min=0 max=255 step=1 default=128 value=128 flags=slider`.
    static func line(_ control: CameraControl) -> String {
        let key = String(repeating: " ", count: max(0, 31 - control.key.count)) + control.key
        let type = "(\(control.type))"
        var text = "\(key) \(hex(UInt64(control.id))) \(type)\(String(repeating: " ", count: max(0, 9 - type.count))):"
        let range = " min=\(control.minimum) max=\(control.maximum)"
        switch control.type {
        case .boolean: text += " default=\(control.defaultValue)"
        case .menu, .integerMenu: text += range + " default=\(control.defaultValue)"
        case .string: text += range + " step=\(control.step)"
        case .bitmask: text += " max=\(hex(UInt64(bitPattern: control.maximum))) default=\(hex(UInt64(bitPattern: control.defaultValue)))"
        case .button, .area: break
        case .float:
            if let range = control.floatRange { text += " min=\(range.minimum) max=\(range.maximum) default=\(range.defaultValue)" }
        case let type where type.isInteger || type.isCompound:
            text += range + " step=\(control.step) default=\(control.defaultValue)"
        default: text += " type=\(String(control.type.rawValue, radix: 16))"
        }
        if control.dimensions.isEmpty, let value = valueText(control) { text += " value=\(value)" }
        if !control.dimensions.isEmpty { text += " dims=" + control.dimensions.map { "[\($0)]" }.joined() }
        if !control.flags.names.isEmpty { text += " flags=" + control.flags.names.joined(separator: ", ") }
        return text
    }

    /// The value as v4l2-ctl prints it: menus with the entry's name, bitmasks in hex, strings
    /// quoted, areas as WxH; nil when there is none.
    private static func valueText(_ control: CameraControl) -> String? {
        switch control.value {
        case .none: return nil
        case .float(let value): return "\(value)"
        case .string(let text): return "'\(text)'"
        case .array(let elements):
            if control.type == .area, elements.count == 2 { return "\(elements[0])x\(elements[1])" }
            return elements.map(String.init).joined(separator: ",")
        case .integer(let value):
            switch control.type {
            case .bitmask: return hex(UInt64(bitPattern: value))
            case .menu:
                return control.menu.first { $0.index == value }.map { "\(value) (\($0.name))" } ?? "\(value)"
            case .integerMenu:
                guard let number = control.menu.first(where: { $0.index == value })?.value else { return "\(value)" }
                return "\(value) (\(number) 0x\(String(UInt64(bitPattern: number), radix: 16)))"
            default: return "\(value)"
            }
        }
    }

    /// `0x00980900`: at least eight hex digits.
    private static func hex(_ value: UInt64) -> String {
        let digits = String(value, radix: 16)
        return "0x" + String(repeating: "0", count: max(0, 8 - digits.count)) + digits
    }
}

/// A control's value in JSON: a number, a string, or an array of numbers.
struct ControlValueJSON: Encodable {
    let value: ControlValue

    /// The library's own JSON form of the value (as profiles store it).
    func encode(to encoder: Encoder) throws { try value.encode(to: encoder) }

    /// nil for `.none` (the field is left out).
    static func from(_ value: ControlValue) -> ControlValueJSON? {
        value == .none ? nil : ControlValueJSON(value: value)
    }
}

/// `controls DEVICE --json`.
struct ControlsJSON: Encodable {
    struct Control: Encodable {
        struct MenuEntry: Encodable {
            let index: Int64
            let name: String
            let value: Int64?
        }
        let id: UInt32
        let key: String
        let name: String
        let type: String
        let `class`: String
        let minimum: Int64
        let maximum: Int64
        let step: UInt64
        let `default`: Int64
        let value: ControlValueJSON?
        let flags: [String]
        let menu: [MenuEntry]?
        let dimensions: [UInt32]?
        /// A float control's range and default (its minimum, maximum and default above are 0).
        let floatRange: CameraControl.FloatRange?

        init(_ control: CameraControl, className: String) {
            id = control.id
            key = control.key
            name = control.name
            type = control.type.description
            `class` = className
            minimum = control.minimum
            maximum = control.maximum
            step = control.step
            `default` = control.defaultValue
            value = ControlValueJSON.from(control.value)
            flags = control.flags.names
            menu = control.type.isMenu ? control.menu.map { MenuEntry(index: $0.index, name: $0.name, value: $0.value) } : nil
            dimensions = control.dimensions.isEmpty ? nil : control.dimensions
            floatRange = control.floatRange
        }
    }

    let device: String
    let uniqueID: String
    let controls: [Control]
    /// After --reset or --load: the controls left alone.
    let skipped: [String]?

    /// The controls without the class headers, each with its class's name as the driver gives it.
    init(_ camera: CaptureDevice, _ controls: [CameraControl], skipped: [String]? = nil) {
        device = camera.path
        uniqueID = camera.uniqueID
        var classNames: [ControlClass: String] = [:]
        for control in controls where control.type == .controlClass { classNames[control.controlClass] = control.name }
        self.controls = controls.filter { $0.type != .controlClass }.map {
            Control($0, className: classNames[$0.controlClass] ?? $0.controlClass.description)
        }
        self.skipped = skipped
    }
}

/// One line of `controls DEVICE --watch --json`.
struct ControlChangeJSON: Encodable {
    let id: UInt32
    let key: String
    let changes: [String]
    let value: ControlValueJSON?
    let flags: [String]
    let minimum: Int64
    let maximum: Int64
    let step: UInt64
    let `default`: Int64

    init(_ change: ControlChange) {
        id = change.id
        key = change.key
        changes = [(ControlChange.Changes.value, "value"), (.flags, "flags"), (.range, "range")]
            .filter { change.changes.contains($0.0) }.map(\.1)
        value = ControlValueJSON.from(change.value)
        flags = change.flags.names
        minimum = change.minimum
        maximum = change.maximum
        step = change.step
        `default` = change.defaultValue
    }
}
