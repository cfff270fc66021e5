import Foundation   // exit
import MediaDevices

let cameras = await CaptureDevice.discover()
let audio = await AudioDevice.discover()
guard let device = cameras.devices.first, let microphone = audio.inputs.first(where: \.isDefault) ?? audio.inputs.first else {
    print("no camera or no microphone:", cameras.problems + audio.problems)
    exit(1)
}

// Ask for what a preview needs; the camera says what it could do.
let camera = CameraSource(device: device, request: FormatRequest(size: .hd720, frameRate: FrameRate(30)))
try camera.initialize()
if let negotiation = camera.negotiation {
    print("camera gives", negotiation.format, negotiation.adjustments)
}
