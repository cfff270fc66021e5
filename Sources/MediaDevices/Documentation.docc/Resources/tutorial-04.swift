import Foundation   // exit
import MediaDevices

let cameras = await CaptureDevice.discover()
let audio = await AudioDevice.discover()
guard let device = cameras.devices.first, let microphone = audio.inputs.first(where: \.isDefault) ?? audio.inputs.first else {
    print("no camera or no microphone:", cameras.problems + audio.problems)
    exit(1)
}

let camera = CameraSource(device: device, request: FormatRequest(size: .hd720, frameRate: FrameRate(30)))
try camera.initialize()

struct PreviewWindow {
    func draw(_ frame: VideoFrame) { _ = frame.plane(0).bytes }
}
let window = PreviewWindow()

let preview = try camera.frames(bufferSize: 2, output: OutputFormat(.argb, size: Size(width: 640, height: 360), mirrored: true))
try camera.start()
let previewing = Task(executorPreference: camera.captureExecutor) {
    for try await frame in preview {
        frame.withFrame { window.draw($0) }
    }
}

// The microphone through an AudioDriver, in 10 ms chunks with their level.
let driver = AudioDriver()
try driver.initializeCapture(device: microphone, format: AudioFormat(sampleRate: 48000, channels: 1, sampleFormat: .floatLE))
try driver.startCapture()
let chunks = driver.capturedChunks()
let metering = Task {
    for try await chunk in chunks {
        print("level", chunk.level.rmsDecibels.map { Int($0) }, "dB")
    }
}
