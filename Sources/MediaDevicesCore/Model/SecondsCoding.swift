/// A `Duration` property that encodes as a plain number of seconds (`0.0008125`), so that the
/// statistics' JSON stays readable by tools that know nothing of Swift's `Duration`.
@propertyWrapper
public struct SecondsCoding: Sendable, Hashable, Codable {
    /// The duration.
    public var wrappedValue: Duration

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Duration) { self.wrappedValue = wrappedValue }

    /// Reads seconds.
    public init(from decoder: any Decoder) throws {
        wrappedValue = .seconds(try decoder.singleValueContainer().decode(Double.self))
    }

    /// Writes seconds.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.inSeconds)
    }
}

/// The same for an optional duration (absent when nil).
@propertyWrapper
public struct OptionalSecondsCoding: Sendable, Hashable, Codable {
    /// The duration, if there is one.
    public var wrappedValue: Duration?

    /// Wraps `wrappedValue`.
    public init(wrappedValue: Duration?) { self.wrappedValue = wrappedValue }

    /// Reads seconds or null.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : .seconds(try container.decode(Double.self))
    }

    /// Writes seconds or null.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue.inSeconds) } else { try container.encodeNil() }
    }
}
