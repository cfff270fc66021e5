// CWebRTCAPM on webrtc-audio-processing 1.x (Debian 13's 1.3; pkg-config webrtc-audio-processing-1):
// the same C face (include/cwebrtcapm.h) as cwebrtcapm.cpp gives on 0.3. Package.swift defines
// CWEBRTCAPM_API_1 when pkg-config finds webrtc-audio-processing-1, and links that library
// instead of 0.3's; exactly one of the two files then compiles to something.
//
// What differs from 0.3 (1.x configures through AudioProcessing::Config and ApplyConfig; its
// echo canceller is AEC3, whose own settings, EchoCanceller3Config, can only be handed in through
// a factory 1.3's headers do not ship):
// - `extended_filter` and `delay_agnostic` (capm_create) have no 1.x setting: AEC3 always
//   estimates the delay itself (the `delay_ms` handed in is a hint), and its filter length is its
//   own. Both are accepted and have no effect.
// - The echo suppression level (capm_set_echo_cancellation) has no 1.x setting: it is checked
//   (0…2, as 0.3 does) and otherwise has no effect.
// - The high-pass filter is off while the canceller runs only because
//   `echo_canceller.enforce_high_pass_filtering` is false here (1.x turns it on with AEC3 by
//   default); the caller switches it as on 0.3.
// - Metrics (capm_get_echo_metrics) come from GetStatistics(): ERL and ERLE (rounded to whole
//   dB) as AEC3 reports them; AEC3 has no residual echo return loss (RERL is -100, 0.3's own
//   "no value"), and no delay median: `delay_median_ms` is AEC3's current delay estimate
//   (`delay_ms`), or -1 before it has one.
// - capm_stream_has_echo returns -1 (not known): 1.x has no such flag (its residual echo
//   likelihood measures echo left after the canceller, something else).
// - Stereo is processed as two channels (`pipeline.multi_channel_*`), as 0.3 does; 1.x would
//   otherwise mix the capture down to mono.
#ifdef CWEBRTCAPM_API_1
#include "cwebrtcapm.h"

#include <math.h>
#include <new>

#include <modules/audio_processing/include/audio_processing.h>

struct capm_processor {
    webrtc::AudioProcessing *apm;
    webrtc::AudioProcessing::Config config;
    webrtc::StreamConfig stream;   // capture and render alike: one rate, one channel count
    int16_t *render_out;           // ProcessReverseStream's output, unused (made once)
    int sample_rate;
    int channels;
    size_t block_frames;
};

extern "C" int capm_api_major(void) {
    return 1;
}

extern "C" capm_processor *capm_create(int sample_rate, int channels, int extended_filter, int delay_agnostic, int *error) {
    (void)extended_filter;  // no 1.x equivalent (see above)
    (void)delay_agnostic;
    *error = webrtc::AudioProcessing::kNoError;
    if (sample_rate != 8000 && sample_rate != 16000 && sample_rate != 32000 && sample_rate != 48000) {
        *error = webrtc::AudioProcessing::kBadSampleRateError;
        return nullptr;
    }
    if (channels != 1 && channels != 2) {
        *error = webrtc::AudioProcessing::kBadNumberChannelsError;
        return nullptr;
    }
    capm_processor *p = new (std::nothrow) capm_processor;
    if (p == nullptr) {
        *error = webrtc::AudioProcessing::kCreationFailedError;
        return nullptr;
    }
    p->apm = webrtc::AudioProcessingBuilder().Create();
    p->render_out = new (std::nothrow) int16_t[(size_t)(sample_rate / 100) * (size_t)channels];
    if (p->apm == nullptr || p->render_out == nullptr) {
        delete p->apm;
        delete[] p->render_out;
        delete p;
        *error = webrtc::AudioProcessing::kCreationFailedError;
        return nullptr;
    }
    p->sample_rate = sample_rate;
    p->channels = channels;
    p->block_frames = (size_t)(sample_rate / 100);
    p->stream = webrtc::StreamConfig(sample_rate, (size_t)channels);
    webrtc::ProcessingConfig processing = {{p->stream, p->stream, p->stream, p->stream}};
    int status = p->apm->Initialize(processing);
    if (status != webrtc::AudioProcessing::kNoError) {
        capm_destroy(p);
        *error = status;
        return nullptr;
    }
    // Everything off, as 0.3 starts; the caller switches each part on.
    webrtc::AudioProcessing::Config &c = p->config;
    c.pipeline.multi_channel_capture = channels == 2;
    c.pipeline.multi_channel_render = channels == 2;
    c.echo_canceller.enabled = false;
    c.echo_canceller.mobile_mode = false;
    c.echo_canceller.enforce_high_pass_filtering = false;
    c.noise_suppression.enabled = false;
    c.gain_controller1.enabled = false;
    c.gain_controller1.mode = webrtc::AudioProcessing::Config::GainController1::kAdaptiveDigital;
    c.gain_controller1.analog_gain_controller.enabled = false;  // digital gain only: no analog volume to steer
    c.gain_controller1.enable_limiter = true;
    c.gain_controller2.enabled = false;
    c.high_pass_filter.enabled = false;
    c.transient_suppression.enabled = false;
    c.voice_detection.enabled = false;
    c.level_estimation.enabled = false;
    c.residual_echo_detector.enabled = false;  // no call of ours reads its likelihood
    p->apm->ApplyConfig(c);
    return p;
}

