// usb_webcam.c: the composite webcam: the UVC camera (uvc_camera.c) and the UAC1 microphone
// (uac1_microphone.c) as the two functions of one high-speed USB device on one USB/IP transport,
// laid out as real webcams are: the video function's interface association (interfaces 0 and
// 1, bulk endpoint 0x81), then the audio function's (interfaces 2 and 3, isochronous endpoint
// 0x82, bInterval 4: one 48-sample packet per millisecond).
//
// This file only joins them: the descriptors are the two functions' own under one device and
// configuration descriptor, and each control request goes to the function it addresses (by
// interface or endpoint number); the device's standard requests (descriptors, configuration)
// are answered here. Each function keeps its own thread on the shared transport. Both share the
// A/V test mode (webcam_av.c): dark frames and silence, and a flash and a click at one instant.
#include "uac1_microphone.h"
#include "usb_plug.h"
#include "uvc_camera.h"
#include "webcam_av.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum {
    AUDIO_INTERFACE = 2,          // AudioControl; AudioStreaming is the next
    AUDIO_ENDPOINT = 0x82,
    AUDIO_INTERVAL = 4,           // 2^(4-1) microframes: 1 ms
    CONFIGURATION_HEADER = 9,
    AUDIO_ASSOCIATION = 8,
    GET_DESCRIPTOR = 0x06, GET_CONFIGURATION = 0x08, SET_CONFIGURATION = 0x09,
};

struct usbdev_webcam {
    usbdev_camera *camera;
    usbdev_microphone *microphone;
    usb_plug plug;  // the transport both share (API functions; neither function's thread takes its lock)
    struct webcam_av av;  // the flash and the click (both functions' threads, its own lock)
};

/// The configuration: header, the video function, the audio function's interface association
/// and its interfaces. Returns its full length; copies at most `capacity` bytes into `out`.
static int configuration(uint8_t *out, size_t capacity) {
    uint8_t whole[4096];
    size_t video = uvc_function_descriptors(whole + CONFIGURATION_HEADER, sizeof whole - CONFIGURATION_HEADER);
    size_t length = CONFIGURATION_HEADER + video + AUDIO_ASSOCIATION + UAC1_FUNCTION_LENGTH;
    if (length > sizeof whole) return -1;
    // Four interfaces, bus powered, 500 mA.
    const uint8_t header[CONFIGURATION_HEADER] = {9, 0x02, (uint8_t)length, (uint8_t)(length >> 8), 4, 1, 0, 0x80, 250};
    memcpy(whole, header, sizeof header);
    // Interface association: interfaces 2 and 3 are one audio function (class 1, subclass 2).
    const uint8_t association[AUDIO_ASSOCIATION] = {8, 0x0B, AUDIO_INTERFACE, 2, 0x01, 0x02, 0x00, 0};
    memcpy(whole + CONFIGURATION_HEADER + video, association, sizeof association);
    uac1_function_descriptors(AUDIO_INTERFACE, AUDIO_ENDPOINT, AUDIO_INTERVAL,
                              whole + CONFIGURATION_HEADER + video + AUDIO_ASSOCIATION);
    memcpy(out, whole, length < capacity ? length : capacity);
    return (int)length;
}

/// Whether a request is the microphone's: to its interfaces or to its endpoint.
static int for_microphone(const struct usb_setup *setup) {
    switch (setup->request_type & 0x1f) {
    case 1: return (setup->index & 0xff) >= AUDIO_INTERFACE;
    case 2: return (setup->index & 0xff) == AUDIO_ENDPOINT;
    default: return 0;
    }
}

static int webcam_control(void *context, const struct usb_setup *setup, uint8_t *data) {
    usbdev_webcam *webcam = context;
    int standard = (setup->request_type & 0x60) == 0, to_device = (setup->request_type & 0x1f) == 0;
    if (standard && to_device && setup->request == GET_DESCRIPTOR && (setup->value >> 8) == 2) {
        return (setup->value & 0xff) == 0 ? configuration(data, setup->length) : -1;
    }
    if (standard && to_device && setup->request == SET_CONFIGURATION) {
        // Both functions learn it: the microphone resets its streaming alternate.
        int camera = uvc_camera_control(webcam->camera, setup, data);
        return camera < 0 ? camera : uac1_control(webcam->microphone, setup, data);
    }
    if (for_microphone(setup)) return uac1_control(webcam->microphone, setup, data);
    // The device's other requests (its device and string descriptors, the configuration, status)
    // are the camera's answers: it carries the webcam's product ID, name and serial.
    return uvc_camera_control(webcam->camera, setup, data);
}

