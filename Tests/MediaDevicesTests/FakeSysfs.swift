import Foundation

/// A sysfs tree in a temporary folder, laid out as the kernel lays one out (device folders,
/// attribute files, `class`, `device` and `subsystem` links), for the code that reads sysfs with
/// a root of its choosing.
struct FakeSysfs {
    /// The tree's root: what the code under test takes for `/sys`.
    let root: String

    /// An empty tree in a new temporary folder.
    init() throws {
        root = NSTemporaryDirectory() + "sysfs-\(getpid())-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: root, withIntermediateDirectories: true)
    }

    /// Removes the tree.
    func remove() { try? FileManager.default.removeItem(atPath: root) }

    /// Writes the attribute file `path` (relative to the root), making its folders.
    func write(_ text: String, _ path: String) throws {
        try folder((path as NSString).deletingLastPathComponent)
        try text.write(toFile: root + "/" + path, atomically: false, encoding: .utf8)
    }

    /// Makes the link `path` (relative to the root) to `target` (as given: relative to the link's folder, or absolute).
    func link(_ path: String, to target: String) throws {
        try folder((path as NSString).deletingLastPathComponent)
        try FileManager.default.createSymbolicLink(atPath: root + "/" + path, withDestinationPath: target)
    }

    /// Makes the folder `path` (relative to the root) and its parents.
    func folder(_ path: String) throws {
        try FileManager.default.createDirectory(atPath: root + "/" + path, withIntermediateDirectories: true)
    }
}
