// CWebRTCAPM: the C face on WebRTC's AudioProcessing (see include/cwebrtcapm.h), on
// webrtc-audio-processing 0.3 (Debian 12; pkg-config webrtc-audio-processing). On 1.x
// (Debian 13), cwebrtcapm1.cpp is the face instead: Package.swift defines CWEBRTCAPM_API_1 there.
#ifndef CWEBRTCAPM_API_1
#include "cwebrtcapm.h"

#include <new>
#include <string.h>

#include <webrtc/modules/audio_processing/include/audio_processing.h>
#include <webrtc/modules/interface/module_common_types.h>

struct capm_processor {
    webrtc::AudioProcessing *apm;
    webrtc::AudioFrame capture;   // one block each way, made once: no allocation per block
    webrtc::AudioFrame render;
    int sample_rate;
    int channels;
    size_t block_frames;
};

static void capm_prepare(webrtc::AudioFrame &frame, const capm_processor *p) {
    frame.sample_rate_hz_ = p->sample_rate;
    frame.num_channels_ = p->channels;
    frame.samples_per_channel_ = p->block_frames;
}

extern "C" int capm_api_major(void) {
    return 0;
}

extern "C" capm_processor *capm_create(int sample_rate, int channels, int extended_filter, int delay_agnostic, int *error) {
    *error = webrtc::AudioProcessing::kNoError;
    if (sample_rate != 8000 && sample_rate != 16000 && sample_rate != 32000 && sample_rate != 48000) {
        *error = webrtc::AudioProcessing::kBadSampleRateError;
        return nullptr;
    }
    if (channels != 1 && channels != 2) {
        *error = webrtc::AudioProcessing::kBadNumberChannelsError;
        return nullptr;
    }
    webrtc::Config config;
    config.Set<webrtc::ExtendedFilter>(new webrtc::ExtendedFilter(extended_filter != 0));
    config.Set<webrtc::DelayAgnostic>(new webrtc::DelayAgnostic(delay_agnostic != 0));
    config.Set<webrtc::ExperimentalAgc>(new webrtc::ExperimentalAgc(false));  // digital gain only: no analog volume to steer
    webrtc::AudioProcessing *apm = webrtc::AudioProcessing::Create(config);
    if (apm == nullptr) {
        *error = webrtc::AudioProcessing::kCreationFailedError;
        return nullptr;
    }
    webrtc::AudioProcessing::ChannelLayout layout = channels == 2 ? webrtc::AudioProcessing::kStereo : webrtc::AudioProcessing::kMono;
    int status = apm->Initialize(sample_rate, sample_rate, sample_rate, layout, layout, layout);
    if (status != webrtc::AudioProcessing::kNoError) {
        delete apm;
        *error = status;
        return nullptr;
    }
    apm->echo_cancellation()->enable_metrics(true);
    apm->echo_cancellation()->enable_delay_logging(true);
    apm->gain_control()->set_mode(webrtc::GainControl::kAdaptiveDigital);
    capm_processor *p = new (std::nothrow) capm_processor;
    if (p == nullptr) {
        delete apm;
        *error = webrtc::AudioProcessing::kCreationFailedError;
        return nullptr;
    }
    p->apm = apm;
    p->sample_rate = sample_rate;
    p->channels = channels;
    p->block_frames = (size_t)(sample_rate / 100);
    capm_prepare(p->capture, p);
    capm_prepare(p->render, p);
    return p;
}

extern "C" void capm_destroy(capm_processor *processor) {
    if (processor == nullptr) return;
    delete processor->apm;
    delete processor;
}

extern "C" int capm_set_echo_cancellation(capm_processor *p, int enabled, int suppression_level) {
    webrtc::EchoCancellation *aec = p->apm->echo_cancellation();
    int status = aec->set_suppression_level(static_cast<webrtc::EchoCancellation::SuppressionLevel>(suppression_level));
    if (status != 0) return status;
    return aec->Enable(enabled != 0);
}

extern "C" int capm_set_noise_suppression(capm_processor *p, int enabled, int level) {
    webrtc::NoiseSuppression *ns = p->apm->noise_suppression();
    int status = ns->set_level(static_cast<webrtc::NoiseSuppression::Level>(level));
    if (status != 0) return status;
    return ns->Enable(enabled != 0);
}

extern "C" int capm_set_gain_control(capm_processor *p, int enabled, int target_dbfs, int compression_gain_db) {
    webrtc::GainControl *agc = p->apm->gain_control();
    int status = agc->set_target_level_dbfs(target_dbfs);
    if (status != 0) return status;
    status = agc->set_compression_gain_db(compression_gain_db);
    if (status != 0) return status;
    status = agc->enable_limiter(true);
    if (status != 0) return status;
    return agc->Enable(enabled != 0);
}

extern "C" int capm_set_high_pass_filter(capm_processor *p, int enabled) {
    return p->apm->high_pass_filter()->Enable(enabled != 0);
}

extern "C" size_t capm_block_samples(const capm_processor *p) {
    return p->block_frames * (size_t)p->channels;
}

extern "C" int capm_process_render(capm_processor *p, const int16_t *block) {
    capm_prepare(p->render, p);
    memcpy(p->render.data_, block, capm_block_samples(p) * sizeof(int16_t));
    return p->apm->ProcessReverseStream(&p->render);
}

extern "C" int capm_process_capture(capm_processor *p, int16_t *block, int delay_ms) {
    capm_prepare(p->capture, p);
    memcpy(p->capture.data_, block, capm_block_samples(p) * sizeof(int16_t));
    // A delay outside 0…500 ms is clamped by APM and reported as a warning; the block is processed.
    int status = p->apm->set_stream_delay_ms(delay_ms);
    if (status != 0 && status != webrtc::AudioProcessing::kBadStreamParameterWarning) return status;
    if (p->apm->gain_control()->is_enabled()) p->apm->gain_control()->set_stream_analog_level(0);
    status = p->apm->ProcessStream(&p->capture);
    memcpy(block, p->capture.data_, capm_block_samples(p) * sizeof(int16_t));
    return status;
}

extern "C" int capm_get_echo_metrics(capm_processor *p, capm_echo_metrics *metrics) {
    webrtc::EchoCancellation::Metrics m;
    int status = p->apm->echo_cancellation()->GetMetrics(&m);
    if (status != 0) return status;
    metrics->echo_return_loss = m.echo_return_loss.average;
    metrics->echo_return_loss_enhancement = m.echo_return_loss_enhancement.average;
    metrics->residual_echo_return_loss = m.residual_echo_return_loss.average;
    int median = -1, deviation = 0;
    if (p->apm->echo_cancellation()->GetDelayMetrics(&median, &deviation) != 0) median = -1;
    metrics->delay_median_ms = median;
    return 0;
}

extern "C" int capm_stream_has_echo(const capm_processor *p) {
    return p->apm->echo_cancellation()->stream_has_echo() ? 1 : 0;
}
#endif
