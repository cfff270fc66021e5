// CWebRTCAPM: a C face on WebRTC's audio processing module (APM 0.3, C++): echo cancellation
// with the played signal as reference, noise suppression and automatic gain, on 10 ms blocks
// of interleaved 16-bit samples. Every symbol is prefixed `capm_`. One capture thread and one
// render thread may call it at the same time (APM keeps the render queue between them);
// nothing here allocates after `capm_create`.
#ifndef CWEBRTCAPM_H
#define CWEBRTCAPM_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// One APM instance for one rate and channel count (capture and render alike).
typedef struct capm_processor capm_processor;

/// What the echo canceller measured, in dB (APM's `EchoCancellation::Metrics`, averages).
typedef struct capm_echo_metrics {
    int echo_return_loss;                 ///< far end to echo in the capture (ERL)
    int echo_return_loss_enhancement;     ///< echo removed by the canceller (ERLE)
    int residual_echo_return_loss;        ///< RERL
    int delay_median_ms;                  ///< the delay the canceller found, -1 when unknown
} capm_echo_metrics;

/// Creates a processor for `sample_rate` (8000, 16000, 32000 or 48000) and `channels` (1 or
/// 2); `extended_filter` lengthens the echo filter (reverberant rooms), `delay_agnostic` lets
/// the canceller find the delay itself. NULL with `*error` set (an APM error code) on failure.
capm_processor *capm_create(int sample_rate, int channels, int extended_filter, int delay_agnostic, int *error);
/// Frees the processor.
void capm_destroy(capm_processor *processor);

/// Switches echo cancellation (suppression level 0 low, 1 moderate, 2 high). Returns 0 or an APM error.
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
/// Whether the last capture block held echo (APM's `stream_has_echo`).
int capm_stream_has_echo(const capm_processor *processor);

#ifdef __cplusplus
}
#endif
#endif
