// A HID sensor-hub 3D accelerometer over /dev/uhid (see uhid_accelerometer.h).
//
// What the kernel's drivers need, learnt the hard way:
//  - the sensor usage (page 0x20, usage 0x73) sits in a Physical collection;
//  - every property and data usage is its own Feature or Input main item;
//  - Power State (0x0319, selectors 0x0850-0x0855) is mandatory, with Reporting State
//    (0x0316), Report Interval (0x030E) and change sensitivity (0x1452) beside it;
//  - the driver writes selectors as list position + 1, hence logical minimum 1;
//  - a raw read sends GET_REPORT for the input report and waits for the answer.
#define _GNU_SOURCE
#include "uhid_accelerometer.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/uhid.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define REPORT_ID 1

static const uint8_t descriptor[] = {
    0x05, 0x20,              // Usage Page (Sensor)
    0x09, 0x73,              // Usage (Motion: Accelerometer 3D)
    0xA1, 0x00,              // Collection (Physical)
    0x85, REPORT_ID,         //   Report ID
    // Feature byte 0: Reporting State, selectors 0x0840-0x0845.
    0x0A, 0x16, 0x03,        //   Usage (Property: Reporting State)
    0x15, 0x01, 0x25, 0x06,  //   Logical Minimum 1, Logical Maximum 6
    0x75, 0x08, 0x95, 0x01,  //   Report Size 8, Report Count 1
    0xA1, 0x02,              //   Collection (Logical)
    0x0A, 0x40, 0x08, 0x0A, 0x41, 0x08, 0x0A, 0x42, 0x08,
    0x0A, 0x43, 0x08, 0x0A, 0x44, 0x08, 0x0A, 0x45, 0x08,
    0xB1, 0x00,              //     Feature (Data, Array, Absolute)
    0xC0,                    //   End Collection
    // Feature byte 1: Power State, selectors 0x0850-0x0855.
    0x0A, 0x19, 0x03,        //   Usage (Property: Power State)
    0x15, 0x01, 0x25, 0x06,
    0x75, 0x08, 0x95, 0x01,
    0xA1, 0x02,
    0x0A, 0x50, 0x08, 0x0A, 0x51, 0x08, 0x0A, 0x52, 0x08,
    0x0A, 0x53, 0x08, 0x0A, 0x54, 0x08, 0x0A, 0x55, 0x08,
    0xB1, 0x00,
    0xC0,
    // Feature bytes 2-5: Report Interval (ms).
    0x0A, 0x0E, 0x03,        //   Usage (Property: Report Interval)
    0x15, 0x00, 0x27, 0xFF, 0xFF, 0xFF, 0x7F,
    0x75, 0x20, 0x95, 0x01, 0x55, 0x00,
    0xB1, 0x02,              //   Feature (Data, Variable, Absolute)
    // Feature bytes 6-7: change sensitivity (absolute) of acceleration.
    0x0A, 0x52, 0x14,        //   Usage (Acceleration | Change Sensitivity Absolute)
    0x15, 0x00, 0x26, 0xFF, 0x7F,
    0x75, 0x10, 0x95, 0x01, 0x55, 0x0E,
    0xB1, 0x02,
    // Input: X, Y, Z, 16 bits each, unit exponent -2 (1 g = 100).
    0x0A, 0x53, 0x04,        //   Usage (Acceleration X)
    0x16, 0x01, 0x80, 0x26, 0xFF, 0x7F,
    0x75, 0x10, 0x95, 0x01, 0x55, 0x0E,
    0x81, 0x02,              //   Input (Data, Variable, Absolute)
    0x0A, 0x54, 0x04,        //   Usage (Acceleration Y)
    0x81, 0x02,
    0x0A, 0x55, 0x04,        //   Usage (Acceleration Z)
    0x81, 0x02,
    0xC0,                    // End Collection
};

#define FEATURE_SIZE 8  // without the report ID
#define INPUT_SIZE 6

struct uhidaccel {
    int fd;
    int stop[2];
    pthread_t thread;
    pthread_mutex_t lock;   // guards the fields below and writes to fd
    uint8_t feature[FEATURE_SIZE];
    int16_t xyz[3];
    unsigned requests;
};

static int write_event(uhidaccel *d, const struct uhid_event *ev) {
    ssize_t n = write(d->fd, ev, sizeof(*ev));
    return n == (ssize_t)sizeof(*ev) ? 0 : (n < 0 ? errno : EIO);
}

static void input_bytes(uhidaccel *d, uint8_t *out) {
    for (int i = 0; i < 3; i++) {
        out[2 * i] = (uint8_t)(d->xyz[i] & 0xFF);
        out[2 * i + 1] = (uint8_t)((uint16_t)d->xyz[i] >> 8);
    }
}

static void answer_get(uhidaccel *d, const struct uhid_get_report_req *req) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_GET_REPORT_REPLY;
    ev.u.get_report_reply.id = req->id;
    pthread_mutex_lock(&d->lock);
    d->requests++;
    if (req->rnum != REPORT_ID) {
        ev.u.get_report_reply.err = EIO;
    } else if (req->rtype == UHID_FEATURE_REPORT) {
        ev.u.get_report_reply.data[0] = REPORT_ID;
        memcpy(ev.u.get_report_reply.data + 1, d->feature, FEATURE_SIZE);
        ev.u.get_report_reply.size = FEATURE_SIZE + 1;
    } else if (req->rtype == UHID_INPUT_REPORT) {
        ev.u.get_report_reply.data[0] = REPORT_ID;
        input_bytes(d, ev.u.get_report_reply.data + 1);
        ev.u.get_report_reply.size = INPUT_SIZE + 1;
    } else {
        ev.u.get_report_reply.err = EIO;
    }
    write_event(d, &ev);
    pthread_mutex_unlock(&d->lock);
}

