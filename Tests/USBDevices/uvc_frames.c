// uvc_frames.c: what the camera shows.
// - YUYV: 75% colour bars over a grey ramp, changed by the controls as a sensor would (exposure,
//   gain, contrast, brightness, saturation, white balance, zoom, flicker bands when power-line
//   compensation is off), under a top strip that carries the frame counter as 32 black/white
//   blocks (most significant bit first), which the controls leave alone.
// - MJPEG: real JPEGs from libjpeg-turbo at each size's subsampling: four pictures (bars shifted
//   by 1/32 of the width each) encoded once per size, with the frame counter in a COM segment
//   right after SOI, so every frame is a distinct, exactly reproducible file.
// - In the composite webcam's A/V test mode (webcam_av.h): a flat dark (Y 16) or white (Y 235)
//   picture in either format, the counter strip or COM segment kept.
#include "uvc_camera.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

enum { VARIANTS = 4, PICTURES = VARIANTS + 2, DARK = VARIANTS, WHITE = VARIANTS + 1, STRIP_ROWS = 8, COUNTER_BITS = 32, JPEG_QUALITY = 85, MAX_SIZES = 16 };
#define COMMENT_PREFIX "MediaDevices frame "
enum { COMMENT_TEXT = sizeof COMMENT_PREFIX - 1 + 10, COMMENT_SEGMENT = 4 + COMMENT_TEXT };

struct jpeg { uint8_t *bytes; size_t length; };
struct uvc_frame_cache {
    pthread_mutex_t lock;
    struct { uint16_t width, height; struct jpeg variants[PICTURES]; } jpegs[MAX_SIZES];  // the bars, then dark, white
    uint8_t *yuyv;  // the YUYV picture without its counter strip
    uint16_t yuyv_width, yuyv_height;
    uint32_t yuyv_generation;
};

/// BT.601 limited-range YUV of the 75% bars: white, yellow, cyan, green, magenta, red, blue, black.
static const uint8_t bars_yuv[8][3] = {{180, 128, 128}, {162, 44, 142}, {131, 156, 44}, {112, 72, 58},
                                        {84, 184, 198}, {65, 100, 212}, {35, 212, 114}, {16, 128, 128}};
static const uint8_t bars_rgb[8][3] = {{191, 191, 191}, {191, 191, 0}, {0, 191, 191}, {0, 191, 0},
                                        {191, 0, 191}, {191, 0, 0}, {0, 0, 191}, {0, 0, 0}};

static struct uvc_frame_cache *cache(usbdev_camera *camera) {
    pthread_mutex_lock(&camera->lock);
    if (!camera->frames) {
        camera->frames = calloc(1, sizeof *camera->frames);
        if (camera->frames) pthread_mutex_init(&camera->frames->lock, NULL);
    }
    struct uvc_frame_cache *frames = camera->frames;
    pthread_mutex_unlock(&camera->lock);
    return frames;
}

void uvc_frames_free(usbdev_camera *camera) {
    struct uvc_frame_cache *frames = camera->frames;
    if (!frames) return;
    for (int i = 0; i < MAX_SIZES; i++)
        for (int v = 0; v < PICTURES; v++) tjFree(frames->jpegs[i].variants[v].bytes);
    free(frames->yuyv);
    pthread_mutex_destroy(&frames->lock);
    free(frames);
    camera->frames = NULL;
}

// MARK: - YUYV

static uint8_t clamp(double value) { return value < 0 ? 0 : value > 255 ? 255 : (uint8_t)lround(value); }

/// The picture's Y, U, V at source position (x, y) of a width x height picture.
static void source_pixel(int x, int y, int width, int height, double yuv[3]) {
    if (y >= height - height / 8) {  // bottom eighth: a grey ramp
        yuv[0] = 16 + 219.0 * x / (width - 1); yuv[1] = yuv[2] = 128;
        return;
    }
    const uint8_t *bar = bars_yuv[x * 8 / width];
    yuv[0] = bar[0]; yuv[1] = bar[1]; yuv[2] = bar[2];
}