extern "C" void capm_destroy(capm_processor *processor) {
    if (processor == nullptr) return;
    delete processor->apm;
    delete[] processor->render_out;
    delete processor;
}

extern "C" int capm_set_echo_cancellation(capm_processor *p, int enabled, int suppression_level) {
    // 1.x has no suppression level (AEC3's suppressor tunes itself); checked as 0.3 checks it.
    if (suppression_level < 0 || suppression_level > 2) return webrtc::AudioProcessing::kBadParameterError;
    p->config.echo_canceller.enabled = enabled != 0;
    p->apm->ApplyConfig(p->config);
    return 0;
}

extern "C" int capm_set_noise_suppression(capm_processor *p, int enabled, int level) {
    if (level < 0 || level > 3) return webrtc::AudioProcessing::kBadParameterError;
    p->config.noise_suppression.level = static_cast<webrtc::AudioProcessing::Config::NoiseSuppression::Level>(level);
    p->config.noise_suppression.enabled = enabled != 0;
    p->apm->ApplyConfig(p->config);
    return 0;
}

extern "C" int capm_set_gain_control(capm_processor *p, int enabled, int target_dbfs, int compression_gain_db) {
    if (target_dbfs < 0 || target_dbfs > 31 || compression_gain_db < 0 || compression_gain_db > 90)
        return webrtc::AudioProcessing::kBadParameterError;
    p->config.gain_controller1.target_level_dbfs = target_dbfs;
    p->config.gain_controller1.compression_gain_db = compression_gain_db;
    p->config.gain_controller1.enabled = enabled != 0;
    p->apm->ApplyConfig(p->config);
    return 0;
}

extern "C" int capm_set_high_pass_filter(capm_processor *p, int enabled) {
    p->config.high_pass_filter.enabled = enabled != 0;
    p->apm->ApplyConfig(p->config);
    return 0;
}

extern "C" size_t capm_block_samples(const capm_processor *p) {
    return p->block_frames * (size_t)p->channels;
}

extern "C" int capm_process_render(capm_processor *p, const int16_t *block) {
    return p->apm->ProcessReverseStream(block, p->stream, p->stream, p->render_out);
}

extern "C" int capm_process_capture(capm_processor *p, int16_t *block, int delay_ms) {
    // A delay outside 0…500 ms is clamped by APM and reported as a warning; the block is processed.
    int status = p->apm->set_stream_delay_ms(delay_ms);
    if (status != 0 && status != webrtc::AudioProcessing::kBadStreamParameterWarning) return status;
    // As on 0.3: the adaptive digital gain's virtual microphone starts from level 0 each block.
    if (p->config.gain_controller1.enabled) p->apm->set_stream_analog_level(0);
    // In place: APM copies the block in before it writes it out.
    return p->apm->ProcessStream(block, p->stream, p->stream, block);
}

extern "C" int capm_get_echo_metrics(capm_processor *p, capm_echo_metrics *metrics) {
    if (!p->config.echo_canceller.enabled) return webrtc::AudioProcessing::kNotEnabledError;
    webrtc::AudioProcessingStats stats = p->apm->GetStatistics();
    if (!stats.echo_return_loss || !stats.echo_return_loss_enhancement) return webrtc::AudioProcessing::kNotEnabledError;
    metrics->echo_return_loss = (int)lround(*stats.echo_return_loss);
    metrics->echo_return_loss_enhancement = (int)lround(*stats.echo_return_loss_enhancement);
    metrics->residual_echo_return_loss = -100;  // not measured by AEC3 (0.3's "no value")
    metrics->delay_median_ms = stats.delay_median_ms ? *stats.delay_median_ms : stats.delay_ms ? *stats.delay_ms : -1;
    return 0;
}

extern "C" int capm_stream_has_echo(const capm_processor *p) {
    (void)p;
    return -1;  // 1.x has no such flag
}
#endif
