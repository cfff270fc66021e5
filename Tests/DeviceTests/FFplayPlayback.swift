import Foundation
import XCTest

/// A file played by `ffplay` as a viewer plays it, with SDL's dummy audio and video drivers (no
/// display, no sound card: the dummy audio device takes samples at their rate, so the audio
/// clock runs in real time): what its status line said while it played.
///
/// ffplay syncs the picture to the sound: each status line's `A-V` is the shown frame's clock
/// less the audio clock (s). A file whose streams' timestamps agree plays with it near 0 (FFmpeg's
/// own test file on this machine: −0.036…+0.029 s); one whose video starts 1.5 s after its audio
/// by its timestamps shows −1.5 s while ffplay waits for the audio to catch up. `fd=` counts the
/// frames ffplay dropped to keep up.
struct FFplayPlayback {
    /// ffplay's exit status (0: it played to the end, or to `seconds`, and quit).
    let status: Int32
    /// Each status line's A-V (s), in order.
    let differences: [Double]
    /// Frames dropped, as its last status line says.
    let dropped: Int
    /// What it printed, for a failure's message.
    let output: String

    /// Plays the first `seconds` s of `path` (`ffplay -autoexit -t`), within `seconds` × 3 + 30 s.
    init(path: String, seconds: Int) {
        let command = "SDL_AUDIODRIVER=dummy SDL_VIDEODRIVER=dummy timeout \(seconds * 3 + 30) "
            + "ffplay -hide_banner -autoexit -stats -t \(seconds) '\(path)' 2>&1"
        let result = Rig.shell(command)
        status = result.status
        // The status line is rewritten in place with carriage returns: one line each.
        let lines = result.output.split(whereSeparator: { $0 == "\r" || $0 == "\n" })
        differences = lines.compactMap { line in Self.field("A-V:", in: line).flatMap(Double.init) }
        dropped = lines.reversed().lazy.compactMap { line in Self.field("fd=", in: line).flatMap(Int.init) }.first ?? 0
        output = lines.suffix(5).joined(separator: "\n")
    }

    /// |A-V| at `fraction` of its sorted values (s): 0.5 the median; nil without status lines.
    func absoluteDifference(atFraction fraction: Double) -> Double? {
        let sorted = differences.map(abs).sorted()
        guard !sorted.isEmpty else { return nil }
        return sorted[min(sorted.count - 1, Int(Double(sorted.count - 1) * fraction))]
    }

    /// The text after `label` in a status line, up to the next space (ffplay pads numbers with spaces first).
    private static func field(_ label: String, in line: Substring) -> String? {
        guard let range = line.range(of: label) else { return nil }
        let rest = line[range.upperBound...].drop { $0 == " " }
        return String(rest.prefix { $0 != " " })
    }
}