/// The picture as the controls make it (without the counter strip).
static void render_base(const struct uvc_control *c, int width, int height, uint8_t *out) {
    double factor = 1 + c[USBDEV_CTRL_GAIN].value / 100.0;
    if (c[USBDEV_CTRL_AE_MODE].value == 1) factor *= c[USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE].value / 250.0;
    double contrast = c[USBDEV_CTRL_CONTRAST].value / 50.0, saturation = c[USBDEV_CTRL_SATURATION].value / 100.0;
    double warmth = c[USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE_AUTO].value ? 0
                  : (c[USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE].value - 4600) / 1900.0;
    double zoom = c[USBDEV_CTRL_ZOOM_ABSOLUTE].value / 100.0;
    int flicker = c[USBDEV_CTRL_POWER_LINE_FREQUENCY].value == 0;
    for (int y = 0; y < height; y++) {
        int sy = (int)(height / 2 + (y - height / 2) / zoom);
        double band = flicker ? 6 * sin(2 * M_PI * sy / (height / 4.0)) : 0;
        for (int x = 0; x < width; x += 2) {
            uint8_t *p = out + ((size_t)y * width + x) * 2;
            double yuv0[3], yuv1[3];
            source_pixel((int)(width / 2 + (x - width / 2) / zoom), sy, width, height, yuv0);
            source_pixel((int)(width / 2 + (x + 1 - width / 2) / zoom), sy, width, height, yuv1);
            double luma[2] = {yuv0[0], yuv1[0]};
            for (int i = 0; i < 2; i++) {
                double l = 16 + (luma[i] - 16) * factor;
                p[2 * i] = clamp(128 + (l - 128) * contrast + c[USBDEV_CTRL_BRIGHTNESS].value + band);
            }
            p[1] = clamp(128 + (yuv0[1] - 128) * saturation - 16 * warmth);
            p[3] = clamp(128 + (yuv0[2] - 128) * saturation + 16 * warmth);
        }
    }
}

static void write_counter_strip(uint32_t counter, int width, uint8_t *out) {
    int block = width / COUNTER_BITS;
    for (int x = 0; x < width; x++) {
        int bit = x / block;
        uint8_t luma = bit < COUNTER_BITS && (counter >> (COUNTER_BITS - 1 - bit)) & 1 ? 235 : 16;
        for (int y = 0; y < STRIP_ROWS; y++) {
            uint8_t *p = out + ((size_t)y * width + x) * 2;
            p[0] = luma;
            p[1] = 128;
        }
    }
}

void uvc_render_yuyv(usbdev_camera *camera, const usbdev_frame_size *size, uint32_t counter, uvc_picture picture, uint8_t *out) {
    size_t bytes = (size_t)size->width * size->height * 2;
    if (picture != UVC_PICTURE_BARS) {
        uint8_t luma = picture == UVC_PICTURE_WHITE ? 235 : 16;
        for (size_t i = 0; i < bytes; i += 2) { out[i] = luma; out[i + 1] = 128; }
        write_counter_strip(counter, size->width, out);
        return;
    }
    struct uvc_frame_cache *frames = cache(camera);
    pthread_mutex_lock(&camera->lock);
    struct uvc_control controls[USBDEV_CTRL_COUNT];
    memcpy(controls, camera->controls, sizeof controls);
    uint32_t generation = camera->controls_generation;
    pthread_mutex_unlock(&camera->lock);
    pthread_mutex_lock(&frames->lock);
    if (!frames->yuyv || frames->yuyv_width != size->width || frames->yuyv_height != size->height ||
        frames->yuyv_generation != generation) {
        free(frames->yuyv);
        frames->yuyv = malloc(bytes);
        if (frames->yuyv) render_base(controls, size->width, size->height, frames->yuyv);
        frames->yuyv_width = size->width;
        frames->yuyv_height = size->height;
        frames->yuyv_generation = generation;
    }
    if (frames->yuyv) memcpy(out, frames->yuyv, bytes);
    pthread_mutex_unlock(&frames->lock);
    write_counter_strip(counter, size->width, out);
}

int64_t usbdev_yuyv_counter(const uint8_t *frame, size_t stride, uint16_t width, uint16_t height) {
    if (height < STRIP_ROWS || width < COUNTER_BITS) return -1;
    int block = width / COUNTER_BITS;
    uint32_t counter = 0;
    for (int bit = 0; bit < COUNTER_BITS; bit++) {
        uint8_t luma = frame[STRIP_ROWS / 2 * stride + (size_t)(bit * block + block / 2) * 2];
        if (luma > 60 && luma < 190) return -1;
        counter = counter << 1 | (luma >= 190);
    }
    return counter;
}

// MARK: - MJPEG

/// Encodes picture `variant` at `size`: the bars shifted by `variant` (0 ..< VARIANTS), or flat
/// DARK or WHITE (NULL bytes on failure).
static struct jpeg encode(const usbdev_frame_size *size, int variant) {
    struct jpeg result = {NULL, 0};
    int width = size->width, height = size->height, shift = variant * width / 32;
    uint8_t *rgb = malloc((size_t)width * height * 3);
    tjhandle encoder = tjInitCompress();
    if (rgb && encoder && variant >= VARIANTS) {
        memset(rgb, variant == WHITE ? 255 : 0, (size_t)width * height * 3);
    } else if (rgb && encoder) {
        for (int y = 0; y < height; y++)
            for (int x = 0; x < width; x++) {
                const uint8_t *bar = bars_rgb[((x + shift) % width) * 8 / width];
                int texture = ((x + y) % 32) - 16;  // a little detail, as a real picture has
                for (int i = 0; i < 3; i++) rgb[((size_t)y * width + x) * 3 + i] = clamp(bar[i] + texture);
            }
    }
    if (rgb && encoder) {
        unsigned long length = 0;
        int subsampling = size->subsampling == 22 ? TJSAMP_422 : TJSAMP_420;
        if (tjCompress2(encoder, rgb, width, 0, height, TJPF_RGB, &result.bytes, &length, subsampling,
                        JPEG_QUALITY, 0) == 0)
            result.length = length;
    }
    if (encoder) tjDestroy(encoder);
    free(rgb);
    return result;
}

