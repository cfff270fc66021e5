// uac1_microphone.c: a USB Audio Class 1.0 microphone (full speed, 48 kHz mono S16LE on an
// asynchronous isochronous IN endpoint) served over USB/IP (usbip_transport.h), so that the
// kernel's snd-usb-audio binds it. Its descriptors are in uac1_descriptors.c.
//
// Threads: the transport's reader thread answers control requests (`control` below); the
// microphone's device thread completes the isochronous IN URBs the host queues on endpoint
// 0x81, 48 samples per 1 ms packet of a continuous-phase sine, paced by CLOCK_MONOTONIC so it
// never runs ahead of real time (under emulation it runs slower: samples are then late, never
// dropped or repeated). The API functions (include/usb_devices.h) take the plug state's lock
// (usb_plug.h); neither thread does, so plug/unplug may join them while holding it.
//
// Alone it is a device of its own (interfaces 0 and 1, endpoint 0x81, full speed); in the
// composite webcam (usb_webcam.c) it is that device's audio function (interfaces 2 and 3,
// endpoint 0x82, high speed), on the webcam's transport: the same requests and streaming, on
// the interface numbers and the endpoint in `first_interface` and `endpoint`.
#include "uac1_microphone.h"
#include "usb_devices.h"
#include "usb_plug.h"
#include "usbip_transport.h"
#include "webcam_av.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum {
    // Standard requests (USB 2.0, 9.4).
    GET_STATUS = 0x00, CLEAR_FEATURE = 0x01, GET_DESCRIPTOR = 0x06, GET_CONFIGURATION = 0x08,
    SET_CONFIGURATION = 0x09, GET_INTERFACE = 0x0A, SET_INTERFACE = 0x0B,
    // UAC1 class requests (audio10.pdf, A.9) and the endpoint control they address (A.10.2).
    UAC_SET_CUR = 0x01, UAC_GET_CUR = 0x81, SAMPLING_FREQ_CONTROL = 0x01,
};

/// How far the device clock may lag behind the wall clock before it is pulled forward (after an
/// idle time, or when the host is slow): the most it ever sends ahead of its own 1 ms pace.
static const uint64_t MAX_LAG_NS = 20000000;
static const uint64_t PACKET_NS = 1000000;  // one full-speed frame

struct usbdev_microphone {
    char serial[127];
    uint8_t first_interface, endpoint;    // its AudioControl interface (streaming: the next), its IN endpoint
    double phase, phase_step, amplitude;  // the tone (device thread only)
    usb_plug plug;                        // plugged alone (API functions); unused in the webcam
    usbip_transport *transport;           // the device thread's (its own or the webcam's); NULL while stopped
    pthread_t thread;
    atomic_int stop;                      // tells the device thread to end
    // Device state the host sets (reader thread), read anywhere.
    atomic_uint configuration, alternate;
    atomic_uint rate;
    // Streaming (device thread).
    uint64_t clock_ns;                    // wall-clock time of the next sample to send
    uint32_t packets_per_urb;             // the last URB's packet count, to pace the next one
    atomic_ullong samples_sent, unplug_time_ns;
    struct webcam_av *av;                 // the composite webcam's A/V test mode (NULL alone)
    uint32_t click_left;                  // samples of the click still to send (device thread)
};

// MARK: - Control requests (reader thread)

/// Copies `length` bytes of an IN answer into `data`, at most `setup->length` of them.
static int answer(const struct usb_setup *setup, uint8_t *data, const void *bytes, size_t length) {
    memcpy(data, bytes, length < setup->length ? length : setup->length);
    return (int)length;
}

/// SET_INTERFACE: the AudioControl interface has alternate 0 only; the AudioStreaming one has 0
/// (idle) and 1 (streaming).
static int set_interface(usbdev_microphone *mic, uint16_t interface, uint16_t alternate) {
    if (interface == mic->first_interface + UAC1_CONTROL_INTERFACE && alternate == 0) return 0;
    if (interface != mic->first_interface + UAC1_STREAMING_INTERFACE || alternate > 1) return -1;
    atomic_store(&mic->alternate, alternate);
    return 0;
}

