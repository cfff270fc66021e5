// uvc_camera.c: the emulated UVC webcam's life cycle, its answers to control requests (standard
// requests, VideoControl unit controls, VideoStreaming probe/commit) and its streaming thread.
//
// Streaming (bulk): each frame is one UVC payload: a 2-byte header (bmHeaderInfo: EOH, EOF and a
// FID bit that toggles per frame) and the frame, spread over as many bulk URBs as it takes.
// uvcvideo ends a payload at a short URB or when dwMaxPayloadTransferSize bytes arrived, so YUYV
// announces exactly its payload size and MJPEG ends with a short (or zero-length) URB. Frames go
// out no faster than the committed interval; when the host is slower (emulation), they simply go
// out later: frame counters never skip, so a gap seen by the application is a frame lost on the
// way (by uvcvideo or by the application).
#include "uvc_camera.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

enum { PROBE = 0x01, COMMIT = 0x02, PROBE_SIZE = 26, REQUEST_ERROR_CODE = 0x02 };
enum { SET_CUR = 0x01, GET_CUR = 0x81, GET_MIN = 0x82, GET_MAX = 0x83, GET_LEN = 0x85,
       GET_INFO = 0x86, GET_DEF = 0x87 };
enum { HEADER_EOH = 0x80, HEADER_EOF = 0x02, HEADER_FID = 0x01 };
enum { WAIT_MS = 100, CHUNK_WAIT_MS = 2000 };

// MARK: - Probe and commit

/// A probe the camera accepts: a valid format and frame (else the defaults) and the supported
/// interval nearest the one asked for; sizes filled in by the camera.
static struct uvc_probe normalized(struct uvc_probe asked) {
    const usbdev_frame_size *size = uvc_frame_size(asked.format_index, asked.frame_index);
    if (!size) { asked.format_index = 1; asked.frame_index = 1; size = uvc_frame_size(1, 1); }
    uint32_t best = size->intervals[0];
    for (uint8_t i = 0; i < size->interval_count; i++) {
        uint32_t candidate = size->intervals[i];
        uint32_t d1 = candidate > asked.interval ? candidate - asked.interval : asked.interval - candidate;
        uint32_t d2 = best > asked.interval ? best - asked.interval : asked.interval - best;
        if (d1 < d2) best = candidate;
    }
    asked.interval = best;
    asked.max_video_frame_size = (uint32_t)size->width * size->height * 2;
    // YUYV: exactly one payload per frame; MJPEG: up to the buffer size, ended by a short URB.
    asked.max_payload_transfer_size = asked.max_video_frame_size + UVC_PAYLOAD_HEADER;
    return asked;
}

static struct uvc_probe default_probe(void) {
    return normalized((struct uvc_probe){.format_index = 1, .frame_index = 1, .interval = 0});
}

static int write_probe(const struct uvc_probe *p, uint8_t *d) {
    memset(d, 0, PROBE_SIZE);
    d[0] = p->hint & 0xff; d[1] = p->hint >> 8;
    d[2] = p->format_index; d[3] = p->frame_index;
    for (int i = 0; i < 4; i++) {
        d[4 + i] = (uint8_t)(p->interval >> (8 * i));
        d[18 + i] = (uint8_t)(p->max_video_frame_size >> (8 * i));
        d[22 + i] = (uint8_t)(p->max_payload_transfer_size >> (8 * i));
    }
    return PROBE_SIZE;
}

static struct uvc_probe read_probe(const uint8_t *d) {
    struct uvc_probe p = {0};
    p.hint = (uint16_t)(d[0] | d[1] << 8);
    p.format_index = d[2];
    p.frame_index = d[3];
    p.interval = (uint32_t)d[4] | (uint32_t)d[5] << 8 | (uint32_t)d[6] << 16 | (uint32_t)d[7] << 24;
    return p;
}

/// VS_PROBE_CONTROL and VS_COMMIT_CONTROL (lock held).
static int streaming_request(usbdev_camera *camera, const struct usb_setup *setup, uint8_t *data) {
    uint8_t selector = setup->value >> 8;
    if (selector != PROBE && selector != COMMIT) return -1;
    struct uvc_probe *target = selector == PROBE ? &camera->probe : &camera->commit;
    switch (setup->request) {
    case SET_CUR:
        if (setup->length < PROBE_SIZE) return -1;
        *target = normalized(read_probe(data));
        if (selector == COMMIT) camera->generation++;
        return 0;
    case GET_CUR: return write_probe(target, data);
    case GET_MIN: case GET_MAX: { struct uvc_probe p = camera->probe; return write_probe(&p, data); }
    case GET_DEF: { struct uvc_probe p = default_probe(); return write_probe(&p, data); }
    case GET_LEN: data[0] = PROBE_SIZE; data[1] = 0; return 2;
    case GET_INFO: data[0] = 0x03; return 1;
    default: return -1;
    }
}

