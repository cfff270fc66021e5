import Glibc
import MicroWorkloads

// InstructionCounts: runs one microbenchmark workload a given number of times, for valgrind to
// count its instructions (scripts/microbenchmarks.sh instructions runs it twice, with 0 and with N
// iterations, and divides the difference by N: what the process does around them cancels out).
//   InstructionCounts --list               the workloads' names, one a line
//   InstructionCounts NAME ITERATIONS      prepare NAME, run 2 iterations to warm it, then ITERATIONS

/// Says `message` on standard error and exits with `status`.
func fail(_ message: String, status: Int32) -> Never {
    let line = message + "\n"
    _ = line.withCString { write(2, $0, strlen($0)) }
    exit(status)
}

let arguments = CommandLine.arguments.dropFirst()
if arguments.first == "--list" {
    for workload in Workload.all { print(workload.name) }
    exit(0)
}
guard arguments.count == 2, let name = arguments.first, let iterations = Int(arguments.last!), iterations >= 0 else {
    fail("usage: InstructionCounts --list | InstructionCounts NAME ITERATIONS", status: 2)
}
guard let workload = Workload.all.first(where: { $0.name == name }) else {
    fail("InstructionCounts: no workload named '\(name)' (--list names them)", status: 2)
}
do {
    let step = try workload.prepare()
    for _ in 0..<(2 + iterations) { try step() }
} catch {
    fail("InstructionCounts: \(name): \(error)", status: 1)
}
