// CAVFormat: libavformat (Debian's libavformat-dev, FFmpeg 5.1 on Debian 12), for the command-line
// tool's audio-and-video files (.mkv, .nut): muxing only, no encoding. Not a dependency of any
// library product. The function-like macros Swift cannot import are exported as constants
// prefixed `cavformat_`.
#ifndef CAVFORMAT_H
#define CAVFORMAT_H
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
#endif
