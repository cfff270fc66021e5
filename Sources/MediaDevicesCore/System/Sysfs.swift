import Foundation

/// Reading sysfs attributes.
package enum Sysfs {
    /// The attribute `name` of the sysfs folder `folder`, trimmed; `nil` if it cannot be read.
    package static func attribute(_ folder: String, _ name: String) -> String? {
        (try? String(contentsOfFile: "\(folder)/\(name)", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// `path` with every link resolved (`realpath`), or `nil` if it does not exist.
    package static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }
}
