// CSpeexDSP: speexdsp's resampler (the one PulseAudio uses by default), used by AudioResampler,
// and its echo canceller and preprocessor (noise suppression, gain), which VoiceProcessor
// measures against WebRTC's.
#ifndef CSPEEXDSP_H
#define CSPEEXDSP_H
#include <speex/speex_resampler.h>
#include <speex/speex_echo.h>
#include <speex/speex_preprocess.h>
#endif