static const usbip_device_ops webcam_ops = {webcam_control};

/// Plugs in: a new enumeration for both functions, then the transport and their threads.
static usbip_transport *attach(void *device, char *error, size_t error_size) {
    usbdev_webcam *webcam = device;
    uvc_camera_reset(webcam->camera);
    uac1_microphone_reset(webcam->microphone);
    usbip_transport *transport = usbip_attach(&webcam_ops, webcam, USBIP_SPEED_HIGH, error, error_size);
    if (!transport) return NULL;
    if (uvc_camera_start(webcam->camera, transport, error, error_size) != 0) {
        usbip_free(transport);
        return NULL;
    }
    if (uac1_microphone_start(webcam->microphone, transport, error, error_size) != 0) {
        usbip_unplug(transport);
        uvc_camera_join(webcam->camera);
        usbip_free(transport);
        return NULL;
    }
    return transport;
}

/// Unplugs (both functions' threads wake with -1), joins them and frees the transport.
static void detach(void *device, usbip_transport *transport) {
    usbdev_webcam *webcam = device;
    usbip_unplug(transport);
    uvc_camera_join(webcam->camera);
    uac1_microphone_join(webcam->microphone);
    usbip_free(transport);
}

usbdev_webcam *usbdev_webcam_plug(const char *serial, double frequency, double amplitude, char *error, size_t error_size) {
    usbdev_webcam *webcam = calloc(1, sizeof *webcam);
    if (!webcam) { snprintf(error, error_size, "out of memory"); return NULL; }
    usb_plug_init(&webcam->plug, webcam, attach, detach);
    webcam_av_init(&webcam->av);
    webcam->camera = uvc_camera_new(serial ? serial : "", USBDEV_WEBCAM_PRODUCT_ID, USBDEV_WEBCAM_PRODUCT, error, error_size);
    webcam->microphone = uac1_microphone_new(serial, frequency, amplitude, AUDIO_INTERFACE, AUDIO_ENDPOINT, error, error_size);
    if (webcam->camera) webcam->camera->av = &webcam->av;
    if (webcam->microphone) uac1_microphone_set_av(webcam->microphone, &webcam->av);
    if (!webcam->camera || !webcam->microphone || usb_plug_replug(&webcam->plug, error, error_size) != 0) {
        usbdev_webcam_destroy(webcam);
        return NULL;
    }
    return webcam;
}

int usbdev_webcam_unplug(usbdev_webcam *webcam) { return usb_plug_unplug(&webcam->plug); }

int usbdev_webcam_replug(usbdev_webcam *webcam, char *error, size_t error_size) {
    return usb_plug_replug(&webcam->plug, error, error_size);
}

void usbdev_webcam_destroy(usbdev_webcam *webcam) {
    if (!webcam) return;
    usb_plug_destroy(&webcam->plug);
    usbdev_camera_destroy(webcam->camera);  // stopped: frees only
    usbdev_microphone_destroy(webcam->microphone);
    webcam_av_destroy(&webcam->av);
    free(webcam);
}

int usbdev_webcam_is_plugged(usbdev_webcam *webcam) { return usb_plug_is_plugged(&webcam->plug); }

usbdev_camera *usbdev_webcam_camera(usbdev_webcam *webcam) { return webcam->camera; }
usbdev_microphone *usbdev_webcam_microphone(usbdev_webcam *webcam) { return webcam->microphone; }

void usbdev_webcam_set_av_test(usbdev_webcam *webcam, int on) {
    pthread_mutex_lock(&webcam->av.lock);
    webcam->av.enabled = on != 0;
    webcam->av.requested = webcam->av.flashed;  // no flash left over from before
    webcam->av.click_at_ns = 0;
    pthread_mutex_unlock(&webcam->av.lock);
}

uint32_t usbdev_webcam_flash(usbdev_webcam *webcam) {
    pthread_mutex_lock(&webcam->av.lock);
    uint32_t number = webcam->av.enabled ? ++webcam->av.requested : 0;
    pthread_mutex_unlock(&webcam->av.lock);
    return number;
}

int usbdev_webcam_av_event(usbdev_webcam *webcam, uint32_t number, usbdev_av_event *event) {
    if (number == 0) return 0;
    pthread_mutex_lock(&webcam->av.lock);
    const usbdev_av_event *kept = &webcam->av.events[(number - 1) % WEBCAM_AV_EVENTS];
    int made = kept->number == number;
    if (made) *event = *kept;
    pthread_mutex_unlock(&webcam->av.lock);
    return made;
}
