// uvc_descriptors.c: the camera's USB descriptors (UVC 1.0, high speed, one bulk endpoint).
// Layouts: USB 2.0 chapter 9; UVC 1.0/1.1 sections 3.7 (VideoControl) and 3.9 (VideoStreaming),
// as drivers/media/usb/uvc/uvc_driver.c parses them.
#include "uvc_camera.h"
#include <string.h>

/// 100 ns intervals: 30, 15, 10 and 5 fps.
#define FPS30 333333u
#define FPS15 666666u
#define FPS10 1000000u
#define FPS5 2000000u

static const usbdev_frame_size sizes[] = {
    {USBDEV_FORMAT_MJPEG, 640, 480, 20, {FPS30, FPS15}, 2},
    {USBDEV_FORMAT_MJPEG, 800, 600, 22, {FPS30, FPS15}, 2},
    {USBDEV_FORMAT_MJPEG, 1280, 720, 22, {FPS30, FPS15}, 2},
    {USBDEV_FORMAT_MJPEG, 1920, 1080, 20, {FPS30, FPS15}, 2},  // 1080: not a multiple of 16
    {USBDEV_FORMAT_YUYV, 640, 480, 0, {FPS15, FPS10, FPS5}, 3},
    {USBDEV_FORMAT_YUYV, 320, 240, 0, {FPS30, FPS15}, 2},
    {USBDEV_FORMAT_YUYV, 160, 120, 0, {FPS30, FPS15}, 2},
};
enum { SIZE_COUNT = sizeof sizes / sizeof sizes[0] };

size_t usbdev_camera_frame_size_count(void) { return SIZE_COUNT; }
usbdev_frame_size usbdev_camera_frame_size(size_t index) { return sizes[index < SIZE_COUNT ? index : 0]; }

const usbdev_frame_size *uvc_frame_size(uint8_t format_index, uint8_t frame_index) {
    uint8_t n = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++) {
        if (sizes[i].format + 1 != format_index) continue;
        if (++n == frame_index) return &sizes[i];
    }
    return NULL;
}

/// A little-endian byte writer.
struct writer { uint8_t *p; size_t n, capacity; };
static void u8(struct writer *w, uint32_t v) { if (w->n < w->capacity) w->p[w->n] = (uint8_t)v; w->n++; }
static void u16(struct writer *w, uint32_t v) { u8(w, v & 0xff); u8(w, v >> 8); }
static void u24(struct writer *w, uint32_t v) { u16(w, v & 0xffff); u8(w, v >> 16); }
static void u32(struct writer *w, uint32_t v) { u16(w, v & 0xffff); u16(w, v >> 16); }
static void patch16(struct writer *w, size_t at, uint32_t v) {
    if (at + 1 < w->capacity) { w->p[at] = v & 0xff; w->p[at + 1] = (uint8_t)(v >> 8); }
}

static void device_descriptor(struct writer *w, uint16_t product_id) {
    u8(w, 18); u8(w, 1); u16(w, 0x0200);
    u8(w, 0xEF); u8(w, 0x02); u8(w, 0x01);  // miscellaneous / common class / IAD
    u8(w, 64); u16(w, USBDEV_CAMERA_VENDOR_ID); u16(w, product_id); u16(w, 0x0100);
    u8(w, 1); u8(w, 2); u8(w, 3); u8(w, 1);
}

/// VideoControl: header, camera terminal, processing unit, output terminal.
static void video_control(struct writer *w) {
    u8(w, 9); u8(w, 4); u8(w, UVC_INTERFACE_CONTROL); u8(w, 0); u8(w, 0);
    u8(w, 0x0E); u8(w, 0x01); u8(w, 0x00); u8(w, 2);
    size_t header = w->n;
    u8(w, 13); u8(w, 0x24); u8(w, 0x01); u16(w, 0x0100); u16(w, 0);
    u32(w, 48000000); u8(w, 1); u8(w, UVC_INTERFACE_STREAMING);
    // Camera terminal: AE mode, AE priority, exposure absolute, focus absolute, zoom absolute,
    // focus auto (bmControls bits 1, 2, 3, 5, 9, 17).
    u8(w, 18); u8(w, 0x24); u8(w, 0x02); u8(w, UVC_CAMERA_TERMINAL); u16(w, 0x0201); u8(w, 0); u8(w, 0);
    u16(w, 0); u16(w, 0); u16(w, 0); u8(w, 3); u24(w, 0x02022E);
    // Processing unit (UVC 1.0 layout): brightness, contrast, saturation, white balance
    // temperature, backlight compensation, gain, power line frequency, white balance temperature
    // auto (bits 0, 1, 3, 6, 8, 9, 10, 12).
    u8(w, 11); u8(w, 0x24); u8(w, 0x05); u8(w, UVC_PROCESSING_UNIT); u8(w, UVC_CAMERA_TERMINAL);
    u16(w, 0); u8(w, 2); u16(w, 0x174B); u8(w, 0);
    u8(w, 9); u8(w, 0x24); u8(w, 0x03); u8(w, UVC_OUTPUT_TERMINAL); u16(w, 0x0101); u8(w, 0);
    u8(w, UVC_PROCESSING_UNIT); u8(w, 0);
    patch16(w, header + 5, (uint32_t)(w->n - header));
}

