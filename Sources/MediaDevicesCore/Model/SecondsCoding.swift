/// A `Duration` property that encodes as a plain number of seconds (`0.0008125`), so that the
/// statistics' JSON stays readable by tools that know nothing of Swift's `Duration`.
@propertyWrapper
package struct SecondsCoding: Sendable, Hashable, Codable {
    /// The duration.
    package var wrappedValue: Duration

    /// Wraps `wrappedValue`.
    package init(wrappedValue: Duration) { self.wrappedValue = wrappedValue }

    /// Reads seconds.
    package init(from decoder: any Decoder) throws {
        wrappedValue = .seconds(try decoder.singleValueContainer().decode(Double.self))
    }

    /// Writes seconds.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(wrappedValue.inSeconds)
    }
}

/// The same for an optional duration (absent when nil).
@propertyWrapper
package struct OptionalSecondsCoding: Sendable, Hashable, Codable {
    /// The duration, if there is one.
    package var wrappedValue: Duration?

    /// Wraps `wrappedValue`.
    package init(wrappedValue: Duration?) { self.wrappedValue = wrappedValue }

    /// Reads seconds or null.
    package init(from decoder: any Decoder) throws {
        let container = try decoder.singleValueContainer()
        wrappedValue = container.decodeNil() ? nil : .seconds(try container.decode(Double.self))
    }

    /// Writes seconds or null.
    package func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        if let wrappedValue { try container.encode(wrappedValue.inSeconds) } else { try container.encodeNil() }
    }
}