// MARK: - Control requests

static int standard_request(usbdev_camera *camera, const struct usb_setup *setup, uint8_t *data) {
    switch (setup->request) {
    case 0x00: data[0] = data[1] = 0; return 2;  // GET_STATUS
    case 0x01:                                   // CLEAR_FEATURE: uvcvideo's stream stop (HALT)
        if ((setup->request_type & 0x1f) == 2 && setup->index == UVC_STREAM_ENDPOINT) {
            pthread_mutex_lock(&camera->lock);
            camera->generation++;
            pthread_mutex_unlock(&camera->lock);
        }
        return 0;
    case 0x03: return 0;                                           // SET_FEATURE
    case 0x06: return uvc_descriptor(camera, setup->value, data, 65536);  // GET_DESCRIPTOR
    case 0x08: data[0] = 1; return 1;                              // GET_CONFIGURATION
    case 0x09: return 0;                                           // SET_CONFIGURATION
    case 0x0A: data[0] = 0; return 1;                              // GET_INTERFACE
    case 0x0B: return setup->value == 0 ? 0 : -1;                  // SET_INTERFACE: alt 0 only
    default: return -1;
    }
}

/// Class requests to an interface: VideoControl entities (wIndex high byte) or VideoStreaming.
static int class_request(usbdev_camera *camera, const struct usb_setup *setup, uint8_t *data) {
    uint8_t interface = setup->index & 0xff, entity = setup->index >> 8;
    pthread_mutex_lock(&camera->lock);
    int result;
    if (interface == UVC_INTERFACE_STREAMING) {
        result = streaming_request(camera, setup, data);
    } else if (entity == 0 && (setup->value >> 8) == REQUEST_ERROR_CODE) {
        if (setup->request == GET_CUR) { data[0] = camera->request_error; result = 1; }
        else if (setup->request == GET_INFO) { data[0] = 0x01; result = 1; }
        else result = -1;
    } else {
        result = uvc_control_request(camera, entity, setup, data);
    }
    pthread_mutex_unlock(&camera->lock);
    return result;
}

int uvc_camera_control(void *context, const struct usb_setup *setup, uint8_t *data) {
    usbdev_camera *camera = context;
    switch ((setup->request_type >> 5) & 3) {
    case 0: return standard_request(camera, setup, data);
    case 1: return (setup->request_type & 0x1f) == 1 ? class_request(camera, setup, data) : -1;
    default: return -1;
    }
}

static const usbip_device_ops camera_ops = {uvc_camera_control};

// MARK: - Streaming

/// One payload being sent, URB by URB, for one stream (`generation`).
/// A frame on its way to the host; `first_ns`: when its first bytes went (0 until then).
struct payload { usbdev_camera *camera; const uint8_t *bytes; uint32_t length, sent, max_payload, generation; int done; uint64_t first_ns; };

static int32_t fill_chunk(void *context, uint8_t *buffer, uint32_t length, struct usbip_iso_packet *packets, uint32_t count) {
    (void)packets; (void)count;
    struct payload *p = context;
    // A URB of a stream that started after this frame was made must not get the rest of it:
    // the host restarts streaming (COMMIT, CLEAR_FEATURE) before it queues the new stream's URBs.
    pthread_mutex_lock(&p->camera->lock);
    int restarted = p->camera->generation != p->generation;
    pthread_mutex_unlock(&p->camera->lock);
    if (restarted) { p->done = -1; return USBIP_FILL_DECLINE; }
    uint32_t chunk = p->length - p->sent < length ? p->length - p->sent : length;
    if (p->sent == 0) p->first_ns = usbip_now_ns();
    memcpy(buffer, p->bytes + p->sent, chunk);
    p->sent += chunk;
    // A short URB ends the payload; so does reaching dwMaxPayloadTransferSize. Otherwise a full
    // URB that used the last byte needs a zero-length one after it.
    p->done = chunk < length || p->sent >= p->max_payload;
    return (int32_t)chunk;
}

static void sleep_until(uint64_t deadline_ns) {
    struct timespec t = {(time_t)(deadline_ns / 1000000000u), (long)(deadline_ns % 1000000000u)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &t, NULL) == EINTR) {}
}