/// The cached picture `variant` at `size`, encoding the bars' variants of that size the first time.
static struct jpeg variant_for(usbdev_camera *camera, const usbdev_frame_size *size, int variant) {
    struct uvc_frame_cache *frames = cache(camera);
    struct jpeg result = {NULL, 0};
    pthread_mutex_lock(&frames->lock);
    for (int i = 0; i < MAX_SIZES; i++) {
        if (frames->jpegs[i].width == 0) {
            frames->jpegs[i].width = size->width;
            frames->jpegs[i].height = size->height;
            for (int v = 0; v < VARIANTS; v++) frames->jpegs[i].variants[v] = encode(size, v);
        }
        if (frames->jpegs[i].width == size->width && frames->jpegs[i].height == size->height) {
            // The dark and white pictures only once asked for (A/V test mode).
            if (!frames->jpegs[i].variants[variant].bytes) frames->jpegs[i].variants[variant] = encode(size, variant);
            result = frames->jpegs[i].variants[variant];
            break;
        }
    }
    pthread_mutex_unlock(&frames->lock);
    return result;
}

size_t uvc_render_jpeg(usbdev_camera *camera, const usbdev_frame_size *size, uint32_t counter, uvc_picture shown,
                       uint8_t *out, size_t capacity) {
    int variant = shown == UVC_PICTURE_DARK ? DARK : shown == UVC_PICTURE_WHITE ? WHITE : (int)(counter % VARIANTS);
    struct jpeg picture = variant_for(camera, size, variant);
    size_t length = picture.length + COMMENT_SEGMENT;
    if (!picture.bytes || length > capacity) return 0;
    memcpy(out, picture.bytes, 2);  // SOI
    uint8_t *comment = out + 2;
    comment[0] = 0xFF; comment[1] = 0xFE;
    comment[2] = 0; comment[3] = 2 + COMMENT_TEXT;
    char text[COMMENT_TEXT + 1];
    snprintf(text, sizeof text, COMMENT_PREFIX "%010u", counter);
    memcpy(comment + 4, text, COMMENT_TEXT);
    memcpy(out + 2 + COMMENT_SEGMENT, picture.bytes + 2, picture.length - 2);
    return length;
}

size_t usbdev_camera_jpeg(usbdev_camera *camera, uint16_t width, uint16_t height, uint32_t counter, uint8_t *out, size_t capacity) {
    for (size_t i = 0; i < usbdev_camera_frame_size_count(); i++) {
        usbdev_frame_size size = usbdev_camera_frame_size(i);
        if (size.format != USBDEV_FORMAT_MJPEG || size.width != width || size.height != height) continue;
        struct jpeg picture = variant_for(camera, &size, counter % VARIANTS);
        size_t length = picture.length + COMMENT_SEGMENT;
        if (picture.bytes && length <= capacity) uvc_render_jpeg(camera, &size, counter, UVC_PICTURE_BARS, out, capacity);
        return picture.bytes ? length : 0;
    }
    return 0;
}

size_t usbdev_camera_picture_jpeg(uint16_t width, uint16_t height, uint8_t subsampling, uint32_t variant,
                                  uint8_t *out, size_t capacity) {
    usbdev_frame_size size = {USBDEV_FORMAT_MJPEG, width, height, subsampling, {0}, 0};
    struct jpeg picture = encode(&size, (int)(variant % VARIANTS));
    if (picture.bytes && picture.length <= capacity) memcpy(out, picture.bytes, picture.length);
    tjFree(picture.bytes);
    return picture.bytes ? picture.length : 0;
}

int64_t usbdev_jpeg_counter(const uint8_t *jpeg, size_t length) {
    size_t i = 2;
    while (i + 4 <= length && jpeg[i] == 0xFF && jpeg[i + 1] != 0xDA) {
        size_t segment = (size_t)jpeg[i + 2] << 8 | jpeg[i + 3];
        size_t prefix = sizeof COMMENT_PREFIX - 1;
        if (jpeg[i + 1] == 0xFE && segment == 2 + COMMENT_TEXT && i + 4 + COMMENT_TEXT <= length &&
            memcmp(jpeg + i + 4, COMMENT_PREFIX, prefix) == 0) {
            int64_t counter = 0;
            for (size_t d = 0; d < 10; d++) {
                uint8_t c = jpeg[i + 4 + prefix + d];
                if (c < '0' || c > '9') return -1;
                counter = counter * 10 + (c - '0');
            }
            return counter;
        }
        i += 2 + segment;
    }
    return -1;
}
