import ArgumentParser
import Foundation
import MediaDevices
import MediaDevicesCommandLine

/// `mediadevices play DEVICE FILE.wav`: render a WAV file through the audio bus, then print the
/// achieved rate, xruns and measured render delay.
struct PlayCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "play", abstract: "Play a WAV file on an audio output.",
                                                     discussion: Examples.play)

    @Argument(help: "An output index from `list`, a uniqueID, an ALSA PCM name (hw:Loopback,0,0, plughw:0, default) or pulse:NAME.")
    var device: String

    @Argument(help: "A WAV file (PCM 16/32-bit or 32-bit float).")
    var file: String

    @Option(help: "Frames per period.")
    var period: Int = 512

    @Option(help: "Periods in the device buffer.")
    var periods: Int = 4

    @Flag(help: "Print the result as JSON.")
    var json = false

    func run() throws {
        try reportingErrors(json: json) {
            let wav = try WAVFile(path: file)
            guard wav.frames > 0 else { throw MediaDevicesError(.io, device: nil, operation: "read \(file)", detail: "The WAV file holds no samples") }
            let output = try AudioDeviceArgument.resolve(device, direction: .output)
            let driver = AudioDriver()
            try driver.initializeRendering(device: output, format: wav.format, options: AudioStreamOptions(periodFrames: period, periods: periods))
            defer { driver.render.terminate() }
            guard driver.renderFormat == wav.format else {
                throw MediaDevicesError(.unsupportedFormat, device: output.uniqueID, operation: "play",
                                        detail: "\(output.name) runs at \(driver.renderFormat!), the file is \(wav.format); use a plughw: device (it converts) or convert the file")
            }
            var offset = 0
            func feed() {
                offset += wav.data.withUnsafeBytes { bytes in
                    driver.bus.renderRing.write(bytes.baseAddress! + offset, count: bytes.count - offset, granularity: wav.format.bytesPerFrame)
                }
            }
            feed()
            try driver.startRendering()
            while offset < wav.data.count && driver.isRendering {
                usleep(5000)
                feed()
            }
            // Let the bus and the device buffer play out.
            while driver.bus.renderRing.availableToRead > 0 && driver.isRendering { usleep(5000) }
            usleep(UInt32(min(2, driver.estimatedRenderDelay.inSeconds) * 1e6) + 20_000)
            driver.stopRendering()
            if let failure = driver.render.endError { throw failure }
            printAudioRun(driver.render, device: output, file: file, frames: wav.frames, json: json)
        }
    }
}
