import ArgumentParser
import Foundation

/// Checks of option values made in `validate()`, so that a value the tool can never honour is a
/// usage error (ArgumentParser's `ValidationError`: the message, the usage line, exit status 64,
/// EX_USAGE) before any device is opened.
enum UsageChecks {
    /// `text` as a size `WxH` with both positive, else a `ValidationError` that says which part
    /// is wrong: not `WxH` at all, or a width or height of 0 or less.
    static func size(_ text: String, option: String, example: String) throws {
        let parts = text.lowercased().split(separator: "x", omittingEmptySubsequences: false)
        guard parts.count == 2, let width = Int(parts[0]), let height = Int(parts[1]) else {
            throw ValidationError("\(option) takes WxH, e.g. \(example) (got '\(text)')")
        }
        if width <= 0 || height <= 0 {
            throw ValidationError("\(option) \(text): width and height must be positive, e.g. \(example)")
        }
    }

    /// `path` names a file to write, not a folder: an existing folder, or a name ending in `/`,
    /// is a `ValidationError` that says so and shows a file name in it.
    static func outputFile(_ path: String, option: String = "--output", example: String) throws {
        guard path != "-" else { return }
        var isFolder: ObjCBool = false
        if path.hasSuffix("/") || (FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) && isFolder.boolValue) {
            let folder = path.hasSuffix("/") ? String(path.dropLast()) : path
            throw ValidationError("\(option) \(path) is a folder, not a file; name a file in it, e.g. \(folder)/\(example)")
        }
    }
}
