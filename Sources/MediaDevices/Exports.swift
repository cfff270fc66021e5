// `import MediaDevices` gives an application every capability: the modules of the capability
// products (`MediaDevicesVideo`, `MediaDevicesAudio`, and `MediaDevicesCore` under both) are
// re-exported here, so code written against the umbrella needs no other import. The umbrella
// adds what spans capabilities: `DeviceMonitor`, which watches cameras, screens and sound cards.
@_exported import MediaDevicesCore
@_exported import MediaDevicesAudio
@_exported import MediaDevicesVideo
