extension CaptureDevice {
    /// Whether this camera is a virtual one, which an application choosing its input should pass
    /// over so as not to read its own output: a v4l2loopback device (driver `v4l2 loopback`,
    /// whoever writes to it: a ``VirtualCamera``, OBS, FFmpeg), or a PipeWire node a
    /// ``VirtualCamera`` publishes (it carries the property `mediadevices.virtual` = `true`) or
    /// that wraps a v4l2loopback device. `mediadevices list` marks these `virtual`.
    public var isVirtual: Bool {
        if driver == LoopbackWriter.driverName { return true }
        return pipeWireNodes.contains { node in
            node.properties[PipeWireCameraNode.virtualMarkerKey] == "true" || node.v4l2Driver == LoopbackWriter.driverName
        }
    }
}
