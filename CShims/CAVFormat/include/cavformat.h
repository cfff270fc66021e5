// CAVFormat: libavformat (Debian's libavformat-dev, FFmpeg 5.1 on Debian 12, 7.1 on Debian 13), for
// the command-line tool's audio-and-video files (.mkv, .nut): muxing only, no encoding. Not a
// dependency of any library product.
//
// FFmpeg is loaded when a file is first written (`cavformat_load`), not linked: libavformat and
// libavcodec bring ~130 shared libraries (TLS, SRT, SVG, codecs) whose symbol binding made every
// start of the tool slow (natively 0.2 s for `--version`; 3-8 s in the emulated test machine),
// though only `capture --audio` uses them. The functions the tool calls are the `cav_` wrappers
// below, with libav's signatures; they must not be called before `cavformat_load` succeeded.
// The function-like macros Swift cannot import are exported as constants prefixed `cavformat_`.
#ifndef CAVFORMAT_H
#define CAVFORMAT_H
#include <stddef.h>
#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/error.h>
#include <libavutil/mathematics.h>
#include <libavutil/pixdesc.h>
#include <libavutil/channel_layout.h>

/// AVERROR_EOF (built with FFERRTAG).
static const int cavformat_AVERROR_EOF = AVERROR_EOF;
/// AV_NOPTS_VALUE: no timestamp.
static const int64_t cavformat_NOPTS_VALUE = AV_NOPTS_VALUE;

/// Loads libavutil, libavcodec and libavformat of the major versions these headers are (once per
/// process; later calls return the first result). 0 when loaded; -1 with why in `message` (the
/// library or function that is missing, as dlerror says it) when not.
int cavformat_load(char *message, size_t size);

int cav_avformat_alloc_output_context2(AVFormatContext **context, const AVOutputFormat *format,
                                       const char *formatName, const char *filename);
void cav_avformat_free_context(AVFormatContext *context);
AVStream *cav_avformat_new_stream(AVFormatContext *context, const AVCodec *codec);
int cav_avformat_write_header(AVFormatContext *context, AVDictionary **options);
int cav_av_interleaved_write_frame(AVFormatContext *context, AVPacket *packet);
int cav_av_write_trailer(AVFormatContext *context);
int cav_avio_open(AVIOContext **context, const char *url, int flags);
int cav_avio_closep(AVIOContext **context);
AVPacket *cav_av_packet_alloc(void);
void cav_av_packet_free(AVPacket **packet);
int cav_av_new_packet(AVPacket *packet, int size);
unsigned int cav_avcodec_pix_fmt_to_codec_tag(enum AVPixelFormat format);
enum AVPixelFormat cav_av_get_pix_fmt(const char *name);
int64_t cav_av_rescale_q(int64_t value, AVRational from, AVRational to);
int cav_av_strerror(int status, char *buffer, size_t size);
void cav_av_channel_layout_default(AVChannelLayout *layout, int channels);
#endif
