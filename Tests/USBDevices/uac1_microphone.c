// uac1_microphone.c: a USB Audio Class 1.0 microphone (full speed, 48 kHz mono S16LE on an
// asynchronous isochronous IN endpoint) served over USB/IP (usbip_transport.h), so that the
// kernel's snd-usb-audio binds it. Its descriptors are in uac1_descriptors.c.
//
// Threads: the transport's reader thread answers control requests (`control` below); the
// microphone's device thread completes the isochronous IN URBs the host queues on endpoint
// 0x81, 48 samples per 1 ms packet of a continuous-phase sine, paced by CLOCK_MONOTONIC so it
// never runs ahead of real time (under emulation it runs slower: samples are then late, never
// dropped or repeated). The API functions (include/usb_devices.h) take `api_lock`; neither
// thread does, so plug/unplug may join them while holding it.
#include "uac1_microphone.h"
#include "usb_devices.h"
#include "usbip_transport.h"

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
    double phase, phase_step, amplitude;  // the tone (device thread only)
    pthread_mutex_t api_lock;             // transport, thread, plug state (API functions)
    usbip_transport *transport;           // NULL while unplugged
    pthread_t thread;
    atomic_int stop;                      // tells the device thread to end
    // Device state the host sets (reader thread), read anywhere.
    atomic_uint configuration, alternate;
    atomic_uint rate;
    // Streaming (device thread).
    uint64_t clock_ns;                    // wall-clock time of the next sample to send
    uint32_t packets_per_urb;             // the last URB's packet count, to pace the next one
    atomic_ullong samples_sent, unplug_time_ns;
};

// MARK: - Control requests (reader thread)

/// Copies `length` bytes of an IN answer into `data`, at most `setup->length` of them.
static int answer(const struct usb_setup *setup, uint8_t *data, const void *bytes, size_t length) {
    memcpy(data, bytes, length < setup->length ? length : setup->length);
    return (int)length;
}

/// SET_INTERFACE: interface 0 has alternate 0 only; interface 1 has 0 (idle) and 1 (streaming).
static int set_interface(usbdev_microphone *mic, uint16_t interface, uint16_t alternate) {
    if (interface == UAC1_CONTROL_INTERFACE && alternate == 0) return 0;
    if (interface != UAC1_STREAMING_INTERFACE || alternate > 1) return -1;
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
        if (atomic_load(&mic->configuration) == 0 || setup->index > UAC1_STREAMING_INTERFACE) return -1;
        byte = setup->index == UAC1_STREAMING_INTERFACE ? (uint8_t)atomic_load(&mic->alternate) : 0;
        return answer(setup, data, &byte, 1);
    case SET_INTERFACE:
        if (atomic_load(&mic->configuration) == 0) return -1;
        return set_interface(mic, setup->index, setup->value);
    default: return -1;
    }
}

