// usb-device-emulator: plugs the project's emulated USB devices (Tests/USBDevices) into vhci-hcd
// and keeps them plugged until told to stop, for scripts (`scripts/rig run --usb ...`), the
// benchmarks and trying the CLI by hand. Needs root and `modprobe vhci-hcd`.
//
//   usb-device-emulator [--camera SERIAL] [--microphone SERIAL] [--webcam SERIAL] [--tone HZ] [--seconds N]
//
// --webcam is the composite webcam: a camera and a microphone in one USB device.
//
// Prints one line per device ("camera plugged: port 0, serial MD-CAM-1"), then "ready".
// Signals: SIGUSR1 unplugs every device, SIGUSR2 plugs them in again (same serial numbers),
// SIGTERM or SIGINT (or --seconds running out) unplugs them and exits 0.
#include "usb_devices.h"
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct options { const char *camera, *microphone, *webcam; double tone; int seconds; };

static int usage(void) {
    fprintf(stderr, "usage: usb-device-emulator [--camera SERIAL] [--microphone SERIAL] [--webcam SERIAL] [--tone HZ] [--seconds N]\n");
    return 2;
}

static int parse(int argc, char **argv, struct options *o) {
    *o = (struct options){NULL, NULL, NULL, 997, 0};
    for (int i = 1; i < argc; i++) {
        if (i + 1 >= argc) return -1;
        if (strcmp(argv[i], "--camera") == 0) o->camera = argv[++i];
        else if (strcmp(argv[i], "--microphone") == 0) o->microphone = argv[++i];
        else if (strcmp(argv[i], "--webcam") == 0) o->webcam = argv[++i];
        else if (strcmp(argv[i], "--tone") == 0) o->tone = atof(argv[++i]);
        else if (strcmp(argv[i], "--seconds") == 0) o->seconds = atoi(argv[++i]);
        else return -1;
    }
    return o->camera || o->microphone || o->webcam ? 0 : -1;
}

int main(int argc, char **argv) {
    struct options o;
    if (parse(argc, argv, &o) != 0) return usage();
    sigset_t signals;
    sigemptyset(&signals);
    sigaddset(&signals, SIGTERM); sigaddset(&signals, SIGINT);
    sigaddset(&signals, SIGUSR1); sigaddset(&signals, SIGUSR2);
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
