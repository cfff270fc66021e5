import ArgumentParser
import Foundation
import MediaDevices

/// Prints `value` as JSON (sorted keys, pretty; `compact`: on one line) on standard output.
package func printJSON<T: Encodable>(_ value: T, compact: Bool = false) {
    let encoder = JSONEncoder()
    encoder.outputFormatting = compact ? [.sortedKeys, .withoutEscapingSlashes] : [.prettyPrinted, .sortedKeys, .withoutEscapingSlashes]
    let data = (try? encoder.encode(value)) ?? Data("{}".utf8)
    print(String(decoding: data, as: UTF8.self))
}

/// The error object every `--json` command prints on failure: `{"error": {...}}`.
package struct ErrorJSON: Encodable {
    package struct Body: Encodable {
        let code: String
        let device: String?
        let operation: String
        let errno: Int32?
        let message: String
        let remedy: String?
    }
    package let error: Body
    package init(_ error: MediaDevicesError) {
        self.error = Body(code: error.code.rawValue, device: error.device, operation: error.operation,
                          errno: error.errno?.rawValue, message: cliMessage(error), remedy: error.remedy)
    }
}

/// The command that does, for someone at the command line, what an error's remedy advises: the
/// library's remedies name library calls (`CaptureDevice.discover() lists the cameras there
/// are`), which a CLI user does not have. `nil` when the remedy names none (or there is none).
package func commandHint(for error: MediaDevicesError) -> String? {
    guard let remedy = error.remedy else { return nil }
    let device = error.device ?? "DEVICE"
    if remedy.contains("ScreenSource.discover(") { return "`mediadevices screens` lists them" }
    if remedy.contains("CaptureDevice.discover(") || remedy.contains("AudioDevice.discover(") {
        return "`mediadevices list` shows the devices there are"
    }
    if remedy.contains("supportedFormats()") { return "`mediadevices formats \(device)` shows what it offers" }
    if remedy.contains("controls()") { return "`mediadevices controls \(device)` lists them" }
    return nil
}

/// An error as the CLI prints it: the library's sentence, then the command that helps.
package func cliMessage(_ error: MediaDevicesError) -> String {
    guard let hint = commandHint(for: error) else { return error.description }
    return "\(error.description) (from the command line: \(hint))"
}

/// Runs `body`; a `MediaDevicesError` is printed (as JSON with `json`, else on standard error)
/// and the process exits with status 1.
package func reportingErrors(json: Bool, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as MediaDevicesError {
        if json { printJSON(ErrorJSON(error)) } else { FileHandle.standardError.write(Data("error: \(cliMessage(error))\n".utf8)) }
        throw ExitCode(1)
    }
}
