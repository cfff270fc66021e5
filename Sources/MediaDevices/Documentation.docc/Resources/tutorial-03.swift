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

// Your window: it draws ARGB pixels (a GTK or SDL texture, a framebuffer).
struct PreviewWindow {
    func draw(_ frame: VideoFrame) { _ = frame.plane(0).bytes }
}
let window = PreviewWindow()

// The preview's own output: ARGB at 640x360, mirrored as a selfie view is.
let preview = try camera.frames(bufferSize: 2, output: OutputFormat(.argb, size: Size(width: 640, height: 360), mirrored: true))
try camera.start()
let previewing = Task(executorPreference: camera.captureExecutor) {
    for try await frame in preview {
        frame.withFrame { window.draw($0) }
    }
}
