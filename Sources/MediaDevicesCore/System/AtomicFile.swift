import Glibc

/// A file written under a temporary name beside its destination (`.NAME.XXXXXX` in the same
/// folder, so the move stays on one filesystem) and moved over the destination, complete and
/// synced, by `commit()`: a reader sees the old file or the whole new one, never part of one.
/// A writer that fails, or is dropped before `commit()`, removes its temporary file; a process
/// killed mid-write (SIGKILL) leaves it, hidden, beside the destination.
///
/// The one place the library and the CLI write files (restore tokens, control profiles, WAV,
/// Y4M and raw captures, PNG and JPEG snapshots). The file is created with `mode` less the
/// process's umask (as `open(2)` does); errors are `MediaDevicesError.fromFileErrno`'s: a
/// missing folder is `.notFound`, a read-only or forbidden one `.permissionDenied`, a full disk `.io`.
package final class AtomicFile {
    /// The destination.
    let path: String
    /// What the errors name as the operation (`write restore token`, `controls --save`).
    let operation: String
    /// The open temporary file, `nil` once committed or discarded.
    package private(set) var stream: UnsafeMutablePointer<FILE>?
    /// The temporary file's path, `nil` once committed or removed.
    private(set) var temporaryPath: String?

    /// Creates the temporary file for `path` with `mode` (less the umask). When `path` is a
    /// symbolic link, the file it points to is replaced; when it is not a regular file (a
    /// character device such as /dev/null, a FIFO), it is opened and written directly: such a
    /// file cannot be replaced.
    package init(path: String, mode: mode_t = 0o644, operation: String) throws(MediaDevicesError) {
        self.operation = operation
        var status = stat()
        if stat(path, &status) == 0, status.st_mode & S_IFMT != S_IFREG {
            self.path = path
            let descriptor = open(path, O_WRONLY | O_CLOEXEC)
            guard descriptor >= 0, let stream = fdopen(descriptor, "wb") else {
                let error = errno
                if descriptor >= 0 { close(descriptor) }
                throw MediaDevicesError.fromFileErrno(error, path: path, operation: operation)
            }
            self.stream = stream
            return
        }
        var linked = status
        if lstat(path, &linked) == 0, linked.st_mode & S_IFMT == S_IFLNK, let resolved = realpath(path, nil) {
            self.path = String(cString: resolved)
            free(resolved)
        } else {
            self.path = path
        }
        let path = self.path
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) } ?? "."
        let name = slash.map { String(path[path.index(after: $0)...]) } ?? path
        var attempt = 0
        while true {
            let suffix = String(UInt32.random(in: 0...UInt32.max), radix: 36)
            let candidate = "\(folder.isEmpty ? "" : folder)/.\(name).\(suffix)"
            let descriptor = open(candidate, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode)
            if descriptor >= 0 {
                guard let stream = fdopen(descriptor, "wb") else {
                    let error = errno
                    close(descriptor)
                    unlink(candidate)
                    throw MediaDevicesError.fromFileErrno(error, path: path, operation: operation)
                }
                self.stream = stream
                temporaryPath = candidate
                return
            }
            attempt += 1
            guard errno == EEXIST, attempt < 100 else { throw MediaDevicesError.fromFileErrno(errno, path: path, operation: operation) }
        }
    }

    /// Writes to `stream` in place (standard output for the path `-`): `commit()` flushes and closes it.
    package init(inPlace stream: UnsafeMutablePointer<FILE>, path: String, operation: String) {
        self.path = path
        self.operation = operation
        self.stream = stream
    }

    deinit { discard() }

    /// Writes `bytes` to the temporary file.
    package func write(_ bytes: UnsafeRawBufferPointer) throws(MediaDevicesError) {
        guard let stream else {
            throw MediaDevicesError(.invalidState, device: nil, operation: operation, detail: "\(path) is already closed")
        }
        guard bytes.count > 0 else { return }
        guard fwrite(bytes.baseAddress, 1, bytes.count, stream) == bytes.count else { throw failure(errno) }
    }

    /// Flushes and syncs the temporary file, moves it over `path` and syncs the folder. On a
    /// failure the temporary file is removed and `path` is as it was. Does nothing once done.
    package func commit() throws(MediaDevicesError) {
        guard let stream else { return }
        self.stream = nil
        guard let temporaryPath else {  // not a regular file: written in place
            guard fclose(stream) == 0 else { throw failure(errno) }
            return
        }
        if fflush(stream) != 0 || fsync(fileno(stream)) != 0 {
            let error = errno
            fclose(stream)
            throw failure(error)
        }
        guard fclose(stream) == 0 else { throw failure(errno) }
        guard rename(temporaryPath, path) == 0 else { throw failure(errno) }
        self.temporaryPath = nil
        let slash = path.lastIndex(of: "/")
        let folder = slash.map { String(path[..<$0]) }.map { $0.isEmpty ? "/" : $0 } ?? "."
        let descriptor = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            _ = fsync(descriptor)  // the rename reaches the disk; a folder that cannot sync is no failure of the write
            close(descriptor)
        }
    }

    /// Closes and removes the temporary file without touching `path`. Safe to call more than once.
    package func discard() {
        if let stream { fclose(stream) }
        stream = nil
        if let temporaryPath { unlink(temporaryPath) }
        temporaryPath = nil
    }

    /// Removes the temporary file and gives the error for `error` (an errno).
    private func failure(_ error: Int32) -> MediaDevicesError {
        discard()
        return MediaDevicesError.fromFileErrno(error, path: path, operation: operation)
    }

    /// Writes `bytes` to `path` whole (or not at all), with `mode` less the umask.
    package static func write(_ bytes: UnsafeRawBufferPointer, to path: String, mode: mode_t = 0o644, operation: String) throws(MediaDevicesError) {
        let file = try AtomicFile(path: path, mode: mode, operation: operation)
        try file.write(bytes)
        try file.commit()
    }

    /// Writes `bytes` to `path` whole (or not at all), with `mode` less the umask.
    package static func write(_ bytes: [UInt8], to path: String, mode: mode_t = 0o644, operation: String) throws(MediaDevicesError) {
        try bytes.withUnsafeBufferPointer { (buffer) throws(MediaDevicesError) in
            try write(UnsafeRawBufferPointer(buffer), to: path, mode: mode, operation: operation)
        }
    }
}
