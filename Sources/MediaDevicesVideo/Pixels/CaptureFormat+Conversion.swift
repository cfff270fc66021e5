import MediaDevicesCore
extension CaptureFormat {
    /// Whether the pixel pipeline reads this format: converting consumers (`frames(output:)`,
    /// ``ConvertingConsumer``, `capture --output-format`, Y4M files) can take its frames.
    /// `mediadevices formats` marks the others.
    public var isConvertible: Bool { FrameConverter.canConvert(pixelFormat) }
}
