// uac1_descriptors.c: the descriptors of the UAC1 microphone (USB Audio Class 1.0, full speed):
// one configuration with an AudioControl interface (input terminal "microphone" -> output
// terminal "USB streaming") and an AudioStreaming interface whose alternate setting 1 carries
// 48 kHz mono S16LE on the isochronous IN endpoint 0x81. See uac1_microphone.c for the requests.
#include "uac1_microphone.h"
#include "usb_devices.h"

#include <string.h>

// Little-endian 16-bit and 24-bit fields, as descriptors hold them.
#define LE16(v) (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff)
#define LE24(v) (uint8_t)((v) & 0xff), (uint8_t)(((v) >> 8) & 0xff), (uint8_t)(((v) >> 16) & 0xff)

enum {
    INPUT_TERMINAL_ID = 1,
    OUTPUT_TERMINAL_ID = 2,
    // Class-specific AudioControl descriptors: header (9) + input terminal (12) + output terminal (9).
    AC_CLASS_LENGTH = 9 + 12 + 9,
};

static const uint8_t device_descriptor[18] = {
    18, 0x01,                     // bLength, DEVICE
    LE16(0x0200),                 // bcdUSB 2.0 (below 2.1: no BOS descriptor)
    0x00, 0x00, 0x00,             // class, subclass, protocol: per interface
    64,                           // bMaxPacketSize0
    LE16(0x1209),                 // idVendor (pid.codes)
    LE16(USBDEV_MICROPHONE_PRODUCT_ID),
    LE16(0x0100),                 // bcdDevice
    UAC1_STRING_MANUFACTURER, UAC1_STRING_PRODUCT, UAC1_STRING_SERIAL,
    1,                            // bNumConfigurations
};

/// The configuration's header: two interfaces, bus powered, 100 mA.
static const uint8_t configuration_header[9] = {9, 0x02, LE16(UAC1_CONFIGURATION_LENGTH), 2, 1, 0, 0x80, 50};

/// The audio function's descriptors as the microphone alone has them (interfaces 0 and 1,
/// endpoint 0x81, polled every frame); uac1_function_descriptors patches them for another place.
static const uint8_t function_descriptors[UAC1_FUNCTION_LENGTH] = {
    // Interface 0: AudioControl (class 1, subclass 1), no endpoints.
    9, 0x04, UAC1_CONTROL_INTERFACE, 0, 0, 0x01, 0x01, 0x00, 0,
    // AC header: bcdADC 1.00, total length of the class-specific AC descriptors, one streaming
    // interface in the collection (interface 1).
    9, 0x24, 0x01, LE16(0x0100), LE16(AC_CLASS_LENGTH), 1, UAC1_STREAMING_INTERFACE,
    // Input terminal 1: microphone (0x0201), mono, no spatial location.
    12, 0x24, 0x02, INPUT_TERMINAL_ID, LE16(0x0201), 0, 1, LE16(0x0000), 0, 0,
    // Output terminal 2: USB streaming (0x0101), fed by the input terminal.
    9, 0x24, 0x03, OUTPUT_TERMINAL_ID, LE16(0x0101), 0, INPUT_TERMINAL_ID, 0,

    // Interface 1, alternate 0: AudioStreaming (class 1, subclass 2), zero bandwidth.
    9, 0x04, UAC1_STREAMING_INTERFACE, 0, 0, 0x01, 0x02, 0x00, 0,
    // Interface 1, alternate 1: one isochronous endpoint.
    9, 0x04, UAC1_STREAMING_INTERFACE, 1, 1, 0x01, 0x02, 0x00, 0,
    // AS general: linked to output terminal 2, 1 frame of delay, PCM (0x0001).
    7, 0x24, 0x01, OUTPUT_TERMINAL_ID, 1, LE16(0x0001),
    // Type I format: mono, 2-byte subframes, 16 bits, one discrete rate.
    11, 0x24, 0x02, 0x01, 1, 2, 16, 1, LE24(USBDEV_MICROPHONE_RATE),
    // Endpoint 0x81: isochronous, asynchronous (0x05), 1 ms interval. Audio-class endpoints are
    // 9 bytes long (bRefresh, bSynchAddress).
    9, 0x05, UAC1_ENDPOINT, 0x05, LE16(UAC1_MAX_PACKET), 1, 0, 0,
    // Class-specific endpoint: sampling frequency control (bit 0), no lock delay.
    7, 0x25, 0x01, 0x01, 0, LE16(0),
};

/// Where uac1_function_descriptors patches: the AudioControl interface's number, the AC
/// header's streaming interface, both AudioStreaming alternates' number, the endpoint's address
/// and its bInterval.
enum { AT_CONTROL = 2, AT_COLLECTION = 17, AT_IDLE = 41, AT_STREAMING = 50, AT_ENDPOINT = 77, AT_INTERVAL = 81 };

void uac1_function_descriptors(uint8_t first_interface, uint8_t endpoint, uint8_t interval, uint8_t out[UAC1_FUNCTION_LENGTH]) {
    memcpy(out, function_descriptors, UAC1_FUNCTION_LENGTH);
    out[AT_CONTROL] = first_interface;
    out[AT_COLLECTION] = out[AT_IDLE] = out[AT_STREAMING] = first_interface + 1;
    out[AT_ENDPOINT] = endpoint;
    out[AT_INTERVAL] = interval;
}

/// Copies `source` into `out` (at most `capacity` bytes); returns the full length.
static int copy_out(uint8_t *out, size_t capacity, const uint8_t *source, size_t length) {
    memcpy(out, source, length < capacity ? length : capacity);
    return (int)length;
}

/// A string descriptor made of an ASCII string (UTF-16LE, at most 126 characters).
static int string_descriptor(const char *text, uint8_t *out, size_t capacity) {
    uint8_t descriptor[2 + 2 * 126];
    size_t characters = strlen(text);
    if (characters > 126) characters = 126;
    descriptor[0] = (uint8_t)(2 + 2 * characters);
    descriptor[1] = 0x03;
    for (size_t i = 0; i < characters; i++) {
        descriptor[2 + 2 * i] = (uint8_t)text[i];
        descriptor[3 + 2 * i] = 0;
    }
    return copy_out(out, capacity, descriptor, descriptor[0]);
}

int uac1_descriptor(uint8_t type, uint8_t index, const char *serial, uint8_t *out, size_t capacity) {
    static const uint8_t languages[4] = {4, 0x03, LE16(0x0409)};  // English (United States)
    switch (type) {
    case 0x01: return index == 0 ? copy_out(out, capacity, device_descriptor, sizeof device_descriptor) : -1;
    case 0x02: {
        if (index != 0) return -1;
        uint8_t configuration[UAC1_CONFIGURATION_LENGTH];
        memcpy(configuration, configuration_header, sizeof configuration_header);
        memcpy(configuration + sizeof configuration_header, function_descriptors, UAC1_FUNCTION_LENGTH);
        return copy_out(out, capacity, configuration, sizeof configuration);
    }
    case 0x03:
        switch (index) {
        case 0: return copy_out(out, capacity, languages, sizeof languages);
        case UAC1_STRING_MANUFACTURER: return string_descriptor(USBDEV_MANUFACTURER, out, capacity);
        case UAC1_STRING_PRODUCT: return string_descriptor(USBDEV_MICROPHONE_PRODUCT, out, capacity);
        case UAC1_STRING_SERIAL: return string_descriptor(serial, out, capacity);
        default: return -1;
        }
    default: return -1;  // device qualifier (a full-speed-only device), other-speed, BOS: STALL
    }
}
