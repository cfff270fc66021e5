// CYUV: libyuv (Debian's libyuv-dev), the field's library for pixel conversion, scaling,
// rotation and MJPEG decoding (through libjpeg). libyuv ships no pkg-config file.
#ifndef CYUV_H
#define CYUV_H
#include <libyuv.h>
#endif
