// CSoxr: libsoxr, the SoX resampler. Used by AudioResampler for rate conversion.
#ifndef CSOXR_H
#define CSOXR_H
#include <soxr.h>
#endif