/// The standard requests the hub driver, usbcore and snd-usb-audio send. Everything else STALLs.
static int standard_request(usbdev_microphone *mic, const struct usb_setup *setup, uint8_t *data) {
    static const uint8_t zero_status[2] = {0, 0};  // bus powered, no remote wakeup, not halted
    uint8_t byte;
    switch (setup->request) {
    case GET_STATUS: return answer(setup, data, zero_status, 2);
    case CLEAR_FEATURE: return 0;  // ENDPOINT_HALT: the endpoint never halts
    case GET_DESCRIPTOR:
        if (setup->request_type != 0x80) return -1;  // class descriptors of interfaces: none
        return uac1_descriptor((uint8_t)(setup->value >> 8), (uint8_t)setup->value, mic->serial, data, setup->length);
    case GET_CONFIGURATION:
        byte = (uint8_t)atomic_load(&mic->configuration);
        return answer(setup, data, &byte, 1);
    case SET_CONFIGURATION:
        if (setup->value > 1) return -1;
        atomic_store(&mic->configuration, setup->value);
        atomic_store(&mic->alternate, 0);
        return 0;
    case GET_INTERFACE:
        if (atomic_load(&mic->configuration) == 0 || setup->index < mic->first_interface
            || setup->index > mic->first_interface + UAC1_STREAMING_INTERFACE) return -1;
        byte = setup->index == mic->first_interface + UAC1_STREAMING_INTERFACE ? (uint8_t)atomic_load(&mic->alternate) : 0;
        return answer(setup, data, &byte, 1);
    case SET_INTERFACE:
        if (atomic_load(&mic->configuration) == 0) return -1;
        return set_interface(mic, setup->index, setup->value);
    default: return -1;
    }
}

/// UAC1 endpoint requests: SET_CUR / GET_CUR of the sampling frequency control of the IN
/// endpoint (3 bytes, little-endian Hz). The only rate is 48000.
static int class_request(usbdev_microphone *mic, const struct usb_setup *setup, uint8_t *data) {
    int to_endpoint = (setup->request_type & 0x1f) == 0x02;
    if (!to_endpoint || (setup->index & 0xff) != mic->endpoint || setup->value != SAMPLING_FREQ_CONTROL << 8) return -1;
    if (setup->request == UAC_SET_CUR && !(setup->request_type & 0x80)) {
        if (setup->length < 3) return -1;
        uint32_t hz = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16;
        if (hz != USBDEV_MICROPHONE_RATE) return -1;
        atomic_store(&mic->rate, hz);
        return 0;
    }
    if (setup->request == UAC_GET_CUR && (setup->request_type & 0x80)) {
        const uint8_t hz[3] = {USBDEV_MICROPHONE_RATE & 0xff, (USBDEV_MICROPHONE_RATE >> 8) & 0xff, USBDEV_MICROPHONE_RATE >> 16};
        return answer(setup, data, hz, 3);
    }
    return -1;  // GET_MIN/MAX/RES, pitch control: not implemented
}

/// The transport's control callback: standard and class requests; vendor requests STALL.
int uac1_control(void *context, const struct usb_setup *setup, uint8_t *data) {
    usbdev_microphone *mic = context;
    switch (setup->request_type & 0x60) {
    case 0x00: return standard_request(mic, setup, data);
    case 0x20: return class_request(mic, setup, data);
    default: return -1;
    }
}

static const usbip_device_ops microphone_ops = {.control = uac1_control};

// MARK: - Streaming (device thread)

/// The next sample of the tone, S16, with continuous phase across URBs, streams and replugs.
static int16_t next_sample(usbdev_microphone *mic) {
    double value = mic->amplitude * 32767.0 * sin(mic->phase);
    mic->phase += mic->phase_step;
    if (mic->phase >= 2 * M_PI) mic->phase -= 2 * M_PI;
    return (int16_t)lrint(value);
}

