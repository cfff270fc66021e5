#if canImport(Glibc)
import Glibc
#endif

/// How many more file descriptors this process may open: for libraries that fail for want of
/// one but report another errno (libasound's `snd_pcm_open` says `ENOENT` when it cannot read
/// its configuration files), so that the error can say what really happened.
package enum DescriptorHeadroom {
    /// Fewer spare descriptors than this and a library's open that needs several (configuration
    /// files, a control device, the PCM, its timer) may fail part way.
    package static let libraryOpenNeeds = 16

    /// The descriptors this process may still open under its soft `RLIMIT_NOFILE`: the limit
    /// less those open now (counted in /proc/self/fd); 0 when even that listing cannot be opened
    /// for want of a descriptor; nil when it cannot tell (no limit, no /proc).
    package static func spare() -> Int? {
        var limit = rlimit()
        guard getrlimit(Int32(RLIMIT_NOFILE.rawValue), &limit) == 0, limit.rlim_cur != rlim_t.max else { return nil }
        guard let directory = opendir("/proc/self/fd") else { return errno == EMFILE || errno == ENFILE ? 0 : nil }
        defer { closedir(directory) }
        var open = -1  // the listing's own descriptor is one of the entries
        while let entry = readdir(directory) {
            if entry.pointee.d_name.0 != CChar(UInt8(ascii: ".")) { open += 1 }
        }
        return max(0, Int(clamping: limit.rlim_cur) - open)
    }

    /// `EMFILE` when fewer than `libraryOpenNeeds` descriptors are spare: the likely cause of a
    /// library's failed open whose errno says something else; nil otherwise.
    package static func likelyExhausted() -> Int32? {
        guard let spare = spare(), spare < libraryOpenNeeds else { return nil }
        return EMFILE
    }
}
