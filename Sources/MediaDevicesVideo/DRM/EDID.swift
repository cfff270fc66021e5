import MediaDevicesCore
/// The few EDID fields MediaDevices reads (VESA E-EDID 1.4, base block). Debian 12 has no
/// EDID library (libdisplay-info arrives in Debian 13), and the monitor name is one field.
enum EDID {
    /// The monitor name: the text of the first display descriptor of type 0xFC in the four
    /// 18-byte descriptors at offset 54, ended by a line feed and padded with spaces.
    /// `nil` for a block that is too short, has a wrong header, or has no such descriptor.
    static func monitorName(_ bytes: [UInt8]) -> String? {
        let header: [UInt8] = [0x00, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x00]
        guard bytes.count >= 128, Array(bytes[0..<8]) == header else { return nil }
        for start in stride(from: 54, through: 108, by: 18) {
            // A display descriptor starts 00 00 00 <tag> 00; a detailed timing has a pixel clock.
            guard bytes[start] == 0, bytes[start + 1] == 0, bytes[start + 3] == 0xFC else { continue }
            var text = bytes[(start + 5)..<(start + 18)].prefix { $0 != 0x0A }
            while text.last == 0x20 { text.removeLast() }
            let name = String(decoding: text.map { $0 >= 0x20 && $0 < 0x7F ? $0 : UInt8(ascii: "?") }, as: UTF8.self)
            return name.isEmpty ? nil : name
        }
        return nil
    }
}
