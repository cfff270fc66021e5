import ArgumentParser
import Foundation
import MediaDevices

/// `mediadevices record DEVICE --seconds S --output FILE.wav`: capture through the audio bus into
/// a WAV file, then print the achieved rate, xruns and measured capture delay.
struct RecordCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "record", abstract: "Record from an audio input into a WAV file.")

    @Argument(help: "An input index from `list`, a uniqueID, an ALSA PCM name (hw:Loopback,1,0, plughw:0, default) or pulse:NAME.")
    var device: String

    @Option(help: "Seconds to record.")
    var seconds: Double

    @Option(help: "Sample rate in Hz (the nearest the device takes is used).")
    var rate: Int = 48000

    @Option(help: "Channels.")
    var channels: Int = 2

    @Option(name: .customLong("sample-format"), help: "S16_LE, S32_LE or FLOAT_LE.")
    var sampleFormat: String = "S16_LE"

    @Option(help: "Frames per period.")
    var period: Int = 512

    @Option(help: "Periods in the device buffer.")
    var periods: Int = 4

    @Option(help: "Output WAV file.")
    var output: String

    @Flag(help: "Print the result as JSON.")
    var json = false

    func validate() throws {
        if SampleFormat(named: sampleFormat) == nil { throw ValidationError("--sample-format takes S16_LE, S32_LE or FLOAT_LE") }
        if seconds <= 0 { throw ValidationError("--seconds must be positive") }
        if rate <= 0 || channels <= 0 || period <= 0 || periods < 2 { throw ValidationError("--rate, --channels and --period must be positive, --periods at least 2") }
    }

    func run() throws {
        try reportingErrors(json: json) {
            let input = try AudioDeviceArgument.resolve(device, direction: .input)
            let driver = AudioDriver()
            try driver.initializeCapture(device: input, format: AudioFormat(sampleRate: rate, channels: channels, sampleFormat: SampleFormat(named: sampleFormat)!),
                                         options: AudioStreamOptions(periodFrames: period, periods: periods))
            defer { driver.capture.terminate() }
            let format = driver.captureFormat!
            let writer = try WAVWriter(path: output, format: format)
            let wanted = Int((seconds * Double(format.sampleRate)).rounded())
            var chunk = [UInt8](repeating: 0, count: 4096 * format.bytesPerFrame)
            try driver.startCapture()
            let deadline = Date().addingTimeInterval(seconds * 2 + 5)
            while writer.framesWritten < wanted && Date() < deadline {
                let want = min(chunk.count, (wanted - writer.framesWritten) * format.bytesPerFrame)
                let got = chunk.withUnsafeMutableBytes { driver.bus.captureRing.read(into: $0.baseAddress!, count: want, granularity: format.bytesPerFrame) }
                if got > 0 { try chunk.withUnsafeBytes { try writer.write(raw: UnsafeRawBufferPointer(rebasing: $0[0..<got])) } }
                if got < want {
                    if !driver.isCapturing { break }
                    usleep(5000)
                }
            }
            driver.stopCapture()
            try writer.close()
            if let failure = driver.capture.endError { throw failure }
            guard writer.framesWritten >= wanted else {
                throw MediaDevicesError(.timeout, device: input.uniqueID, operation: "record",
                                        detail: "Only \(writer.framesWritten) of \(wanted) frames arrived; check that the device produces sound (for a Loopback capture, something must play into the other side or it records silence at its own pace)")
            }
            printAudioRun(driver.capture, device: input, file: output, frames: writer.framesWritten, json: json)
        }
    }
}

/// The closing report of `record` and `play`.
func printAudioRun(_ side: AudioDriverSide, device: AudioDevice, file: String, frames: Int, json: Bool) {
    let stats = side.statistics
    let format = side.format!
    if json {
        printJSON(AudioRunJSON(device: device.uniqueID, direction: device.direction.rawValue, format: AudioFormatJSON(format),
                               periodFrames: side.periodFrames ?? 0, bufferFrames: side.bufferFrames ?? 0, file: file,
                               frames: frames, seconds: format.seconds(frames: frames), statistics: stats))
        return
    }
    print("\(device.direction == .input ? "recorded" : "played") \(frames) frames (\(String(format: "%.2f", format.seconds(frames: frames))) s) of \(format) \(device.direction == .input ? "to" : "from") \(file)")
    print("device \(device.uniqueID), period \(side.periodFrames ?? 0) frames, buffer \(side.bufferFrames ?? 0) frames")
    print(String(format: "achieved rate %.1f Hz, xruns %d, %@ %d samples, measured %@ delay mean %.0f µs, max %.0f µs",
                 stats.achievedSampleRate, stats.xruns, device.direction == .input ? "bus overflow" : "bus underflow",
                 stats.busShortfallSamples, device.direction == .input ? "capture" : "render",
                 stats.meanDelayMicroseconds, stats.maxDelayMicroseconds))
}
