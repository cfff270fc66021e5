// CSpeexDSP: speexdsp's resampler (the one PulseAudio uses by default). Used by AudioResampler.
#ifndef CSPEEXDSP_H
#define CSPEEXDSP_H
#include <speex/speex_resampler.h>
#endif
