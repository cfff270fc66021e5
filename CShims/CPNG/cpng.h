// CPNG: libpng (Debian's libpng-dev), for writing snapshots and screenshots as PNG.
#ifndef CPNG_H
#define CPNG_H
#include <png.h>
#endif