/// Builds the frame `counter` for `commit` into `out` after its header. Returns the payload
/// length (header included), or 0.
static uint32_t build_frame(usbdev_camera *camera, const struct uvc_probe *commit, uint32_t counter,
                            uvc_picture picture, uint8_t fid, uint8_t *out, size_t capacity) {
    const usbdev_frame_size *size = uvc_frame_size(commit->format_index, commit->frame_index);
    if (!size) return 0;
    pthread_mutex_lock(&camera->lock);
    usbdev_fault fault = camera->pending_fault[size->format];
    camera->pending_fault[size->format] = USBDEV_FAULT_NONE;
    pthread_mutex_unlock(&camera->lock);
    uint8_t *frame = out + UVC_PAYLOAD_HEADER;
    size_t length;
    if (size->format == USBDEV_FORMAT_YUYV) {
        uvc_render_yuyv(camera, size, counter, picture, frame);
        length = (size_t)size->width * size->height * 2;
        if (fault == USBDEV_FAULT_SHORT_YUYV) length /= 2;
    } else {
        length = uvc_render_jpeg(camera, size, counter, picture, frame, capacity - UVC_PAYLOAD_HEADER);
        if (fault == USBDEV_FAULT_TRUNCATED_JPEG) length /= 2;
        if (fault == USBDEV_FAULT_CORRUPT_JPEG && length > 64) {
            // A marker in the middle of the entropy-coded data: the decoder must notice.
            frame[length * 3 / 4] = 0xFF;
            frame[length * 3 / 4 + 1] = 0xD5;
        }
    }
    if (length == 0) return 0;
    out[0] = UVC_PAYLOAD_HEADER;
    out[1] = HEADER_EOH | HEADER_EOF | fid;
    return (uint32_t)(length + UVC_PAYLOAD_HEADER);
}

/// Sends one payload. Returns 1 when sent, 0 when abandoned (stream stopped or restarted, or
/// no URB for CHUNK_WAIT_MS), -1 once unplugged.
static int send_payload(usbdev_camera *camera, struct payload *payload) {
    while (!payload->done) {
        if (atomic_load(&camera->stopping)) return 0;
        int r = usbip_complete_next(camera->transport, UVC_STREAM_ENDPOINT, CHUNK_WAIT_MS, fill_chunk, payload);
        if (r <= 0) return r;
    }
    return payload->done > 0;
}

static void *stream_main(void *argument) {
    usbdev_camera *camera = argument;
    size_t capacity = 1920 * 1080 * 2 + UVC_PAYLOAD_HEADER;
    uint8_t *buffer = malloc(capacity);
    uint64_t next = 0;
    uint8_t fid = 0;
    while (buffer && !atomic_load(&camera->stopping)) {
        int ready = usbip_wait_urb(camera->transport, UVC_STREAM_ENDPOINT, WAIT_MS);
        if (ready < 0) break;
        if (ready == 0) { next = 0; continue; }  // not streaming
        pthread_mutex_lock(&camera->lock);
        struct uvc_probe commit = camera->commit;
        uint32_t generation = camera->generation;
        pthread_mutex_unlock(&camera->lock);
        uint64_t now = usbip_now_ns();
        if (next > now) sleep_until(next);
        next = (next > now ? next : now) + (uint64_t)commit.interval * 100;
        uint32_t counter = atomic_load(&camera->frames_sent);
        uint64_t made = usbip_now_ns();  // the frame's "glass" moment, for latency measured downstream
        // A/V test mode: dark, or the flash, made at the instant of its click (webcam_av.c).
        uvc_picture picture = camera->av ? webcam_av_frame(camera->av, counter, made, &made) : UVC_PICTURE_BARS;
        uint32_t length = build_frame(camera, &commit, counter, picture, fid, buffer, capacity);
        if (length == 0) continue;
        atomic_fetch_add(&camera->frames_sent, 1);
        struct payload payload = {camera, buffer, length, 0, commit.max_payload_transfer_size, generation, 0, 0};
        int sent = send_payload(camera, &payload);
        if (sent < 0) break;
        if (sent > 0 && picture == UVC_PICTURE_WHITE) webcam_av_frame_sent(camera->av, counter, payload.first_ns);
        if (sent > 0 && camera->frame_log) fprintf(camera->frame_log, "%u %llu\n", counter, (unsigned long long)made);
        fid ^= HEADER_FID;
        uint32_t unplug_at = atomic_load(&camera->unplug_after);
        if (unplug_at && atomic_load(&camera->frames_sent) >= unplug_at) {
            atomic_store(&camera->unplug_after, 0);
            atomic_store(&camera->unplug_time_ns, usbip_now_ns());
            usbip_unplug(camera->transport);
            break;
        }
    }
    free(buffer);
    return NULL;
}

// MARK: - Life cycle

void uvc_camera_reset(usbdev_camera *camera) {
    pthread_mutex_lock(&camera->lock);
    camera->probe = camera->commit = default_probe();
    camera->generation++;
    uvc_controls_reset(camera);  // powered up again: the controls start from their defaults
    camera->controls_generation++;
    pthread_mutex_unlock(&camera->lock);
}

