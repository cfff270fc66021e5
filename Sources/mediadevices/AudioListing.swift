import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `list`'s audio section: inputs and outputs, numbered as `record` and `play` take them.
func printAudio(inputs: [AudioDevice], outputs: [AudioDevice], problems: [MediaDevicesError]) {
    for problem in problems { print("audio skipped: \(problem)") }
    for (title, devices) in [("Audio inputs (record DEVICE)", inputs), ("Audio outputs (play DEVICE)", outputs)] {
        print("\(title):")
        if devices.isEmpty { print("    none") }
        for (index, device) in devices.enumerated() {
            print("[\(index)] \(device.uniqueID)  \(device.description)\(device.isDefault ? "  (default)" : "")\(device.group.map { "  group: \($0)" } ?? "")")
        }
    }
}

/// `formats` for an audio device: each direction the name resolves in, with what it accepts.
func printAudioFormats(_ text: String, json: Bool) throws {
    var entries: [(AudioDevice, Result<AudioFormatCapabilities, MediaDevicesError>)] = []
    var lastError: MediaDevicesError?
    let directions: [AudioDevice.Direction] = text.hasPrefix("input:") ? [.input] : text.hasPrefix("output:") ? [.output] : [.input, .output]
    for direction in directions {
        do {
            let device = try AudioDeviceArgument.resolve(text, direction: direction)
            do { entries.append((device, .success(try device.supportedFormats()))) } catch {
                entries.append((device, .failure(error)))
            }
        } catch let error as MediaDevicesError {
            lastError = error
        }
    }
    // An ALSA PCM with one direction only (hw:Loopback is both; many cards' PCMs are not) shows
    // the other as an error; all failing (no such name) is the command's error.
    if entries.allSatisfy({ if case .failure = $0.1 { return true } else { return false } }) {
        if case .failure(let error) = entries.first?.1 { throw error }
        if let lastError { throw lastError }
    }
    if json {
        struct Output: Encodable { let device: String; let formats: [FormatJSON]; let audioFormats: [AudioCapabilitiesJSON] }
        printJSON(Output(device: text, formats: [], audioFormats: entries.map { AudioCapabilitiesJSON(device: $0.0, $0.1) }))
        return
    }
    for (device, result) in entries {
        print("\(device.uniqueID) (\(device.direction.rawValue), \(device.backend.rawValue)):")
        switch result {
        case .failure(let error): print("    unavailable: \(error)")
        case .success(let caps):
            print("    sample formats: \(caps.sampleFormats.map(\.rawValue).joined(separator: ", "))")
            print("    channels: \(caps.channels.lowerBound)…\(caps.channels.upperBound)")
            print("    rates: \(caps.sampleRates.lowerBound)…\(caps.sampleRates.upperBound) Hz (of the common rates: \(caps.standardSampleRates.map(String.init).joined(separator: ", ")))")
            if let native = caps.nativeFormat { print("    native: \(native)") }
        }
    }
}