/// Fills an isochronous IN URB: 48 samples (S16LE) per packet, each packet one 1 ms frame.
/// Runs under the transport's queue lock: it must not block.
static int32_t fill_urb(void *context, uint8_t *buffer, uint32_t length, struct usbip_iso_packet *packets, uint32_t count) {
    usbdev_microphone *mic = context;
    if (count == 0) return -EPIPE;  // not isochronous: nothing else is on this endpoint
    uint64_t click_at = 0, sent = atomic_load(&mic->samples_sent);
    uint32_t click_number = 0;
    // A/V test mode: silence, and the click at its sample (sample j of this URB is recorded at
    // webcam_av_sample_time(clock_ns, j), the formula the flash's instant was chosen with).
    int silent = mic->av && webcam_av_samples(mic->av, mic->clock_ns, mic->clock_ns + count * PACKET_NS, &click_at, &click_number);
    uint32_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct usbip_iso_packet *packet = &packets[i];
        uint32_t room = packet->offset < length ? length - packet->offset : 0;
        if (room > packet->length) room = packet->length;
        uint32_t samples = room / 2 < UAC1_SAMPLES_PER_PACKET ? room / 2 : UAC1_SAMPLES_PER_PACKET;
        for (uint32_t s = 0; s < samples; s++) {
            uint16_t sample = (uint16_t)next_sample(mic);
            if (silent) {
                uint64_t at = webcam_av_sample_time(mic->clock_ns, (uint64_t)i * UAC1_SAMPLES_PER_PACKET + s);
                if (click_at && at >= click_at) {
                    webcam_av_clicked(mic->av, click_number, sent + total / 2 + s, at, usbip_now_ns());
                    mic->click_left = WEBCAM_AV_CLICK_SAMPLES * click_number;
                    click_at = 0;
                }
                sample = mic->click_left ? (mic->click_left--, (uint16_t)WEBCAM_AV_CLICK_LEVEL) : 0;
            }
            buffer[packet->offset + 2 * s] = (uint8_t)sample;
            buffer[packet->offset + 2 * s + 1] = (uint8_t)(sample >> 8);
        }
        packet->actual_length = 2 * samples;
        packet->status = 0;
        total += 2 * samples;
    }
    mic->clock_ns += count * PACKET_NS;
    mic->packets_per_urb = count;
    atomic_fetch_add(&mic->samples_sent, total / 2);
    return (int32_t)total;
}