int uvc_camera_start(usbdev_camera *camera, usbip_transport *transport, char *error, size_t error_size) {
    camera->transport = transport;
    atomic_store(&camera->stopping, 0);
    if (pthread_create(&camera->streamer, NULL, stream_main, camera) != 0) {
        snprintf(error, error_size, "pthread_create failed");
        camera->transport = NULL;
        return EAGAIN;
    }
    camera->streamer_running = 1;
    return 0;
}

void uvc_camera_join(usbdev_camera *camera) {
    atomic_store(&camera->stopping, 1);
    if (camera->streamer_running) { pthread_join(camera->streamer, NULL); camera->streamer_running = 0; }
    camera->transport = NULL;
}

/// Attaches a fresh transport and starts the streaming thread. Returns 0 or an errno.
static int plug(usbdev_camera *camera, char *error, size_t error_size) {
    uvc_camera_reset(camera);
    usbip_transport *transport = usbip_attach(&camera_ops, camera, USBIP_SPEED_HIGH, error, error_size);
    if (!transport) return ENODEV;
    int failed = uvc_camera_start(camera, transport, error, error_size);
    if (failed) usbip_free(transport);
    return failed;
}

/// Stops the streaming thread and frees the transport (unplugging it first).
static void unplug(usbdev_camera *camera) {
    usbip_transport *transport = camera->transport;
    if (!transport) return;
    if (usbip_connected(transport)) atomic_store(&camera->unplug_time_ns, usbip_now_ns());
    atomic_store(&camera->stopping, 1);
    usbip_unplug(transport);
    uvc_camera_join(camera);
    usbip_free(transport);
}

usbdev_camera *uvc_camera_new(const char *serial, uint16_t product_id, const char *product, char *error, size_t error_size) {
    usbdev_camera *camera = calloc(1, sizeof *camera);
    if (!camera) { snprintf(error, error_size, "out of memory"); return NULL; }
    snprintf(camera->serial, sizeof camera->serial, "%s", serial);
    camera->product_id = product_id;
    camera->product = product;
    pthread_mutex_init(&camera->lock, NULL);
    // Each frame's counter and the moment it was made, for glass-to-application latency measured
    // downstream (the JPEGs carry the counter in a COM segment, the YUYV frames in a strip).
    const char *log = getenv("MEDIADEVICES_USB_FRAME_LOG");
    if (log && *log && (camera->frame_log = fopen(log, "a"))) setvbuf(camera->frame_log, NULL, _IOLBF, 0);
    return camera;
}

usbdev_camera *usbdev_camera_plug(const char *serial, char *error, size_t error_size) {
    usbdev_camera *camera = uvc_camera_new(serial, USBDEV_CAMERA_PRODUCT_ID, USBDEV_CAMERA_PRODUCT, error, error_size);
    if (!camera) return NULL;
    if (plug(camera, error, error_size) != 0) {
        usbdev_camera_destroy(camera);
        return NULL;
    }
    return camera;
}

int usbdev_camera_unplug(usbdev_camera *camera) {
    if (!camera->transport) return ENODEV;
    unplug(camera);
    return 0;
}

int usbdev_camera_replug(usbdev_camera *camera, char *error, size_t error_size) {
    unplug(camera);
    return plug(camera, error, error_size);
}

void usbdev_camera_destroy(usbdev_camera *camera) {
    if (!camera) return;
    unplug(camera);
    uvc_frames_free(camera);
    if (camera->frame_log) fclose(camera->frame_log);
    pthread_mutex_destroy(&camera->lock);
    free(camera);
}

int usbdev_camera_is_plugged(usbdev_camera *camera) {
    return camera->transport && usbip_connected(camera->transport);
}

int usbdev_camera_port(usbdev_camera *camera) {
    return usbdev_camera_is_plugged(camera) ? usbip_port(camera->transport) : -1;
}

uint32_t usbdev_camera_frames_sent(usbdev_camera *camera) { return atomic_load(&camera->frames_sent); }
uint64_t usbdev_camera_unplug_time_ns(usbdev_camera *camera) { return atomic_load(&camera->unplug_time_ns); }

void usbdev_camera_inject(usbdev_camera *camera, usbdev_fault fault) {
    pthread_mutex_lock(&camera->lock);
    camera->pending_fault[fault == USBDEV_FAULT_SHORT_YUYV ? USBDEV_FORMAT_YUYV : USBDEV_FORMAT_MJPEG] = fault;
    pthread_mutex_unlock(&camera->lock);
}

void usbdev_camera_unplug_after(usbdev_camera *camera, uint32_t frames) {
    atomic_store(&camera->unplug_after, frames ? atomic_load(&camera->frames_sent) + frames : 0);
}
