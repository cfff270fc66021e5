import MediaDevices

// The cameras and microphones this user may open, and what could not be read.
let cameras = await CaptureDevice.discover()
let audio = await AudioDevice.discover()
for camera in cameras.devices { print("camera:", camera.name, camera.path) }
for microphone in audio.inputs { print("microphone:", microphone.description, microphone.uniqueID) }
for problem in cameras.problems + audio.problems { print("skipped:", problem) }
