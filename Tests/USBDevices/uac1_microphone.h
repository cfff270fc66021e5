// uac1_microphone.h: internals shared by the UAC1 microphone's two files (uac1_microphone.c,
// uac1_descriptors.c). The public API is in include/usb_devices.h.
#ifndef UAC1_MICROPHONE_H
#define UAC1_MICROPHONE_H
#include <stddef.h>
#include <stdint.h>
#include "usb_devices.h"
#include "usbip_transport.h"

enum {
    UAC1_CONTROL_INTERFACE = 0,
    UAC1_STREAMING_INTERFACE = 1,
    UAC1_ENDPOINT = 0x81,                  // isochronous IN
    UAC1_SAMPLES_PER_PACKET = 48,          // 48 kHz, one packet per 1 ms frame
    UAC1_MAX_PACKET = 100,                 // room for the 96 bytes of 48 S16 samples
    UAC1_CONFIGURATION_LENGTH = 100,       // every descriptor of configuration 1
    UAC1_FUNCTION_LENGTH = 100 - 9,        // its interfaces' descriptors (the configuration less its header)
    UAC1_STRING_MANUFACTURER = 1,
    UAC1_STRING_PRODUCT = 2,
    UAC1_STRING_SERIAL = 3,
};

/// Writes descriptor `type` (1 device, 2 configuration, 3 string) number `index` into `out`
/// (at most `capacity` bytes; `serial` is string 3). Returns its full length, or -1 (STALL) for
/// a descriptor the microphone does not have.
int uac1_descriptor(uint8_t type, uint8_t index, const char *serial, uint8_t *out, size_t capacity);

/// Writes the audio function's descriptors (UAC1_FUNCTION_LENGTH bytes: AudioControl interface
/// `first_interface`, AudioStreaming `first_interface` + 1, IN endpoint `endpoint` polled every
/// `interval`: 1 at full speed, 4 (8 microframes, 1 ms) at high speed) into `out`.
void uac1_function_descriptors(uint8_t first_interface, uint8_t endpoint, uint8_t interval, uint8_t out[UAC1_FUNCTION_LENGTH]);

// The microphone as a function of a device that owns the transport (the composite webcam).
/// A microphone not plugged in, answering on interfaces `first_interface` and the next and on
/// IN endpoint `endpoint`. NULL (reason in `error`) on bad arguments.
usbdev_microphone *uac1_microphone_new(const char *serial, double frequency, double amplitude,
                                       uint8_t first_interface, uint8_t endpoint, char *error, size_t error_size);
/// A new enumeration: not configured, not streaming. Before the transport is attached.
void uac1_microphone_reset(usbdev_microphone *microphone);
/// Starts the device thread on `transport` (attached by the caller). Returns 0 or an errno.
int uac1_microphone_start(usbdev_microphone *microphone, usbip_transport *transport, char *error, size_t error_size);
/// Gives it the composite webcam's A/V test mode (webcam_av.h), before it is plugged in.
struct webcam_av;
void uac1_microphone_set_av(usbdev_microphone *mic, struct webcam_av *av);
/// Stops and joins the device thread (unplug the transport first to wake it at once); the
/// transport stays the caller's to free.
void uac1_microphone_join(usbdev_microphone *microphone);
/// Answers a control request addressed to the microphone's interfaces or endpoint (and the
/// standard device requests, as the microphone alone answers them). Runs on the reader thread.
int uac1_control(void *microphone, const struct usb_setup *setup, uint8_t *data);

#endif
