// CPNG: libpng (Debian's libpng-dev), for writing snapshots and screenshots as PNG.
// Swift uses the simplified API (png_image_*), which handles libpng's longjmp errors itself;
// its composite macros are exported here as constants prefixed `cpng_`.
#ifndef CPNG_H
#define CPNG_H
#include <stdint.h>
#include <png.h>

static const uint32_t cpng_IMAGE_VERSION = PNG_IMAGE_VERSION;
static const uint32_t cpng_FORMAT_BGR = PNG_FORMAT_BGR;
static const uint32_t cpng_FORMAT_RGB = PNG_FORMAT_RGB;
static const uint32_t cpng_FORMAT_GRAY = PNG_FORMAT_GRAY;
#endif
