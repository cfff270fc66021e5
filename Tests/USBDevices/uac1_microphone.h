// uac1_microphone.h: internals shared by the UAC1 microphone's two files (uac1_microphone.c,
// uac1_descriptors.c). The public API is in include/usb_devices.h.
#ifndef UAC1_MICROPHONE_H
#define UAC1_MICROPHONE_H
#include <stddef.h>
#include <stdint.h>

enum {
    UAC1_CONTROL_INTERFACE = 0,
    UAC1_STREAMING_INTERFACE = 1,
    UAC1_ENDPOINT = 0x81,                  // isochronous IN
    UAC1_SAMPLES_PER_PACKET = 48,          // 48 kHz, one packet per 1 ms frame
    UAC1_MAX_PACKET = 100,                 // room for the 96 bytes of 48 S16 samples
    UAC1_CONFIGURATION_LENGTH = 100,       // every descriptor of configuration 1
    UAC1_STRING_MANUFACTURER = 1,
    UAC1_STRING_PRODUCT = 2,
    UAC1_STRING_SERIAL = 3,
};

/// Writes descriptor `type` (1 device, 2 configuration, 3 string) number `index` into `out`
/// (at most `capacity` bytes; `serial` is string 3). Returns its full length, or -1 (STALL) for
/// a descriptor the microphone does not have.
int uac1_descriptor(uint8_t type, uint8_t index, const char *serial, uint8_t *out, size_t capacity);

#endif
