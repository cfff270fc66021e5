import Foundation
import MediaDevices
import MediaDevicesCore
import TestSupport
import Synchronization
import XCTest

/// The process's resources, from /proc/self.
struct ProcessFigures {
    /// The descriptors that are exactly ours to account for: all but libdispatch's epoll and
    /// timer descriptors, and eventfds (ours, `WakeUpEvent`, and libdispatch's), which the
    /// runtime opens and closes on its own schedule (seen closing in the middle of a test).
    var accountable: [String] { descriptorTargets.filter { !Self.runtimeKinds.contains($0) } }
    /// eventfds: ours and libdispatch's; a leak of ours makes them grow.
    var eventfds: Int { descriptorTargets.filter { $0 == "anon_inode:[eventfd]" }.count }
    /// timerfds: the library makes none; Foundation's run loops do, one each. A thread's first
    /// run loop (`Process.waitUntilExit()` runs `RunLoop.current`) opens an eventfd, a timerfd
    /// and an epoll together (measured on this machine's Foundation), so an async test that
    /// resumes on another thread of the pool and runs a tool there gains an eventfd that is
    /// not the library's.
    var timerfds: Int { descriptorTargets.filter { $0 == "anon_inode:[timerfd]" }.count }
    static let runtimeKinds: Set<String> = ["anon_inode:[timerfd]", "anon_inode:[eventpoll]", "anon_inode:[eventfd]"]

    /// Every accountable descriptor is back, and the library's own eventfds (`WakeUpEvent`)
    /// exactly. The other eventfds are printed when they grew, not asserted: they are the
    /// runtime's (a Foundation run loop's, libdispatch's) and the sound servers' client
    /// libraries' (libpulse's shared-memory channel, libpipewire's loops), opened and closed on
    /// their own schedule; anything of ours that would hold one (a context, a stream) holds a
    /// socket too, which is counted. Their total once grew by one in a PulseAudio soak on a CI
    /// machine loaded far beyond two busy loops (5 → 6, no run loop made), flat here beside two.
    static func assertDescriptorsFlat(_ first: ProcessFigures, _ last: ProcessFigures, _ label: String,
                                      file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(last.accountable.count, first.accountable.count,
                       "\(label): descriptors; first only \(difference(first.accountable, last.accountable)), last only \(difference(last.accountable, first.accountable))",
                       file: file, line: line)
        XCTAssertLessThanOrEqual(last.wakeUpEvents, first.wakeUpEvents, "\(label): the library's eventfds (a leaked WakeUpEvent)", file: file, line: line)
        let others = (first: first.eventfds - first.wakeUpEvents, last: last.eventfds - last.wakeUpEvents)
        let newRunLoops = max(0, last.timerfds - first.timerfds)
        if others.last > others.first + newRunLoops {
            print("soak: \(label): eventfds not the library's \(others.first) → \(others.last) (\(newRunLoops) run loops made meanwhile, one eventfd each): the runtime's or a client library's")
        }
    }

    /// Asserts that the descriptors this process accounts for are those of `before` again, less
    /// `gone` (targets expected to have closed, matched by prefix: "socket:"). Use it where a
    /// test's own open and close are the point; raw counts also see the runtime's descriptors,
    /// and the descriptors earlier tests left closing during this one.
    @discardableResult
    static func assertDescriptorsBack(to before: ProcessFigures, less gone: [String] = [], _ label: String,
                                      file: StaticString = #filePath, line: UInt = #line) -> ProcessFigures {
        let after = settled()
        var expected = before.accountable
        for prefix in gone {
            guard let index = expected.firstIndex(where: { $0.hasPrefix(prefix) }) else {
                XCTFail("\(label): no \(prefix) descriptor was open before: \(before.accountable)", file: file, line: line)
                continue
            }
            expected.remove(at: index)
        }
        var first = before
        first.descriptorTargets = expected + before.descriptorTargets.filter { runtimeKinds.contains($0) }
        assertDescriptorsFlat(first, after, label, file: file, line: line)
        return after
    }

    var descriptors: Int
    var maps: Int
    var deviceMaps: Int
    /// The device mappings themselves ("/dev/video0 (4 KB, rw-s)"), for the message when the counts differ.
    var deviceMapNames: [String]
    var threads: Int
    var rssKilobytes: Int
    var anonymousKilobytes: Int
    /// The heap in use (`AllocationProbe.heapInUseKilobytes`); `nil` under a sanitizer.
    var heapKilobytes: Int?
    /// Threads by name, for the library's own threads.
    var named: [String: Int]
    /// What each descriptor points at (for the message when the counts differ).
    var descriptorTargets: [String]
    /// The /proc/self/maps lines as read, addresses and all (printed when device mappings differ).
    var mapLines: [String] = []
    /// The library's own eventfds (`WakeUpEvent.openCount`), counted exactly.
    var wakeUpEvents = 0

