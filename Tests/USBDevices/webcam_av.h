// webcam_av: the composite webcam's A/V test mode (usb_webcam.c): its camera shows dark frames
// and its microphone records silence, until told to flash: the camera's next frame is white
// and the microphone clicks (a short pulse after silence) at that frame's creation instant, on
// the microphone's own sample clock, so the two are the same instant of one clock. Shared by
// the camera's streaming thread (uvc_camera.c) and the microphone's device thread
// (uac1_microphone.c) under one short lock that neither holds while it blocks.
#ifndef WEBCAM_AV_H
#define WEBCAM_AV_H
#include "usb_devices.h"
#include <pthread.h>
#include <stdint.h>

enum { WEBCAM_AV_EVENTS = 256, WEBCAM_AV_CLICK_SAMPLES = USBDEV_AV_CLICK_SAMPLES, WEBCAM_AV_CLICK_LEVEL = USBDEV_AV_CLICK_LEVEL };

/// What a frame of the camera shows.
typedef enum { UVC_PICTURE_BARS = 0, UVC_PICTURE_DARK = 1, UVC_PICTURE_WHITE = 2 } uvc_picture;

struct webcam_av {
    pthread_mutex_t lock;
    int enabled;                 // A/V test mode: dark frames, silence, flashes on command
    uint32_t requested, flashed; // flashes asked for, flashes the camera made
    uint64_t click_at_ns;        // when the pending click starts (0: none pending)
    uint32_t click_number;       // the flash it belongs to
    uint64_t horizon_ns;         // where the samples the microphone has sent end (its clock)
    usbdev_av_event events[WEBCAM_AV_EVENTS];  // flash n at [(n - 1) % WEBCAM_AV_EVENTS]
};

void webcam_av_init(struct webcam_av *av);
void webcam_av_destroy(struct webcam_av *av);

/// The camera, about to make frame `counter` at `now`: what it shows, and (through `made`) the
/// frame's creation instant: `now`, or for a flash the first sample instant of the microphone
/// at or after `now` (the camera sleeps until then), where the click is armed.
uvc_picture webcam_av_frame(struct webcam_av *av, uint32_t counter, uint64_t now, uint64_t *made);

/// The microphone, filling samples from `start_ns` (its clock) to `end_ns`: whether it records
/// silence (A/V test mode), and the pending click's instant and number (0 when none).
int webcam_av_samples(struct webcam_av *av, uint64_t start_ns, uint64_t end_ns, uint64_t *click_at_ns, uint32_t *click_number);

/// The microphone started click `number` at sample `sample` (its count since creation), recorded
/// at `at_ns`, in the URB it fills at `sent_ns`.
void webcam_av_clicked(struct webcam_av *av, uint32_t number, uint64_t sample, uint64_t at_ns, uint64_t sent_ns);

/// The camera handed the first bytes of frame `counter` to the host at `sent_ns`: recorded on
/// the flash that frame shows, if it shows one.
void webcam_av_frame_sent(struct webcam_av *av, uint32_t counter, uint64_t sent_ns);

/// The microphone, whose next sample is at `clock_ns` (its clock), moves its clock forward by
/// `skip_ns` (whole packets of `packet_ns`, so its sample grid stays), but never past a pending
/// click's packet. Returns where its next sample now is, where a flash may be made from.
uint64_t webcam_av_skip(struct webcam_av *av, uint64_t clock_ns, uint64_t skip_ns, uint64_t packet_ns);

/// The time of sample `index` of a run whose sample 0 is at `origin_ns` (48 samples a millisecond,
/// the formula both sides use, so a flash and its click get the same nanosecond).
static inline uint64_t webcam_av_sample_time(uint64_t origin_ns, uint64_t index) {
    return origin_ns + index * 1000000u / (USBDEV_MICROPHONE_RATE / 1000);
}

#endif