static void answer_set(uhidaccel *d, const struct uhid_set_report_req *req) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_SET_REPORT_REPLY;
    ev.u.set_report_reply.id = req->id;
    pthread_mutex_lock(&d->lock);
    d->requests++;
    if (req->rnum == REPORT_ID && req->rtype == UHID_FEATURE_REPORT && req->size >= 1) {
        // The data starts with the report ID.
        size_t n = req->size - 1 < FEATURE_SIZE ? req->size - 1 : FEATURE_SIZE;
        memcpy(d->feature, req->data + 1, n);
    } else {
        ev.u.set_report_reply.err = EIO;
    }
    write_event(d, &ev);
    pthread_mutex_unlock(&d->lock);
}

static void *serve(void *context) {
    uhidaccel *d = context;
    struct pollfd fds[2] = {{.fd = d->fd, .events = POLLIN}, {.fd = d->stop[0], .events = POLLIN}};
    for (;;) {
        int ready = poll(fds, 2, -1);
        if (ready < 0) {
            if (errno == EINTR) continue;
            break;
        }
        if (fds[1].revents) break;
        if (!(fds[0].revents & POLLIN)) {
            if (fds[0].revents & (POLLHUP | POLLERR | POLLNVAL)) break;
            continue;
        }
        struct uhid_event ev;
        ssize_t n = read(d->fd, &ev, sizeof(ev));
        if (n <= 0) {
            if (n < 0 && (errno == EINTR || errno == EAGAIN)) continue;
            break;
        }
        switch (ev.type) {
        case UHID_GET_REPORT: answer_get(d, &ev.u.get_report); break;
        case UHID_SET_REPORT: answer_set(d, &ev.u.set_report); break;
        default: break;  // START, STOP, OPEN, CLOSE, OUTPUT: nothing to do
        }
    }
    return NULL;
}

uhidaccel *uhidaccel_create(const char *name, char *error, size_t error_size) {
    uhidaccel *d = calloc(1, sizeof(*d));
    if (!d) { snprintf(error, error_size, "out of memory"); return NULL; }
    d->fd = open("/dev/uhid", O_RDWR | O_CLOEXEC);
    if (d->fd < 0) {
        snprintf(error, error_size, "open /dev/uhid: %s (needs root and `modprobe uhid`)", strerror(errno));
        free(d);
        return NULL;
    }
    if (pipe2(d->stop, O_CLOEXEC) != 0) {
        snprintf(error, error_size, "pipe2: %s", strerror(errno));
        close(d->fd); free(d);
        return NULL;
    }
    pthread_mutex_init(&d->lock, NULL);
    d->feature[0] = 1;  // reporting: first selector
    d->feature[1] = 1;  // power: first selector
    d->feature[2] = 100; // report interval 100 ms
    d->xyz[1] = -100;    // upright: gravity along -y

    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_CREATE2;
    snprintf((char *)ev.u.create2.name, sizeof(ev.u.create2.name), "%s", name ? name : "MediaDevices test accelerometer");
    memcpy(ev.u.create2.rd_data, descriptor, sizeof(descriptor));
    ev.u.create2.rd_size = sizeof(descriptor);
    ev.u.create2.bus = 0x03;  // BUS_USB
    ev.u.create2.vendor = 0x1d6b;
    ev.u.create2.product = 0x0a11;
    int err = write_event(d, &ev);
    if (err) {
        snprintf(error, error_size, "UHID_CREATE2: %s", strerror(err));
        close(d->fd); close(d->stop[0]); close(d->stop[1]); free(d);
        return NULL;
    }
    if (pthread_create(&d->thread, NULL, serve, d) != 0) {
        snprintf(error, error_size, "pthread_create failed");
        close(d->fd); close(d->stop[0]); close(d->stop[1]); free(d);
        return NULL;
    }
    return d;
}

int uhidaccel_set(uhidaccel *d, int16_t x, int16_t y, int16_t z) {
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_INPUT2;
    pthread_mutex_lock(&d->lock);
    d->xyz[0] = x; d->xyz[1] = y; d->xyz[2] = z;
    ev.u.input2.data[0] = REPORT_ID;
    input_bytes(d, ev.u.input2.data + 1);
    ev.u.input2.size = INPUT_SIZE + 1;
    int err = write_event(d, &ev);
    pthread_mutex_unlock(&d->lock);
    return err;
}

unsigned uhidaccel_requests(uhidaccel *d) {
    pthread_mutex_lock(&d->lock);
    unsigned n = d->requests;
    pthread_mutex_unlock(&d->lock);
    return n;
}

unsigned uhidaccel_power_state(uhidaccel *d) {
    pthread_mutex_lock(&d->lock);
    unsigned n = d->feature[1];
    pthread_mutex_unlock(&d->lock);
    return n;
}

void uhidaccel_destroy(uhidaccel *d) {
    if (!d) return;
    struct uhid_event ev;
    memset(&ev, 0, sizeof(ev));
    ev.type = UHID_DESTROY;
    // Stop the thread first, so no reply races the destroy.
    char one = 1;
    (void)!write(d->stop[1], &one, 1);
    pthread_join(d->thread, NULL);
    write_event(d, &ev);
    close(d->fd);
    close(d->stop[0]);
    close(d->stop[1]);
    pthread_mutex_destroy(&d->lock);
    free(d);
}
