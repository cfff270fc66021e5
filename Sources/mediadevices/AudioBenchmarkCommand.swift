import ArgumentParser
import MediaDevices

/// `mediadevices audio-benchmark`: placeholder replaced below.
struct AudioBenchmarkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "audio-benchmark", abstract: "Benchmark the audio bus and the round trip through snd-aloop.")
    func run() throws {}
}