/// UAC1 endpoint requests: SET_CUR / GET_CUR of the sampling frequency control of endpoint
/// 0x81 (3 bytes, little-endian Hz). The only rate is 48000.
static int class_request(usbdev_microphone *mic, const struct usb_setup *setup, uint8_t *data) {
    int to_endpoint = (setup->request_type & 0x1f) == 0x02;
    if (!to_endpoint || (setup->index & 0xff) != UAC1_ENDPOINT || setup->value != SAMPLING_FREQ_CONTROL << 8) return -1;
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
static int control(void *context, const struct usb_setup *setup, uint8_t *data) {
    usbdev_microphone *mic = context;
    switch (setup->request_type & 0x60) {
    case 0x00: return standard_request(mic, setup, data);
    case 0x20: return class_request(mic, setup, data);
    default: return -1;
    }
}

static const usbip_device_ops microphone_ops = {.control = control};

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
    uint32_t total = 0;
    for (uint32_t i = 0; i < count; i++) {
        struct usbip_iso_packet *packet = &packets[i];
        uint32_t room = packet->offset < length ? length - packet->offset : 0;
        if (room > packet->length) room = packet->length;
        uint32_t samples = room / 2 < UAC1_SAMPLES_PER_PACKET ? room / 2 : UAC1_SAMPLES_PER_PACKET;
        for (uint32_t s = 0; s < samples; s++) {
            uint16_t sample = (uint16_t)next_sample(mic);
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
    if (mic->clock_ns + MAX_LAG_NS < now) mic->clock_ns = now - MAX_LAG_NS;
    uint64_t ready = mic->clock_ns + mic->packets_per_urb * PACKET_NS;
    struct timespec until = {(time_t)(ready / 1000000000u), (long)(ready % 1000000000u)};
    while (ready > now && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {}
}

/// The device thread: completes URBs on endpoint 0x81 until told to stop or disconnected.
static void *device_main(void *argument) {
    usbdev_microphone *mic = argument;
    usbip_transport *transport = mic->transport;
    mic->clock_ns = usbip_now_ns();
    mic->packets_per_urb = 1;
    while (!atomic_load(&mic->stop)) {
        int queued = usbip_wait_urb(transport, UAC1_ENDPOINT, 100);
        if (queued < 0) break;
        if (queued == 0) continue;
        pace(mic);
        // 0: the host unlinked the URB meanwhile (streaming stopped); wait for the next one.
        if (usbip_complete_next(transport, UAC1_ENDPOINT, 0, fill_urb, mic) < 0) break;
    }
    return NULL;
}

// MARK: - Plugging (API functions, under api_lock)

/// Attaches to vhci and starts the device thread. Returns 0, or an errno (reason in `error`).
static int attach(usbdev_microphone *mic, char *error, size_t error_size) {
    atomic_store(&mic->configuration, 0);  // a new enumeration
    atomic_store(&mic->alternate, 0);
    atomic_store(&mic->stop, 0);
    mic->transport = usbip_attach(&microphone_ops, mic, USBIP_SPEED_FULL, error, error_size);
    if (!mic->transport) return ENODEV;
    int failed = pthread_create(&mic->thread, NULL, device_main, mic);
    if (failed) {
        snprintf(error, error_size, "pthread_create: %s", strerror(failed));
        usbip_free(mic->transport);
        mic->transport = NULL;
        return failed;
    }
    return 0;
}

/// Unplugs (if the host still holds it), joins the device thread and frees the transport.
static void detach(usbdev_microphone *mic) {
    if (usbip_connected(mic->transport)) atomic_store(&mic->unplug_time_ns, usbip_now_ns());
    atomic_store(&mic->stop, 1);
    usbip_unplug(mic->transport);  // wakes the device thread with -1
    pthread_join(mic->thread, NULL);
    usbip_free(mic->transport);
    mic->transport = NULL;
}

usbdev_microphone *usbdev_microphone_plug(const char *serial, double frequency, double amplitude,
                                          char *error, size_t error_size) {
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
    mic->phase_step = 2 * M_PI * frequency / USBDEV_MICROPHONE_RATE;
    mic->amplitude = amplitude;
    pthread_mutex_init(&mic->api_lock, NULL);
    if (attach(mic, error, error_size) != 0) {
        pthread_mutex_destroy(&mic->api_lock);
        free(mic);
        return NULL;
    }
    return mic;
}

/// Returns 0, or ENODEV when it was not plugged in.
int usbdev_microphone_unplug(usbdev_microphone *mic) {
    pthread_mutex_lock(&mic->api_lock);
    int result = mic->transport ? 0 : ENODEV;
    if (mic->transport) detach(mic);
    pthread_mutex_unlock(&mic->api_lock);
    return result;
}

/// Returns 0, or an errno (reason in `error`). Unplugs first if it is still plugged in (as the
/// camera does), and cleans up after an unplug by the host.
int usbdev_microphone_replug(usbdev_microphone *mic, char *error, size_t error_size) {
    pthread_mutex_lock(&mic->api_lock);
    if (mic->transport) detach(mic);
    int result = attach(mic, error, error_size);
    pthread_mutex_unlock(&mic->api_lock);
    return result;
}

void usbdev_microphone_destroy(usbdev_microphone *mic) {
    if (!mic) return;
    usbdev_microphone_unplug(mic);
    pthread_mutex_destroy(&mic->api_lock);
    free(mic);
}

int usbdev_microphone_is_plugged(usbdev_microphone *mic) {
    pthread_mutex_lock(&mic->api_lock);
    int plugged = mic->transport && usbip_connected(mic->transport);
    pthread_mutex_unlock(&mic->api_lock);
    return plugged;
}

uint64_t usbdev_microphone_samples_sent(usbdev_microphone *mic) { return atomic_load(&mic->samples_sent); }
uint32_t usbdev_microphone_rate(usbdev_microphone *mic) { return atomic_load(&mic->rate); }
uint64_t usbdev_microphone_unplug_time_ns(usbdev_microphone *mic) { return atomic_load(&mic->unplug_time_ns); }
