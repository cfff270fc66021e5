import MediaDevicesCore
/// A four-character code as V4L2 and DRM use it: four ASCII bytes packed little-endian
/// (`'Y' | 'U' << 8 | 'Y' << 16 | 'V' << 24`). Bit 31 marks big-endian variants in V4L2.
package struct FourCC: RawRepresentable, Hashable, Sendable, Comparable, CustomStringConvertible,
    ExpressibleByStringLiteral, Codable
{
    /// The packed 32-bit code.
    package let rawValue: UInt32

    /// Wraps a packed code. Every value is accepted: unknown codes are kept, never dropped.
    package init(rawValue: UInt32) { self.rawValue = rawValue }

    /// Packs up to four characters (shorter strings are padded with spaces, as `'R8  '`).
    /// Only the low byte of each character's scalar value is used.
    package init(_ text: String) {
        var bytes = Array(text.unicodeScalars.prefix(4).map { UInt32($0.value & 0xFF) })
        while bytes.count < 4 { bytes.append(0x20) }
        rawValue = bytes[0] | bytes[1] << 8 | bytes[2] << 16 | bytes[3] << 24
    }

    /// Creates a code from a string literal such as `"YUYV"`.
    package init(stringLiteral value: String) { self.init(value) }

    /// Whether bit 31 (V4L2's big-endian flag) is set.
    package var isBigEndian: Bool { rawValue & 0x8000_0000 != 0 }

    /// The four characters, with non-printable bytes shown as `.` and the big-endian flag as a
    /// trailing `-BE`, the way `v4l2-ctl` prints them.
    package var description: String {
        var text = ""
        for shift in stride(from: 0, to: 32, by: 8) {
            var byte = UInt8((rawValue >> UInt32(shift)) & 0xFF)
            if shift == 24 { byte &= 0x7F }
            text.unicodeScalars.append(byte >= 0x20 && byte < 0x7F ? Unicode.Scalar(byte) : ".")
        }
        return isBigEndian ? text + "-BE" : text
    }

    /// Orders codes by their packed value.
    package static func < (lhs: FourCC, rhs: FourCC) -> Bool { lhs.rawValue < rhs.rawValue }

    /// Decodes from the four-character string as `description` writes it (a trailing `-BE`
    /// sets the big-endian bit), or from the packed number.
    package init(from decoder: Decoder) throws {
        let container = try decoder.singleValueContainer()
        if let number = try? container.decode(UInt32.self) {
            self.init(rawValue: number)
            return
        }
        let text = try container.decode(String.self)
        if text.hasSuffix("-BE") {
            self.init(rawValue: FourCC(String(text.dropLast(3))).rawValue | 0x8000_0000)
        } else {
            self.init(text)
        }
    }

    /// Encodes as the four-character string.
    package func encode(to encoder: Encoder) throws {
        var container = encoder.singleValueContainer()
        try container.encode(description)
    }
}
