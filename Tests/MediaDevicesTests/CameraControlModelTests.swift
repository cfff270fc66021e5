import Foundation
import XCTest
@testable import MediaDevices
@testable import MediaDevicesAudio
@testable import MediaDevicesVideo
@testable import MediaDevicesCore

/// The control model without a device: v4l2-ctl's names, settings parsed from text, values
/// from the kernel's 64-bit fields, payloads, and the words an error uses for what a control takes.
final class CameraControlModelTests: XCTestCase {
    func testKeysAreV4L2CtlNames() {
        XCTAssertEqual(CameraControl.key(for: "Brightness"), "brightness")
        XCTAssertEqual(CameraControl.key(for: "White Balance, Automatic"), "white_balance_automatic")
        XCTAssertEqual(CameraControl.key(for: "Exposure Time, Absolute"), "exposure_time_absolute")
        XCTAssertEqual(CameraControl.key(for: "U8 2x3x4x5 Array"), "u8_2x3x4x5_array")
        XCTAssertEqual(CameraControl.key(for: "  (Leading) and trailing!! "), "leading_and_trailing")
        XCTAssertEqual(CameraControl.key(for: "Integer 32 Bits"), "integer_32_bits")
    }

    func testSettingsParseFromText() {
        XCTAssertEqual(ControlSetting(parsing: "brightness=10")?.description, "brightness=10")
        XCTAssertEqual(ControlSetting(parsing: " power_line_frequency = 60 Hz ")?.value, .text("60 Hz"))
        XCTAssertEqual(ControlSetting(parsing: "power_line_frequency = 60 Hz")?.target, .name("power_line_frequency"))
        XCTAssertNil(ControlSetting(parsing: "brightness"))
        XCTAssertNil(ControlSetting(parsing: "=5"))
        XCTAssertEqual(ControlSetting(.brightness, -3).description, "0x980900=-3")
    }

    func testIntegerValuesFromTheKernelsFields() {
        // A 32-bit control fills only the low half of value64.
        XCTAssertEqual(ControlType.integer.integerValue(0x0000_0000_ffff_fff6), -10)
        XCTAssertEqual(ControlType.menu.integerValue(3), 3)
        XCTAssertEqual(ControlType.bitmask.integerValue(0x0000_0000_8000_2000), 0x8000_2000, "a mask, not a negative number")
        XCTAssertEqual(ControlType.integer64.integerValue(-1234567890123), -1234567890123)
    }

    func testPayloadsRoundTrip() {
        let array = ControlValue.array([1, 300, 65535])
        XCTAssertEqual(array.payload(elementSize: 2), [1, 0, 44, 1, 255, 255])
        XCTAssertEqual(ControlValue(payload: array.payload(elementSize: 2), type: .u16, elementSize: 2), array)
        XCTAssertEqual(ControlValue.string("ab").payload(elementSize: 1), [97, 98, 0])
        XCTAssertEqual(ControlValue(payload: [97, 98, 0, 0], type: .string, elementSize: 1), .string("ab"))
    }

    func testWhatAControlTakesInWords() {
        let brightness = CameraControl(id: 0x0098_0900, name: "Brightness", type: .integer, minimum: -64, maximum: 64, step: 2,
                                       defaultValue: 0, flags: [], value: .integer(0))
        XCTAssertEqual(ControlResolver.takes(brightness), "an integer from -64 to 64 in steps of 2")
        let menu = CameraControl(id: 0x009a_0901, name: "Auto Exposure", type: .menu, minimum: 0, maximum: 3, step: 1, defaultValue: 3,
                                 flags: [], menu: [.init(index: 1, name: "Manual Mode"), .init(index: 3, name: "Aperture Priority Mode")],
                                 value: .integer(3))
        XCTAssertEqual(ControlResolver.takes(menu), "one of 1 (Manual Mode), 3 (Aperture Priority Mode)")
        XCTAssertEqual(menu.menuEntry("manual mode")?.index, 1)
        XCTAssertEqual(menu.menuEntry("3")?.name, "Aperture Priority Mode")
        XCTAssertNil(menu.menuEntry("2"), "a gap in the menu")
        XCTAssertEqual(menu.key, "auto_exposure")
        XCTAssertEqual(menu.controlClass, .camera)
        XCTAssertTrue(menu.isWritable)
        XCTAssertEqual(ControlFlags([.inactive, .volatile]).description, "inactive,volatile")
        XCTAssertEqual([brightness, menu].brightness?.name, "Brightness")
        XCTAssertEqual([brightness, menu][named: "AUTO EXPOSURE"]?.id, 0x009a_0901)
    }

    func testValuesAreReadableJSON() throws {
        let values: [ControlValue] = [.integer(-5), .string("ab"), .array([1, 2]), .none]
        let json = String(decoding: try JSONEncoder().encode(values), as: UTF8.self)
        XCTAssertEqual(json, #"[-5,"ab",[1,2],null]"#)
        XCTAssertEqual(try JSONDecoder().decode([ControlValue].self, from: Data(json.utf8)), values)
    }

    /// libcamera's floating-point controls (through PipeWire): set from text or a number, held
    /// to their range, written to JSON as numbers; a whole number read back (a profile file
    /// writes 1.0 as 1) still sets a float control.
    func testFloatControlsResolveWithinTheirRange() throws {
        let contrast = CameraControl(id: 10, name: "Contrast", type: .float, minimum: 0, maximum: 0, step: 0, defaultValue: 0, flags: [],
                                     floatRange: .init(minimum: 0, maximum: 4, defaultValue: 1), value: .float(1))
        let resolver = ControlResolver(device: "pipewire:7", controls: [contrast])
        XCTAssertEqual(try resolver.resolve([ControlSetting(parsing: "contrast=2.5")!]).map(\.value), [.float(2.5)])
        XCTAssertEqual(try resolver.resolve([ControlSetting(id: 10, value: .integer(3))]).map(\.value), [.float(3)])
        XCTAssertEqual(try resolver.resolve([ControlSetting(id: 10, value: .float(0))]).map(\.value), [.float(0)])
        for text in ["4.5", "-0.1", "bright", "nan"] {
            XCTAssertThrowsError(try resolver.resolve([ControlSetting(parsing: "contrast=\(text)")!]), text) { error in
                XCTAssertEqual((error as? MediaDevicesError)?.code, .invalidValue, text)
                XCTAssertTrue("\(error)".contains("a number from 0.0 to 4.0"), "\(error)")
            }
        }
        XCTAssertEqual(ControlType.float.description, "float")
        XCTAssertFalse(ControlType.float.isInteger || ControlType.float.isCompound)
        let json = String(decoding: try JSONEncoder().encode([ControlValue.float(0.25), .float(-1.5)]), as: UTF8.self)
        XCTAssertEqual(json, "[0.25,-1.5]")
        XCTAssertEqual(try JSONDecoder().decode([ControlValue].self, from: Data(json.utf8)), [.float(0.25), .float(-1.5)])
    }
}