static void frame_descriptor(struct writer *w, const usbdev_frame_size *s, uint8_t index) {
    uint32_t frame_bytes = (uint32_t)s->width * s->height * 2;
    u8(w, 26 + 4 * s->interval_count); u8(w, 0x24);
    u8(w, s->format == USBDEV_FORMAT_MJPEG ? 0x07 : 0x05);
    u8(w, index); u8(w, 0); u16(w, s->width); u16(w, s->height);
    u32(w, frame_bytes * 8 * 5); u32(w, frame_bytes * 8 * 30);
    u32(w, frame_bytes); u32(w, s->intervals[0]); u8(w, s->interval_count);
    for (uint8_t i = 0; i < s->interval_count; i++) u32(w, s->intervals[i]);
}

static void formats(struct writer *w, usbdev_format format) {
    uint8_t count = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++) count += sizes[i].format == format;
    if (format == USBDEV_FORMAT_MJPEG) {
        u8(w, 11); u8(w, 0x24); u8(w, 0x06); u8(w, 1); u8(w, count);
        u8(w, 0); u8(w, 1); u8(w, 0); u8(w, 0); u8(w, 0); u8(w, 0);
    } else {
        static const uint8_t yuy2[16] = {'Y', 'U', 'Y', '2', 0x00, 0x00, 0x10, 0x00,
                                         0x80, 0x00, 0x00, 0xAA, 0x00, 0x38, 0x9B, 0x71};
        u8(w, 27); u8(w, 0x24); u8(w, 0x04); u8(w, 2); u8(w, count);
        for (int i = 0; i < 16; i++) u8(w, yuy2[i]);
        u8(w, 16); u8(w, 1); u8(w, 0); u8(w, 0); u8(w, 0); u8(w, 0);
    }
    uint8_t index = 0;
    for (size_t i = 0; i < SIZE_COUNT; i++)
        if (sizes[i].format == format) frame_descriptor(w, &sizes[i], ++index);
    // Colour matching: BT.709 primaries and transfer, BT.601 (SMPTE 170M) matrix.
    u8(w, 6); u8(w, 0x24); u8(w, 0x0D); u8(w, 1); u8(w, 1); u8(w, 4);
}

/// VideoStreaming: input header, MJPEG and YUY2 formats with their frames, bulk endpoint.
static void video_streaming(struct writer *w) {
    u8(w, 9); u8(w, 4); u8(w, UVC_INTERFACE_STREAMING); u8(w, 0); u8(w, 1);
    u8(w, 0x0E); u8(w, 0x02); u8(w, 0x00); u8(w, 0);
    size_t header = w->n;
    u8(w, 15); u8(w, 0x24); u8(w, 0x01); u8(w, 2); u16(w, 0);
    u8(w, UVC_STREAM_ENDPOINT); u8(w, 0); u8(w, UVC_OUTPUT_TERMINAL);
    u8(w, 0); u8(w, 0); u8(w, 0); u8(w, 1); u8(w, 0); u8(w, 0);
    formats(w, USBDEV_FORMAT_MJPEG);
    formats(w, USBDEV_FORMAT_YUYV);
    patch16(w, header + 4, (uint32_t)(w->n - header));
    u8(w, 7); u8(w, 5); u8(w, UVC_STREAM_ENDPOINT); u8(w, 0x02); u16(w, 512); u8(w, 0);
}

/// Interface association (both interfaces are one video function), VideoControl, VideoStreaming.
static void video_function(struct writer *w) {
    u8(w, 8); u8(w, 0x0B); u8(w, 0); u8(w, 2); u8(w, 0x0E); u8(w, 0x03); u8(w, 0x00); u8(w, 2);
    video_control(w);
    video_streaming(w);
}

size_t uvc_function_descriptors(uint8_t *out, size_t capacity) {
    struct writer w = {out, 0, capacity};
    video_function(&w);
    return w.n;
}

static void configuration(struct writer *w) {
    u8(w, 9); u8(w, 2); u16(w, 0); u8(w, 2); u8(w, 1); u8(w, 0); u8(w, 0x80); u8(w, 250);
    video_function(w);
    patch16(w, 2, (uint32_t)w->n);
}

static void string_descriptor(struct writer *w, const char *text) {
    size_t length = strlen(text);
    u8(w, (uint32_t)(2 + 2 * length)); u8(w, 3);
    for (size_t i = 0; i < length; i++) u16(w, (uint8_t)text[i]);
}

int uvc_descriptor(const usbdev_camera *camera, uint16_t value, uint8_t *out, size_t capacity) {
    struct writer w = {out, 0, capacity};
    uint8_t type = value >> 8, index = value & 0xff;
    switch (type) {
    case 1: device_descriptor(&w, camera->product_id); break;
    case 2: configuration(&w); break;
    case 3:
        if (index == 0) { u8(&w, 4); u8(&w, 3); u16(&w, 0x0409); break; }
        if (index == 1) { string_descriptor(&w, USBDEV_MANUFACTURER); break; }
        if (index == 2) { string_descriptor(&w, camera->product); break; }
        if (index == 3) { string_descriptor(&w, camera->serial); break; }
        return -1;
    default: return -1;  // device qualifier, BOS, ...: STALL, as a USB 2.0 device without them
    }
    return (int)w.n;
}
