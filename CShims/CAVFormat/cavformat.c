// CAVFormat: libav* opened with dlopen on first use (see include/cavformat.h for why).
#include "cavformat.h"
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define CAV_STRING(x) #x
#define CAV_SONAME(name, major) "lib" name ".so." CAV_STRING(major)

// Each function the tool calls: its library's handle index, name and pointer type (libav's own
// declaration, so a signature that changes between FFmpeg versions fails to compile here).
#define CAV_FUNCTIONS(X) \
    X(2, avformat_alloc_output_context2) \
    X(2, avformat_free_context) \
    X(2, avformat_new_stream) \
    X(2, avformat_write_header) \
    X(2, av_interleaved_write_frame) \
    X(2, av_write_trailer) \
    X(2, avio_open) \
    X(2, avio_closep) \
    X(1, av_packet_alloc) \
    X(1, av_packet_free) \
    X(1, av_new_packet) \
    X(1, avcodec_pix_fmt_to_codec_tag) \
    X(0, av_get_pix_fmt) \
    X(0, av_rescale_q) \
    X(0, av_strerror) \
    X(0, av_channel_layout_default)

#define CAV_POINTER(library, name) static __typeof__(name) *cav_p_##name;
CAV_FUNCTIONS(CAV_POINTER)

static pthread_once_t cav_once = PTHREAD_ONCE_INIT;
static char cav_message[512];
static int cav_status = -1;

static void cav_open(void) {
    // libavutil first: the other two need it; RTLD_LOCAL keeps FFmpeg's symbols out of the
    // process's global scope.
    static const char *const names[] = {
        CAV_SONAME("avutil", LIBAVUTIL_VERSION_MAJOR),
        CAV_SONAME("avcodec", LIBAVCODEC_VERSION_MAJOR),
        CAV_SONAME("avformat", LIBAVFORMAT_VERSION_MAJOR),
    };
    void *handles[3] = { 0 };
    for (int i = 0; i < 3; i++) {
        handles[i] = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
        if (!handles[i]) {
            const char *why = dlerror();
            snprintf(cav_message, sizeof cav_message, "%s", why ? why : names[i]);
            return;
        }
    }
#define CAV_RESOLVE(library, name) \
    cav_p_##name = (__typeof__(name) *)dlsym(handles[library], #name); \
    if (!cav_p_##name) { snprintf(cav_message, sizeof cav_message, "%s has no %s", names[library], #name); return; }
    CAV_FUNCTIONS(CAV_RESOLVE)
    cav_status = 0;
}

int cavformat_load(char *message, size_t size) {
    pthread_once(&cav_once, cav_open);
    if (cav_status != 0 && message && size > 0) snprintf(message, size, "%s", cav_message);
    return cav_status;
}

int cav_avformat_alloc_output_context2(AVFormatContext **context, const AVOutputFormat *format,
                                       const char *formatName, const char *filename) {
    return cav_p_avformat_alloc_output_context2(context, format, formatName, filename);
}
void cav_avformat_free_context(AVFormatContext *context) { cav_p_avformat_free_context(context); }
AVStream *cav_avformat_new_stream(AVFormatContext *context, const AVCodec *codec) {
    return cav_p_avformat_new_stream(context, codec);
}
int cav_avformat_write_header(AVFormatContext *context, AVDictionary **options) {
    return cav_p_avformat_write_header(context, options);
}
int cav_av_interleaved_write_frame(AVFormatContext *context, AVPacket *packet) {
    return cav_p_av_interleaved_write_frame(context, packet);
}
int cav_av_write_trailer(AVFormatContext *context) { return cav_p_av_write_trailer(context); }
int cav_avio_open(AVIOContext **context, const char *url, int flags) { return cav_p_avio_open(context, url, flags); }
int cav_avio_closep(AVIOContext **context) { return cav_p_avio_closep(context); }
AVPacket *cav_av_packet_alloc(void) { return cav_p_av_packet_alloc(); }
void cav_av_packet_free(AVPacket **packet) { cav_p_av_packet_free(packet); }
int cav_av_new_packet(AVPacket *packet, int size) { return cav_p_av_new_packet(packet, size); }
unsigned int cav_avcodec_pix_fmt_to_codec_tag(enum AVPixelFormat format) {
    return cav_p_avcodec_pix_fmt_to_codec_tag(format);
}
enum AVPixelFormat cav_av_get_pix_fmt(const char *name) { return cav_p_av_get_pix_fmt(name); }
int64_t cav_av_rescale_q(int64_t value, AVRational from, AVRational to) { return cav_p_av_rescale_q(value, from, to); }
int cav_av_strerror(int status, char *buffer, size_t size) { return cav_p_av_strerror(status, buffer, size); }
void cav_av_channel_layout_default(AVChannelLayout *layout, int channels) {
    cav_p_av_channel_layout_default(layout, channels);
}
