#if X11
import MediaDevicesCore
import CXCB
import Glibc

/// Memory shared with the X server for MIT-SHM grabs, made once per grabber and reused for
/// every frame: a memfd passed over the connection (MIT-SHM 1.2 `ShmAttachFd`) or a System V
/// segment (`ShmAttach`). The one owner of the descriptor and the mapping: `deinit` detaches
/// the memory from the server, unmaps it and closes the descriptor. A System V segment is
/// marked for removal as soon as both sides have attached it, so it cannot outlive the process.
final class X11SharedMemory {
    /// How the memory reaches the X server.
    enum Sharing: String, Sendable, CaseIterable {
        /// A memfd whose descriptor travels over the connection's Unix socket (`ShmAttachFd`,
        /// MIT-SHM 1.2). Needs no System V IPC namespace in common with the server, so a client
        /// in a container works too; needs a local (Unix-socket) connection.
        case memfd
        /// A System V segment the server attaches by id (`ShmAttach`). Works only when client and
        /// server share an IPC namespace: a client in another one (a container) cannot use it.
        case systemV
    }

    /// How this memory is shared.
    let sharing: Sharing
    /// The segment's id on the X connection (`xcb_shm_seg_t`).
    let segment: UInt32
    /// The mapping in this process.
    let bytes: UnsafeMutableRawPointer
    /// Its size in bytes.
    let byteCount: Int
    /// The memfd; -1 for a System V segment.
    private let descriptor: Int32
    private let x: X11Connection

    /// How `x`'s server can best take shared memory: `.memfd` when it speaks MIT-SHM 1.2 and the
    /// connection is a Unix socket (descriptors can be passed), else `.systemV`. Throws
    /// `.unsupportedFormat` when the server has no MIT-SHM at all.
    static func preferredSharing(_ x: X11Connection) throws(MediaDevicesError) -> Sharing {
        guard x.extensionFirstEvent(cxcb_shm_extension()) != nil else {
            throw MediaDevicesError(.unsupportedFormat, device: x.display, operation: "MIT-SHM",
                                    detail: "The X server on \(x.display) has no MIT-SHM extension; start it without `-extension MIT-SHM`")
        }
        let version = try x.withReply("ShmQueryVersion", { xcb_shm_query_version_reply($0, xcb_shm_query_version($0), &$1) }) {
            (Int($0.pointee.major_version), Int($0.pointee.minor_version))
        }
        let speaksFds = version.0 > 1 || (version.0 == 1 && version.1 >= 2)
        return speaksFds && x.isUnixSocket ? .memfd : .systemV
    }

    /// Makes `byteCount` bytes of shared memory the server attaches writable, as `sharing` says.
    /// Throws `.io` when the server cannot attach them (a remote display, another IPC
    /// namespace for System V, an error of `ShmAttachFd`) or memory cannot be had. `segment`
    /// overrides the new id (tests: an id in use makes the server refuse).
    init(_ x: X11Connection, byteCount: Int, sharing: Sharing, segment: UInt32? = nil) throws(MediaDevicesError) {
        let segment = segment ?? xcb_generate_id(x.connection)
        switch sharing {
        case .memfd: (bytes, descriptor) = try X11SharedMemory.attachMemfd(x, segment: segment, byteCount: byteCount)
        case .systemV: (bytes, descriptor) = (try X11SharedMemory.attachSystemV(x, segment: segment, byteCount: byteCount), -1)
        }
        self.sharing = sharing
        self.segment = segment
        self.byteCount = byteCount
        self.x = x
    }

    deinit {
        _ = xcb_shm_detach(x.connection, segment)
        x.flush()
        if descriptor >= 0 {
            munmap(bytes, byteCount)
            close(descriptor)
        } else {
            shmdt(bytes)
        }
    }

    /// A memfd of `byteCount` bytes, mapped here and attached by the server as `segment`;
    /// nothing is left open when it throws.
    private static func attachMemfd(_ x: X11Connection, segment: UInt32, byteCount: Int) throws(MediaDevicesError) -> (UnsafeMutableRawPointer, Int32) {
        let fd = cxcb_memfd_create("mediadevices-x11")
        guard fd >= 0 else { throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "memfd_create") }
        var mapped: UnsafeMutableRawPointer?
        do {
            guard ftruncate(fd, off_t(byteCount)) == 0 else {
                throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "ftruncate(memfd, \(byteCount) bytes)")
            }
            guard let address = mmap(nil, byteCount, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0), address != UnsafeMutableRawPointer(bitPattern: -1) else {
                throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "mmap(memfd, \(byteCount) bytes)")
            }
            mapped = address
            // libxcb closes the descriptor it sends: it gets its own copy.
            let sent = dup(fd)
            guard sent >= 0 else { throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "dup(memfd)") }
            do {
                try x.check("ShmAttachFd", xcb_shm_attach_fd_checked(x.connection, segment, sent, 0))
            } catch {
                throw MediaDevicesError(error.code, device: x.display, operation: "ShmAttachFd",
                                        detail: "The X server on \(x.display) cannot attach a memfd of this process (\(error.detail)); MIT-SHM needs the X server on this machine")
            }
            return (address, fd)
        } catch {
            if let mapped { munmap(mapped, byteCount) }
            close(fd)
            throw MediaDevicesError.converting(error, device: x.display, operation: "MIT-SHM memfd")
        }
    }

    /// A System V segment of `byteCount` bytes, attached here and by the server as `segment`,
    /// and already marked for removal; nothing is left attached when it throws.
    private static func attachSystemV(_ x: X11Connection, segment: UInt32, byteCount: Int) throws(MediaDevicesError) -> UnsafeMutableRawPointer {
        let id = shmget(IPC_PRIVATE, byteCount, IPC_CREAT | 0o600)
        guard id >= 0 else { throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "shmget(\(byteCount) bytes)") }
        // Removed once nobody has it attached: set now, so no path leaks the segment.
        defer { shmctl(id, IPC_RMID, nil) }
        guard let address = shmat(id, nil, 0), address != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "shmat")
        }
        do {
            try x.check("ShmAttach", xcb_shm_attach_checked(x.connection, segment, UInt32(id), 0))
        } catch {
            shmdt(address)
            throw MediaDevicesError(error.code, device: x.display, operation: "ShmAttach",
                                    detail: "The X server on \(x.display) cannot attach this process's System V shared memory (\(error.detail)); it needs the X server on this machine, in the same IPC namespace (a container has its own: use a server with MIT-SHM 1.2, which takes a memfd)")
        }
        return address
    }
}
#endif
