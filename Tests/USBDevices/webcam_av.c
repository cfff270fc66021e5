// webcam_av.c: see webcam_av.h.
#include "webcam_av.h"
#include <errno.h>
#include <string.h>
#include <time.h>

enum { SAMPLES_PER_MS = USBDEV_MICROPHONE_RATE / 1000 };

void webcam_av_init(struct webcam_av *av) {
    memset(av, 0, sizeof *av);
    pthread_mutex_init(&av->lock, NULL);
}

void webcam_av_destroy(struct webcam_av *av) { pthread_mutex_destroy(&av->lock); }

uvc_picture webcam_av_frame(struct webcam_av *av, uint32_t counter, uint64_t now, uint64_t *made) {
    *made = now;
    pthread_mutex_lock(&av->lock);
    if (!av->enabled) {
        pthread_mutex_unlock(&av->lock);
        return UVC_PICTURE_BARS;
    }
    if (av->requested == av->flashed) {
        pthread_mutex_unlock(&av->lock);
        return UVC_PICTURE_DARK;
    }
    // The flash's instant: the microphone's first sample at or after now that it has not sent
    // yet, on its sample grid (from where its sent samples end), so the click lands on it exactly.
    uint64_t origin = av->horizon_ns, at = origin;
    if (now > origin) {
        uint64_t index = ((now - origin) * SAMPLES_PER_MS + 999999) / 1000000;
        at = webcam_av_sample_time(origin, index);
        while (at < now) at = webcam_av_sample_time(origin, ++index);  // integer rounding
    }
    uint32_t number = ++av->flashed;
    av->click_at_ns = at;
    av->click_number = number;
    usbdev_av_event *event = &av->events[(number - 1) % WEBCAM_AV_EVENTS];
    *event = (usbdev_av_event){.number = number, .frame = counter, .flash_ns = at,
                               .click_samples = WEBCAM_AV_CLICK_SAMPLES * number};
    pthread_mutex_unlock(&av->lock);
    struct timespec until = {(time_t)(at / 1000000000u), (long)(at % 1000000000u)};
    while (at > now && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL) == EINTR) {}
    *made = at;
    return UVC_PICTURE_WHITE;
}

int webcam_av_samples(struct webcam_av *av, uint64_t start_ns, uint64_t end_ns, uint64_t *click_at_ns, uint32_t *click_number) {
    (void)start_ns;
    pthread_mutex_lock(&av->lock);
    int silent = av->enabled;
    if (end_ns > av->horizon_ns) av->horizon_ns = end_ns;
    *click_at_ns = av->click_at_ns;
    *click_number = av->click_number;
    pthread_mutex_unlock(&av->lock);
    return silent;
}

void webcam_av_clicked(struct webcam_av *av, uint32_t number, uint64_t sample, uint64_t at_ns, uint64_t sent_ns) {
    pthread_mutex_lock(&av->lock);
    usbdev_av_event *event = &av->events[(number - 1) % WEBCAM_AV_EVENTS];
    if (event->number == number) {
        event->sample = sample;
        event->click_ns = at_ns;
        event->click_sent_ns = sent_ns;
    }
    if (av->click_number == number) av->click_at_ns = 0;
    pthread_mutex_unlock(&av->lock);
}

void webcam_av_frame_sent(struct webcam_av *av, uint32_t counter, uint64_t sent_ns) {
    pthread_mutex_lock(&av->lock);
    if (av->flashed > 0) {
        usbdev_av_event *event = &av->events[(av->flashed - 1) % WEBCAM_AV_EVENTS];
        if (event->frame == counter && event->flash_sent_ns == 0) event->flash_sent_ns = sent_ns;
    }
    pthread_mutex_unlock(&av->lock);
}

uint64_t webcam_av_skip(struct webcam_av *av, uint64_t clock_ns, uint64_t skip_ns, uint64_t packet_ns) {
    pthread_mutex_lock(&av->lock);
    uint64_t click = av->click_at_ns;
    if (click > clock_ns && clock_ns + skip_ns > click) skip_ns = (click - clock_ns) / packet_ns * packet_ns;
    clock_ns += skip_ns;
    if (clock_ns > av->horizon_ns) av->horizon_ns = clock_ns;
    pthread_mutex_unlock(&av->lock);
    return clock_ns;
}
