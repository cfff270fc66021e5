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
    }
    package let error: Body
    package init(_ error: MediaDevicesError) {
        self.error = Body(code: error.code.rawValue, device: error.device, operation: error.operation,
                          errno: error.errno?.rawValue, message: error.description)
    }
}

/// Runs `body`; a `MediaDevicesError` is printed (as JSON with `json`, else on standard error)
/// and the process exits with status 1.
package func reportingErrors(json: Bool, _ body: () throws -> Void) throws {
    do {
        try body()
    } catch let error as MediaDevicesError {
        if json { printJSON(ErrorJSON(error)) } else { FileHandle.standardError.write(Data("error: \(error)\n".utf8)) }
        throw ExitCode(1)
    }
}
