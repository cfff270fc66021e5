import Foundation

/// The calling thread's name, as the kernel keeps it (15 characters): which thread ran a piece
/// of code (`md-capture`, `md-pipewire-cam`, `md-testpattern`, or a libdispatch worker).
public func currentThreadName() -> String {
    ((try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?").trimmingCharacters(in: .newlines)
}
