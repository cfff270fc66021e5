import Foundation

/// A plain-text table with a header row and right-aligned numeric columns.
struct BenchmarkTable {
    var columns: [String]
    var rows: [[String]] = []

    init(_ columns: String...) { self.columns = columns }

    mutating func add(_ cells: String...) { rows.append(cells) }

    /// The table, columns padded to their widest cell (the first column left-aligned).
    var text: String {
        let widths = columns.indices.map { column in
            ([columns[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.indices.map { index in
                let cell = cells[index], pad = String(repeating: " ", count: max(0, widths[index] - cell.count))
                return index == 0 ? cell + pad : pad + cell
            }.joined(separator: "  ")
        }
        return ([line(columns), widths.map { String(repeating: "-", count: $0) }.joined(separator: "  ")]
                + rows.map(line)).joined(separator: "\n")
    }
}

/// Formats nanoseconds as a short duration (`850 ns`, `12.3 µs`, `4.56 ms`).
func formatDuration(_ nanoseconds: Double) -> String {
    switch abs(nanoseconds) {
    case ..<1_000: return String(format: "%.0f ns", nanoseconds)
    case ..<100_000: return String(format: "%.1f µs", nanoseconds / 1_000)
    case ..<1_000_000: return String(format: "%.0f µs", nanoseconds / 1_000)
    default: return String(format: "%.2f ms", nanoseconds / 1_000_000)
    }
}

/// `1.03×`.
func formatRatio(_ ratio: Double) -> String { ratio.isFinite ? String(format: "%.2f×", ratio) : "-" }

/// A goal check for a ratio: `ok` or `MISSED`.
func goalMark(_ ratio: Double, _ goal: Double) -> String { ratio <= goal ? "ok" : "MISSED" }