/// Sleeps until the wall clock has "recorded" the next URB's samples (as many packets as the
/// last URB had). A clock that lags more than MAX_LAG_NS is pulled forward: no catch-up burst.
static void pace(usbdev_microphone *mic) {
    uint64_t now = usbip_now_ns();
    if (mic->clock_ns + MAX_LAG_NS < now) {
        // By whole packets (the sample grid stays), and never past a pending click's packet.
        uint64_t skip = (now - MAX_LAG_NS - mic->clock_ns) / PACKET_NS * PACKET_NS;
        mic->clock_ns = mic->av ? webcam_av_skip(mic->av, mic->clock_ns, skip, PACKET_NS) : mic->clock_ns + skip;
    }
    uint64_t ready = mic->clock_ns + mic->packets_per_urb * PACKET_NS;
    struct timespec until = {(time_t)(ready / 1000000000u), (long)(ready % 1000000000u)};
    while (ready > now && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {}
}

/// The device thread: completes URBs on its endpoint until told to stop or disconnected.
static void *device_main(void *argument) {
    usbdev_microphone *mic = argument;
    usbip_transport *transport = mic->transport;
    mic->clock_ns = usbip_now_ns();
    if (mic->av) webcam_av_skip(mic->av, mic->clock_ns, 0, PACKET_NS);  // a flash's instant starts from here
    mic->packets_per_urb = 1;
    while (!atomic_load(&mic->stop)) {
        int queued = usbip_wait_urb(transport, mic->endpoint, 100);
        if (queued < 0) break;
        if (queued == 0) continue;
        pace(mic);
        // 0: the host unlinked the URB meanwhile (streaming stopped); wait for the next one.
        if (usbip_complete_next(transport, mic->endpoint, 0, fill_urb, mic) < 0) break;
    }
    return NULL;
}

// MARK: - Plugging (API functions, under the plug state's lock)

void uac1_microphone_reset(usbdev_microphone *mic) {
    atomic_store(&mic->configuration, 0);  // a new enumeration
    atomic_store(&mic->alternate, 0);
    atomic_store(&mic->stop, 0);
}

int uac1_microphone_start(usbdev_microphone *mic, usbip_transport *transport, char *error, size_t error_size) {
    mic->transport = transport;
    int failed = pthread_create(&mic->thread, NULL, device_main, mic);
    if (failed) {
        snprintf(error, error_size, "pthread_create: %s", strerror(failed));
        mic->transport = NULL;
        return failed;
    }
    return 0;
}

void uac1_microphone_set_av(usbdev_microphone *mic, struct webcam_av *av) { mic->av = av; }

void uac1_microphone_join(usbdev_microphone *mic) {
    atomic_store(&mic->stop, 1);
    pthread_join(mic->thread, NULL);
    mic->transport = NULL;
}

/// Attaches to vhci and starts the device thread: the transport, or NULL (reason in `error`).
static usbip_transport *attach(void *device, char *error, size_t error_size) {
    usbdev_microphone *mic = device;
    uac1_microphone_reset(mic);
    usbip_transport *transport = usbip_attach(&microphone_ops, mic, USBIP_SPEED_FULL, error, error_size);
    if (transport && uac1_microphone_start(mic, transport, error, error_size) != 0) {
        usbip_free(transport);
        return NULL;
    }
    return transport;
}

/// Unplugs (if the host still holds it), joins the device thread and frees the transport.
static void detach(void *device, usbip_transport *transport) {
    usbdev_microphone *mic = device;
    if (usbip_connected(transport)) atomic_store(&mic->unplug_time_ns, usbip_now_ns());
    atomic_store(&mic->stop, 1);
    usbip_unplug(transport);  // wakes the device thread with -1
    uac1_microphone_join(mic);
    usbip_free(transport);
}

usbdev_microphone *uac1_microphone_new(const char *serial, double frequency, double amplitude,
                                       uint8_t first_interface, uint8_t endpoint, char *error, size_t error_size) {
    if (!serial || !(frequency > 0 && frequency < USBDEV_MICROPHONE_RATE / 2) || !(amplitude >= 0 && amplitude <= 1)) {
        snprintf(error, error_size, "bad arguments: a serial, 0 < frequency < %d Hz, 0 <= amplitude <= 1", USBDEV_MICROPHONE_RATE / 2);
        return NULL;
    }
    usbdev_microphone *mic = calloc(1, sizeof *mic);
    if (!mic) {
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    snprintf(mic->serial, sizeof mic->serial, "%s", serial);
    mic->first_interface = first_interface;
    mic->endpoint = endpoint;
    mic->phase_step = 2 * M_PI * frequency / USBDEV_MICROPHONE_RATE;
    mic->amplitude = amplitude;
    usb_plug_init(&mic->plug, mic, attach, detach);
    return mic;
}

usbdev_microphone *usbdev_microphone_plug(const char *serial, double frequency, double amplitude,
                                          char *error, size_t error_size) {
    usbdev_microphone *mic = uac1_microphone_new(serial, frequency, amplitude, UAC1_CONTROL_INTERFACE, UAC1_ENDPOINT, error, error_size);
    if (mic && usb_plug_replug(&mic->plug, error, error_size) != 0) {
        usbdev_microphone_destroy(mic);
        return NULL;
    }
    return mic;
}

/// Returns 0, or ENODEV when it was not plugged in.
int usbdev_microphone_unplug(usbdev_microphone *mic) { return usb_plug_unplug(&mic->plug); }

/// Returns 0, or an errno (reason in `error`). Unplugs first if it is still plugged in (as the
/// camera does), and cleans up after an unplug by the host.
int usbdev_microphone_replug(usbdev_microphone *mic, char *error, size_t error_size) {
    return usb_plug_replug(&mic->plug, error, error_size);
}

void usbdev_microphone_destroy(usbdev_microphone *mic) {
    if (!mic) return;
    usb_plug_destroy(&mic->plug);
    free(mic);
}

int usbdev_microphone_is_plugged(usbdev_microphone *mic) { return usb_plug_is_plugged(&mic->plug); }

uint64_t usbdev_microphone_samples_sent(usbdev_microphone *mic) { return atomic_load(&mic->samples_sent); }
uint32_t usbdev_microphone_rate(usbdev_microphone *mic) { return atomic_load(&mic->rate); }
uint64_t usbdev_microphone_unplug_time_ns(usbdev_microphone *mic) { return atomic_load(&mic->unplug_time_ns); }
