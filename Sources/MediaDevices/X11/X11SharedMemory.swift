import CXCB
import Glibc

/// A System V shared-memory segment that the X server has attached (MIT-SHM `ShmAttach`),
/// made once per grabber and reused for every frame. The segment is marked for removal as
/// soon as both sides have attached it, so it cannot outlive the process; `deinit` detaches it
/// from the server and from this process.
final class X11SharedMemory {
    /// The segment's id on the X connection (`xcb_shm_seg_t`).
    let segment: UInt32
    /// The mapping in this process.
    let bytes: UnsafeMutableRawPointer
    /// Its size in bytes.
    let byteCount: Int
    private let x: X11Connection

    /// Makes a segment of `byteCount` bytes and has the server attach it writable. Throws
    /// `.unsupportedFormat` when the server has no MIT-SHM, `.io` when it cannot attach our
    /// memory (a remote display or another IPC namespace).
    init(_ x: X11Connection, byteCount: Int) throws {
        guard x.extensionFirstEvent(cxcb_shm_extension()) != nil else {
            throw MediaDevicesError(.unsupportedFormat, device: x.display, operation: "MIT-SHM",
                                    detail: "The X server on \(x.display) has no MIT-SHM extension; start it without `-extension MIT-SHM`")
        }
        let id = shmget(IPC_PRIVATE, byteCount, IPC_CREAT | 0o600)
        guard id >= 0 else { throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "shmget(\(byteCount) bytes)") }
        // Removed once nobody has it attached: set now, so no path leaks the segment.
        defer { shmctl(id, IPC_RMID, nil) }
        guard let address = shmat(id, nil, 0), address != UnsafeMutableRawPointer(bitPattern: -1) else {
            throw MediaDevicesError.fromErrno(errno, device: x.display, operation: "shmat")
        }
        let segment = xcb_generate_id(x.connection)
        do {
            try x.check("ShmAttach", xcb_shm_attach_checked(x.connection, segment, UInt32(id), 0))
        } catch let error as MediaDevicesError {
            shmdt(address)
            throw MediaDevicesError(error.code, device: x.display, operation: "ShmAttach",
                                    detail: "The X server on \(x.display) cannot attach this process's shared memory (\(error.detail)); MIT-SHM needs the X server on this machine, in the same IPC namespace")
        }
        self.segment = segment
        self.bytes = address
        self.byteCount = byteCount
        self.x = x
    }

    deinit {
        _ = xcb_shm_detach(x.connection, segment)
        x.flush()
        shmdt(bytes)
    }
}
