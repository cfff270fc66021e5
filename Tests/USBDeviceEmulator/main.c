// usb-device-emulator: plugs the project's emulated USB devices (Tests/USBDevices) into vhci-hcd
// and keeps them plugged until told to stop, for scripts (`scripts/rig.sh run --usb ...`), the
// benchmarks and trying the CLI by hand. Needs root and `modprobe vhci-hcd`.
//
//   usb-device-emulator [--camera SERIAL] [--microphone SERIAL] [--webcam SERIAL [--av-test]] [--tone HZ] [--seconds N]
//
// --webcam is the composite webcam: a camera and a microphone in one USB device.
// --av-test puts it in A/V test mode: its camera shows dark frames and its microphone records
// silence (no tone), and SIGHUP makes a flash and a click at one instant of its clock: the
// next frame is white and the microphone's sample of that frame's creation instant starts a
// click (a pulse of 8 × N samples at half of full scale for flash N). Once made, it prints
//   flash N FRAME_COUNTER T_NS
//   click N SAMPLE_INDEX T_NS
// (T_NS on CLOCK_MONOTONIC; the two are equal unless the microphone's clock was pulled past the
// flash; SAMPLE_INDEX counts samples since the microphone was created; "click N missing" when
// no capture took the microphone's samples within 3 s). Without --av-test the camera shows the
// bars and the microphone records the tone, as before.
//
// Prints one line per device ("camera plugged: port 0, serial MD-CAM-1"), then "ready".
// Signals: SIGUSR1 unplugs every device, SIGUSR2 plugs them in again (same serial numbers),
// SIGHUP flashes (--av-test), SIGTERM or SIGINT (or --seconds running out) unplugs them and
// exits 0.
#include "usb_devices.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options { const char *camera, *microphone, *webcam; double tone; int seconds, av_test; };

static int usage(void) {
    fprintf(stderr, "usage: usb-device-emulator [--camera SERIAL] [--microphone SERIAL] [--webcam SERIAL [--av-test]] [--tone HZ] [--seconds N]\n");
    return 2;
}

static int parse(int argc, char **argv, struct options *o) {
    *o = (struct options){NULL, NULL, NULL, 997, 0, 0};
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--av-test") == 0) { o->av_test = 1; continue; }
        if (i + 1 >= argc) return -1;
        if (strcmp(argv[i], "--camera") == 0) o->camera = argv[++i];
        else if (strcmp(argv[i], "--microphone") == 0) o->microphone = argv[++i];
        else if (strcmp(argv[i], "--webcam") == 0) o->webcam = argv[++i];
        else if (strcmp(argv[i], "--tone") == 0) o->tone = atof(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0) o->seconds = atoi(argv[++i]);
        else return -1;
    }
    if (o->av_test && !o->webcam) return -1;
    return o->camera || o->microphone || o->webcam ? 0 : -1;
}

/// SIGHUP in A/V test mode: one flash and its click, printed once made (up to 3 s each).
static void flash(usbdev_webcam *webcam) {
    uint32_t number = usbdev_webcam_flash(webcam);
    if (number == 0) { printf("flash: not in A/V test mode (--av-test)\n"); return; }
    usbdev_av_event event = {0};
    struct timespec pause = {0, 10000000};
    for (int i = 0; i < 300 && !usbdev_webcam_av_event(webcam, number, &event); i++) nanosleep(&pause, NULL);
    if (event.number != number) { printf("flash %u missing\n", number); return; }
    printf("flash %u %u %llu\n", number, event.frame, (unsigned long long)event.flash_ns);
    for (int i = 0; i < 300 && event.click_ns == 0; i++) {
        nanosleep(&pause, NULL);
        usbdev_webcam_av_event(webcam, number, &event);
    }
    if (event.click_ns == 0) printf("click %u missing\n", number);
    else printf("click %u %llu %llu\n", number, (unsigned long long)event.sample, (unsigned long long)event.click_ns);
}

int main(int argc, char **argv) {
    struct options o;
    if (parse(argc, argv, &o) != 0) return usage();
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM); sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGUSR1); sigaddset(&signals, SIGUSR2); sigaddset(&signals, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &signals, NULL);  // before any device thread starts
    char error[256] = "";
    usbdev_camera *camera = NULL;
    usbdev_microphone *microphone = NULL;
    if (o.camera && !(camera = usbdev_camera_plug(o.camera, error, sizeof error))) {
        fprintf(stderr, "usb-device-emulator: camera: %s\n", error);
        return 1;
    }
    if (camera) printf("camera plugged: port %d, serial %s\n", usbdev_camera_port(camera), o.camera);
    if (o.microphone && !(microphone = usbdev_microphone_plug(o.microphone, o.tone, 0.5, error, sizeof error))) {
        fprintf(stderr, "usb-device-emulator: microphone: %s\n", error);
        usbdev_camera_destroy(camera);
        return 1;
    }
    if (microphone) printf("microphone plugged: serial %s, %.1f Hz tone\n", o.microphone, o.tone);
    usbdev_webcam *webcam = NULL;
    if (o.webcam && !(webcam = usbdev_webcam_plug(o.webcam, o.tone, 0.5, error, sizeof error))) {
        fprintf(stderr, "usb-device-emulator: webcam: %s\n", error);
        usbdev_camera_destroy(camera);
        usbdev_microphone_destroy(microphone);
        return 1;
    }
    if (webcam && o.av_test) usbdev_webcam_set_av_test(webcam, 1);
    if (webcam) printf("webcam plugged: port %d, serial %s, %.1f Hz tone\n", usbdev_camera_port(usbdev_webcam_camera(webcam)), o.webcam, o.tone);
    printf("ready\n");
    fflush(stdout);
    struct timespec limit = {o.seconds, 0};
    for (;;) {
        int signal = o.seconds > 0 ? sigtimedwait(&signals, NULL, &limit) : sigwaitinfo(&signals, NULL);
        if (signal == SIGUSR1) {
            if (camera) usbdev_camera_unplug(camera);
            if (microphone) usbdev_microphone_unplug(microphone);
            if (webcam) usbdev_webcam_unplug(webcam);
            printf("unplugged\n");
        } else if (signal == SIGHUP) {
            if (webcam) flash(webcam);
        } else if (signal == SIGUSR2) {
            if (camera && usbdev_camera_replug(camera, error, sizeof error) != 0) fprintf(stderr, "usb-device-emulator: camera: %s\n", error);
            if (microphone && usbdev_microphone_replug(microphone, error, sizeof error) != 0) fprintf(stderr, "usb-device-emulator: microphone: %s\n", error);
            if (webcam && usbdev_webcam_replug(webcam, error, sizeof error) != 0) fprintf(stderr, "usb-device-emulator: webcam: %s\n", error);
            printf("replugged\n");
        } else {
            break;  // SIGTERM, SIGINT, or time up
        }
        fflush(stdout);
    }
    usbdev_camera_destroy(camera);
    usbdev_microphone_destroy(microphone);
    usbdev_webcam_destroy(webcam);
    return 0;
}
