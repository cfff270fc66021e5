// CWebRTCAPM: a C face on WebRTC's audio processing module (C++; webrtc-audio-processing 0.3 on
// Debian 12, 1.x on Debian 13, whichever pkg-config finds: see cwebrtcapm1.cpp for what 1.x
// does differently behind the same functions): echo cancellation
// with the played signal as reference, noise suppression and automatic gain, on 10 ms blocks
// of interleaved 16-bit samples. Every symbol is prefixed `capm_`. One capture thread and one
// render thread may call it at the same time (APM keeps the render queue between them);
// processing allocates nothing after `capm_create` (on 1.x, switching a part on makes it).
#ifndef CWEBRTCAPM_H
#define CWEBRTCAPM_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The webrtc-audio-processing API this was built on: 0 (0.3, whose echo canceller is AEC2) or
/// 1 (1.x, AEC3). The two delay the capture differently (see WebRTCVoiceEngine.delayFrames).
int capm_api_major(void);

/// One APM instance for one rate and channel count (capture and render alike).
typedef struct capm_processor capm_processor;

/// What the echo canceller measured, in dB (APM 0.3's `EchoCancellation::Metrics`, averages;
/// 1.x's `GetStatistics()`). A figure the library does not measure is -100 (0.3's own "no value").
typedef struct capm_echo_metrics {
    int echo_return_loss;                 ///< far end to echo in the capture (ERL)
    int echo_return_loss_enhancement;     ///< echo removed by the canceller (ERLE)
    int residual_echo_return_loss;        ///< RERL (1.x: not measured, -100)
    int delay_median_ms;                  ///< the delay the canceller found, -1 when unknown (1.x: its current estimate)
} capm_echo_metrics;

/// Creates a processor for `sample_rate` (8000, 16000, 32000 or 48000) and `channels` (1 or
/// 2); `extended_filter` lengthens the echo filter (reverberant rooms), `delay_agnostic` lets
/// the canceller find the delay itself (1.x: neither has a setting, its AEC3 always finds the
/// delay itself). NULL with `*error` set (an APM error code) on failure.
capm_processor *capm_create(int sample_rate, int channels, int extended_filter, int delay_agnostic, int *error);
/// Frees the processor.
void capm_destroy(capm_processor *processor);

/// Switches echo cancellation (suppression level 0 low, 1 moderate, 2 high; 1.x: checked, no
/// setting). Returns 0 or an APM error.
int capm_set_echo_cancellation(capm_processor *processor, int enabled, int suppression_level);
/// Switches noise suppression (level 0 low … 3 very high). Returns 0 or an APM error.
int capm_set_noise_suppression(capm_processor *processor, int enabled, int level);
/// Switches adaptive digital gain control towards `target_dbfs` below full scale (0…31), with
/// at most `compression_gain_db` (0…90) of gain, and the limiter. Returns 0 or an APM error.
int capm_set_gain_control(capm_processor *processor, int enabled, int target_dbfs, int compression_gain_db);
/// Switches the high-pass filter (removes DC and rumble below ~80 Hz). Returns 0 or an APM error.
int capm_set_high_pass_filter(capm_processor *processor, int enabled);

/// Samples (all channels) in one 10 ms block.
size_t capm_block_samples(const capm_processor *processor);

/// Hands one 10 ms block of what is played (interleaved) to the canceller as its reference.
int capm_process_render(capm_processor *processor, const int16_t *block);
/// Processes one 10 ms block of what was captured (interleaved), in place. `delay_ms` is the
/// time from the render block's `capm_process_render` to the capture block holding its echo.
int capm_process_capture(capm_processor *processor, int16_t *block, int delay_ms);

/// What the echo canceller measured; returns 0 or an APM error (metrics off: not enabled).
int capm_get_echo_metrics(capm_processor *processor, capm_echo_metrics *metrics);
/// Whether the last capture block held echo (APM 0.3's `stream_has_echo`): 1 or 0; -1 where the
/// library does not say (1.x).
int capm_stream_has_echo(const capm_processor *processor);

#ifdef __cplusplus
}
#endif
#endif
