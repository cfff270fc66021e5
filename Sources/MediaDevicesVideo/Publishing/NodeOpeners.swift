import Glibc

/// Which processes hold a device node open, found as `fuser` finds them: each
/// `/proc/PID/fd/N` link that points at the node. Internal: ``VirtualCamera`` polls it for its
/// loopback devices, whose driver tells a producer nothing of its readers.
///
/// It sees the processes this one may inspect: the same user's, or all with `CAP_SYS_PTRACE`
/// (root). A reader of another user is invisible to an unprivileged publisher.
struct NodeOpeners {
    /// One process holding a node.
    struct Opener: Hashable, Sendable {
        /// The process ID.
        var pid: Int32
        /// Its command name (`/proc/PID/comm`).
        var command: String
        /// The node it holds, as named in `nodes`.
        var node: String
    }

    /// Where procfs is mounted (a folder laid out like it, in the tests).
    var procRoot: String = "/proc"
    /// A process left out: ours, whose own file is the writer's.
    var excluding: Int32 = getpid()

    /// The processes (but `excluding`) that hold one of `nodes` open, each node given by its
    /// path and matched against the links' targets (`/proc/PID/fd/N` names the node by its
    /// canonical path: give `/dev/video10`, not a symbolic link to it). A process holding
    /// several nodes counts once per node; sorted by pid, then node.
    func scan(_ nodes: [String]) -> [Opener] {
        guard let proc = opendir(procRoot) else { return [] }
        defer { closedir(proc) }
        var found: [Opener] = []
        var link = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        while let entry = readdir(proc) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard let pid = Int32(name), pid != excluding else { continue }
            let fdFolder = "\(procRoot)/\(name)/fd"
            guard let fds = opendir(fdFolder) else { continue }  // gone, or another user's
            var held = Set<String>()
            while let fd = readdir(fds) {
                let fdName = withUnsafeBytes(of: fd.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
                guard fdName.first?.isNumber == true else { continue }
                let length = readlink("\(fdFolder)/\(fdName)", &link, link.count - 1)
                guard length > 0 else { continue }
                let target = link.withUnsafeBufferPointer {
                    String(decoding: UnsafeRawBufferPointer(rebasing: UnsafeRawBufferPointer($0)[0..<length]), as: UTF8.self)
                }
                if nodes.contains(target) { held.insert(target) }
            }
            closedir(fds)
            guard !held.isEmpty else { continue }
            let command = NodeOpeners.command(of: "\(procRoot)/\(name)/comm")
            for node in held.sorted() { found.append(Opener(pid: pid, command: command, node: node)) }
        }
        return found.sorted { ($0.pid, $0.node) < ($1.pid, $1.node) }
    }

    /// The first line of a `comm` file, or "" when it cannot be read (the process ended).
    static func command(of path: String) -> String {
        guard let file = fopen(path, "r") else { return "" }
        defer { fclose(file) }
        var line = [CChar](repeating: 0, count: 64)
        guard fgets(&line, Int32(line.count), file) != nil else { return "" }
        let text = String(decoding: line.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        return text.hasSuffix("\n") ? String(text.dropLast()) : text
    }

    /// `path` with its symbolic links resolved (`/dev/v4l/by-id/…` to `/dev/video10`), or itself.
    static func canonical(_ path: String) -> String {
        guard let resolved = realpath(path, nil) else { return path }
        defer { free(resolved) }
        return String(cString: resolved)
    }
}