    /// The library's threads by name, and libpulse's main loop thread (one per open Pulse stream).
    static let libraryThreads = ["md-capture", "md-hotplug", "md-controls", "audio-capture", "audio-render", "threaded-ml"]

    static func now() -> ProcessFigures {
        let mapsText = (try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? ""
        let mapLines = mapsText.split(separator: "\n")
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task")) ?? []
        var named: [String: Int] = [:]
        for task in tasks {
            let name = ((try? String(contentsOfFile: "/proc/self/task/\(task)/comm", encoding: .utf8)) ?? "")
                .trimmingCharacters(in: .whitespacesAndNewlines)
            if libraryThreads.contains(name) { named[name, default: 0] += 1 }
        }
        let status = (try? String(contentsOfFile: "/proc/self/status", encoding: .utf8)) ?? ""
        // "VmRSS:\t   34716 kB"
        let rss = status.split(separator: "\n").first { $0.hasPrefix("VmRSS:") }
            .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") } ?? 0
        // Anonymous memory is where a leak shows; file-backed pages (the binaries, read over 9p)
        // come and go with the guest's page cache.
        let anonymous = status.split(separator: "\n").first { $0.hasPrefix("RssAnon:") }
            .flatMap { Int($0.split(whereSeparator: { $0 == " " || $0 == "\t" }).dropFirst().first ?? "") } ?? 0
        let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        // A descriptor whose link cannot be read closed while we looked (the listing's own
        // directory, or one another thread was closing): it is not open, so it is not counted
        // among the targets (a test that found three such at first and none after failed as if
        // three had closed, in a loaded run).
        let targets = fds.compactMap { try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)") }.sorted()
        let deviceLines = mapLines.filter { $0.contains("/dev/") }
        return ProcessFigures(descriptors: fds.count, maps: mapLines.count,
                              deviceMaps: deviceLines.count, deviceMapNames: deviceLines.map(describeMapping).sorted(),
                              threads: tasks.count, rssKilobytes: rss, anonymousKilobytes: anonymous,
                              heapKilobytes: AllocationProbe.heapInUseKilobytes, named: named, descriptorTargets: targets,
                              mapLines: mapLines.map(String.init), wakeUpEvents: WakeUpEvent.openCount)
    }

    /// The heap in use may grow by this much between the first and last figures. A leaked frame
    /// buffer per cycle (150–600 KB here) would exceed it within a few cycles; what may
    /// legitimately grow is a few long-lived records (XCTest's, libdispatch's caches).
    static let heapBoundKilobytes = 2 * 1024

    /// Prints first vs last and asserts descriptors, mappings and the library's threads are back
    /// exactly and the heap in use grew less than `heapBoundKilobytes`. Take both with
    /// `settled()` in the same state (open, stopped, ...).
    ///
    /// RSS is printed, not asserted: glibc keeps freed memory in per-thread arenas (up to 8 per
    /// core), so a process whose threads come and go (every capture run, the USB emulator's)
    /// grows in RSS as more arenas get used, without a byte leaked. Measured in the USB unplug
    /// storm, 40 cycles: anonymous RSS +17.4 MB with the default arenas and +2.2 MB with
    /// `MALLOC_ARENA_MAX=1`, the heap in use flat in both. A leak shows in the heap in use.
    ///
    /// `poolKilobytes`: what the run's own pools may still grow by, legitimately and up to a
    /// bound, after `first` (a `frames()` sequence's copies: see `SoakTogetherTests`).
    /// `screenMayRemap`: both figures were taken while a screen source grabbed; its framebuffer
    /// mapping may be gone at the end (the display changed it), never more than one.
    static func assertFlat(_ first: ProcessFigures, _ lastSeen: ProcessFigures, _ label: String, poolKilobytes: Int = 0, screenMayRemap: Bool = false,
                           file: StaticString = #filePath, line: UInt = #line) {
        let last = lastSeen
        func megabytes(_ kilobytes: Int?) -> String { kilobytes.map { String(format: "%.1f", Double($0) / 1024) } ?? "n/a" }
        print(String(format: "figure: soak %@: fds %d → %d (eventfds %d → %d, the library's %d → %d), maps %d → %d (device %d → %d), threads %d → %d (library %@ → %@), RSS %.1f → %.1f MB, anonymous %.1f → %.1f MB (%+.1f MB), heap in use %@ → %@ MB",
                     label, first.descriptors, last.descriptors, first.eventfds, last.eventfds, first.wakeUpEvents, last.wakeUpEvents, first.maps, last.maps, first.deviceMaps, last.deviceMaps,
                     first.threads, last.threads, describe(first.named), describe(last.named),
                     Double(first.rssKilobytes) / 1024, Double(last.rssKilobytes) / 1024,
                     Double(first.anonymousKilobytes) / 1024, Double(last.anonymousKilobytes) / 1024,
                     Double(last.anonymousKilobytes - first.anonymousKilobytes) / 1024,
                     megabytes(first.heapKilobytes), megabytes(last.heapKilobytes)))
        assertDescriptorsFlat(first, last, label, file: file, line: line)
        // Device mappings exactly. The total is printed, not asserted: Dispatch and XCTest worker
        // stacks and malloc's large-block mappings come and go with the runtime, not with us.
        let gone = difference(first.deviceMapNames, last.deviceMapNames), new = difference(last.deviceMapNames, first.deviceMapNames)
        if screenMayRemap {
            // Both figures taken while a screen is grabbed: the screen source maps the framebuffer
            // the display shows and maps another when the display changes it (or none while it shows
            // none), so a DRM mapping may go, never come in excess; every other one is exact (a
            // camera's buffers stay mapped while it streams). Seen once in CI: 5 → 4, unnamed then.
            let isDRM = { (name: String) in name.hasPrefix("/dev/dri/") }
            XCTAssertEqual(last.deviceMapNames.filter { !isDRM($0) }, first.deviceMapNames.filter { !isDRM($0) },
                           "\(label): device mappings other than the screen's (gone: \(gone), new: \(new))", file: file, line: line)
            XCTAssertLessThanOrEqual(last.deviceMapNames.filter(isDRM).count, max(first.deviceMapNames.filter(isDRM).count, 1),
                                     "\(label): the screen's mappings (gone: \(gone), new: \(new))", file: file, line: line)
            if !gone.isEmpty || !new.isEmpty {
                print("soak: \(label): device mappings gone \(gone), new \(new)")
                printMapChanges(first, last, label)
            }
        } else {
            XCTAssertEqual(last.deviceMaps, first.deviceMaps, "\(label): device mappings (gone: \(gone), new: \(new))", file: file, line: line)
            if last.deviceMaps != first.deviceMaps { printMapChanges(first, last, label) }
        }
        XCTAssertEqual(last.named, first.named, "\(label): the library's threads", file: file, line: line)
        if let before = first.heapKilobytes, let after = last.heapKilobytes {
            XCTAssertLessThan(after - before, heapBoundKilobytes + poolKilobytes,
                              "\(label): heap in use growth (bound \(heapBoundKilobytes) KB + pools \(poolKilobytes) KB)", file: file, line: line)
        } else {
            print("soak: \(label): heap in use not measured (\(AllocationProbe.unavailableReason ?? "no allocator figures"))")
        }
    }

    /// The mappings only one of `first` and `last` has, with their addresses: what a changed
    /// device mapping count needs to be understood (a buffer set replaced, a mapping merged, a
    /// read of /proc/self/maps that raced a change), printed beside the failure.
    static func printMapChanges(_ first: ProcessFigures, _ last: ProcessFigures, _ label: String) {
        let gone = difference(first.mapLines, last.mapLines), new = difference(last.mapLines, first.mapLines)
        print("soak: \(label): /proc/self/maps lines only at first (\(gone.count) of \(first.mapLines.count)):\n  " + gone.joined(separator: "\n  "))
        print("soak: \(label): /proc/self/maps lines only at last (\(new.count) of \(last.mapLines.count)):\n  " + new.joined(separator: "\n  "))
    }

    /// A /proc/self/maps line ("7f..-7f.. rw-s 00000000 00:05 123 /dev/video0") as "/dev/video0
    /// (600 KB, rw-s, offset 0x0)".
    static func describeMapping(_ line: Substring) -> String {
        let fields = line.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 6 else { return String(line) }
        let bounds = fields[0].split(separator: "-").compactMap { UInt(String($0), radix: 16) }
        let kilobytes = bounds.count == 2 ? (bounds[1] - bounds[0]) / 1024 : 0
        return "\(fields[5...].joined(separator: " ")) (\(kilobytes) KB, \(fields[1]), offset 0x\(fields[2]))"
    }

    /// The elements of `a` not matched in `b` (as multisets).
    static func difference(_ a: [String], _ b: [String]) -> [String] {
        var rest = b
        return a.filter { item in
            if let index = rest.firstIndex(of: item) { rest.remove(at: index); return false }
            return true
        }
    }

    /// Figures once two samples 200 ms apart agree (descriptors a finished child process held
    /// close a moment later), at most after 3 s.
    static func settled() -> ProcessFigures {
        var previous = now()
        for _ in 0..<15 {
            usleep(200_000)
            let next = now()
            if next.descriptors == previous.descriptors && next.maps == previous.maps && next.threads == previous.threads { return next }
            previous = next
        }
        return previous
    }

    /// The DMA-BUF mappings of this process (`/proc/self/maps` names them `/dmabuf:`).
    static func dmaBufMappings() -> [String] {
        ((try? String(contentsOfFile: "/proc/self/maps", encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.contains("dmabuf") }.map(String.init)
    }

    private static func describe(_ named: [String: Int]) -> String {
        named.isEmpty ? "none" : named.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: ", ")
    }
}
