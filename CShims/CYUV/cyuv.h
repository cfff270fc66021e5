// CYUV: libyuv (Debian's libyuv-dev), the field's library for pixel conversion, scaling,
// rotation and MJPEG decoding (through libjpeg). libyuv ships no pkg-config file.
#ifndef CYUV_H
#define CYUV_H
#include <libyuv.h>

// The YUV->RGB constant tables by matrix (0 BT.601, 1 BT.709, 2 BT.2020) and range
// (0 limited, 1 full). Returned by address: libyuv's SIMD code expects them where it put them
// (aligned), so Swift must not copy them.
static inline const struct YuvConstants *cyuv_constants(int matrix, int full) {
    switch (matrix) {
    case 1: return full ? &kYuvF709Constants : &kYuvH709Constants;
    case 2: return full ? &kYuvV2020Constants : &kYuv2020Constants;
    default: return full ? &kYuvJPEGConstants : &kYuvI601Constants;
    }
}
#endif
