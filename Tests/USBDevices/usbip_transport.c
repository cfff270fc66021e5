// usbip_transport.c: see usbip_transport.h.
#include "usbip_transport.h"
#include "vhci_port.h"

#include <arpa/inet.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

enum { CMD_SUBMIT = 1, CMD_UNLINK = 2, RET_SUBMIT = 3, RET_UNLINK = 4 };
enum { HEADER_SIZE = 48, ISO_DESCRIPTOR_SIZE = 16, MAX_TRANSFER = 16 << 20, MAX_PACKETS = 1024, MAX_CANCELLED = 64 };

/// A queued URB (IN, not on endpoint 0).
struct urb {
    struct urb *next;
    uint32_t seqnum, endpoint, length, start_frame;
    int32_t packet_count;  // -1 when not isochronous
    struct usbip_iso_packet *packets;
};

struct usbip_transport {
    const usbip_device_ops *ops;
    void *context;
    int fd;    // our end of the socket pair
    int port;  // vhci port
    pthread_t reader;
    int reader_started;
    pthread_mutex_t queue_lock;  // the URB queue and `connected`; taken before write_lock
    pthread_cond_t queue_changed;
    pthread_mutex_t write_lock;  // whole messages on the socket
    struct urb *queue;
    int connected;
    uint8_t *control_buffer;
    // vhci's tx thread can send a CMD_UNLINK before the CMD_SUBMIT it cancels (an URB submitted
    // and killed while the thread was sending unlinks). Such URBs are answered -ECONNRESET at
    // the unlink, and their CMD_SUBMIT, when it comes, is dropped. Reader thread only.
    uint32_t highest_submitted;
    uint32_t cancelled[MAX_CANCELLED];
    int cancelled_count;
    int trace;  // USBDEV_TRACE=1 in the environment: every control request on stderr
};

uint64_t usbip_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (uint64_t)now.tv_sec * 1000000000u + (uint64_t)now.tv_nsec;
}

// MARK: - Socket I/O

static int read_full(int fd, void *buffer, size_t length) {
    uint8_t *p = buffer;
    while (length > 0) {
        ssize_t n = read(fd, p, length);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

static int write_full(int fd, const void *buffer, size_t length) {
    const uint8_t *p = buffer;
    while (length > 0) {
        ssize_t n = send(fd, p, length, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return -1;
        p += n;
        length -= (size_t)n;
    }
    return 0;
}

static void put32(uint8_t *header, int word, uint32_t value) {
    uint32_t big = htonl(value);
    memcpy(header + 4 * word, &big, 4);
}

static uint32_t get32(const uint8_t *header, int word) {
    uint32_t big;
    memcpy(&big, header + 4 * word, 4);
    return ntohl(big);
}

/// Sends RET_SUBMIT for `seqnum` with `data` (already packed for isochronous URBs) and the
/// packet descriptors. Caller holds no lock; takes write_lock.
static int send_ret_submit(usbip_transport *t, uint32_t seqnum, int32_t status, const uint8_t *data,
                           uint32_t length, const struct usbip_iso_packet *packets, int32_t packet_count,
                           uint32_t start_frame) {
    uint8_t header[HEADER_SIZE] = {0};
    put32(header, 0, RET_SUBMIT);
    put32(header, 1, seqnum);
    put32(header, 5, (uint32_t)status);
    put32(header, 6, length);
    put32(header, 7, start_frame);
    put32(header, 8, packet_count > 0 ? (uint32_t)packet_count : 0);
    pthread_mutex_lock(&t->write_lock);
    int result = write_full(t->fd, header, sizeof header);
    // data is NULL for OUT transfers: RET_SUBMIT then reports actual_length without data.
    if (result == 0 && length > 0 && data) result = write_full(t->fd, data, length);
    for (int32_t i = 0; result == 0 && i < packet_count; i++) {
        uint8_t descriptor[ISO_DESCRIPTOR_SIZE];
        put32(descriptor, 0, packets[i].offset);
        put32(descriptor, 1, packets[i].length);
        put32(descriptor, 2, packets[i].actual_length);
        put32(descriptor, 3, (uint32_t)packets[i].status);
        result = write_full(t->fd, descriptor, sizeof descriptor);
    }
    pthread_mutex_unlock(&t->write_lock);
    return result;
}

static int send_ret_unlink(usbip_transport *t, uint32_t seqnum, int32_t status) {
    uint8_t header[HEADER_SIZE] = {0};
    put32(header, 0, RET_UNLINK);
    put32(header, 1, seqnum);
    put32(header, 5, (uint32_t)status);
    pthread_mutex_lock(&t->write_lock);
    int result = write_full(t->fd, header, sizeof header);
    pthread_mutex_unlock(&t->write_lock);
    return result;
}

// MARK: - Commands from the host

/// A control transfer on endpoint 0: answered at once through the device's callback.
static int handle_control(usbip_transport *t, const uint8_t *header, const uint8_t *out_data, uint32_t length) {
    const uint8_t *raw = header + 40;
    struct usb_setup setup = {
        .request_type = raw[0], .request = raw[1],
        .value = (uint16_t)(raw[2] | raw[3] << 8), .index = (uint16_t)(raw[4] | raw[5] << 8),
        .length = (uint16_t)(raw[6] | raw[7] << 8),
    };
    int in = setup.request_type & 0x80;
    if (setup.length > length) setup.length = (uint16_t)length;
    memset(t->control_buffer, 0, 65536);
    if (!in && setup.length > 0) memcpy(t->control_buffer, out_data, setup.length);
    int answer = t->ops->control(t->context, &setup, t->control_buffer);
    if (t->trace)
        fprintf(stderr, "usbip: control %02x %02x value %04x index %04x length %u -> %d\n", setup.request_type,
                setup.request, setup.value, setup.index, setup.length, answer);
    uint32_t seqnum = get32(header, 1);
    if (answer < 0) return send_ret_submit(t, seqnum, -EPIPE, NULL, 0, NULL, 0, 0);
    if (!in) return send_ret_submit(t, seqnum, 0, NULL, setup.length, NULL, 0, 0);
    uint32_t actual = (uint32_t)answer > setup.length ? setup.length : (uint32_t)answer;
    return send_ret_submit(t, seqnum, 0, t->control_buffer, actual, NULL, 0, 0);
}

static void enqueue(usbip_transport *t, struct urb *urb) {
    pthread_mutex_lock(&t->queue_lock);
    struct urb **tail = &t->queue;
    while (*tail) tail = &(*tail)->next;
    *tail = urb;
    pthread_cond_broadcast(&t->queue_changed);
    pthread_mutex_unlock(&t->queue_lock);
}

/// Whether `seqnum` was unlinked before its CMD_SUBMIT arrived (and forgets it).
static int take_cancelled(usbip_transport *t, uint32_t seqnum) {
    for (int i = 0; i < t->cancelled_count; i++) {
        if (t->cancelled[i] != seqnum) continue;
        t->cancelled[i] = t->cancelled[--t->cancelled_count];
        return 1;
    }
    return 0;
}

/// CMD_SUBMIT: reads what follows the header, then answers (control, OUT) or queues (IN).
static int handle_submit(usbip_transport *t, const uint8_t *header) {
    uint32_t seqnum = get32(header, 1), direction = get32(header, 3), endpoint = get32(header, 4);
    uint32_t length = get32(header, 6), start_frame = get32(header, 7);
    int32_t packets = (int32_t)get32(header, 8);
    if (length > MAX_TRANSFER || packets > MAX_PACKETS) return -1;
    int iso = packets > 0;  // vhci sends 0 (or 0xffffffff) for other transfer types
    uint8_t *out_data = NULL;
    if (direction == 0 && length > 0) {
        out_data = malloc(length);
        if (!out_data || read_full(t->fd, out_data, length) < 0) { free(out_data); return -1; }
    }
    struct usbip_iso_packet *iso_packets = NULL;
    if (iso) {
        iso_packets = calloc((size_t)packets, sizeof *iso_packets);
        for (int32_t i = 0; iso_packets && i < packets; i++) {
            uint8_t d[ISO_DESCRIPTOR_SIZE];
            if (read_full(t->fd, d, sizeof d) < 0) { free(iso_packets); iso_packets = NULL; break; }
            iso_packets[i] = (struct usbip_iso_packet){get32(d, 0), get32(d, 1), 0, 0};
        }
        if (!iso_packets) { free(out_data); return -1; }
    }
    int result = 0;
    if (seqnum > t->highest_submitted) t->highest_submitted = seqnum;
    if (take_cancelled(t, seqnum)) {
        // Unlinked before it arrived: vhci already gave it back.
    } else if (endpoint == 0) {
        result = handle_control(t, header, out_data, length);
    } else if (direction == 0) {
        // No emulated device takes OUT data on other endpoints: STALL.
        result = send_ret_submit(t, seqnum, -EPIPE, NULL, 0, NULL, 0, 0);
    } else {
        struct urb *urb = calloc(1, sizeof *urb);
        if (!urb) { free(out_data); free(iso_packets); return -1; }
        *urb = (struct urb){NULL, seqnum, endpoint | 0x80, length, start_frame, iso ? packets : -1, iso_packets};
        iso_packets = NULL;
        enqueue(t, urb);
    }
    free(out_data);
    free(iso_packets);
    return result;
}

/// CMD_UNLINK: -ECONNRESET when the URB was still queued, or has not arrived yet (it never gets
/// a RET_SUBMIT), else 0 (its RET_SUBMIT was sent before: both happen under queue_lock).
static int handle_unlink(usbip_transport *t, const uint8_t *header) {
    uint32_t seqnum = get32(header, 1), target = get32(header, 5);
    pthread_mutex_lock(&t->queue_lock);
    struct urb *found = NULL;
    for (struct urb **p = &t->queue; *p; p = &(*p)->next) {
        if ((*p)->seqnum == target) { found = *p; *p = found->next; break; }
    }
    // Not queued and never submitted: its CMD_SUBMIT is still on the way (vhci's seqnums grow).
    int early = !found && target > t->highest_submitted && t->cancelled_count < MAX_CANCELLED;
    if (early) t->cancelled[t->cancelled_count++] = target;
    int result = send_ret_unlink(t, seqnum, found || early ? -ECONNRESET : 0);
    pthread_mutex_unlock(&t->queue_lock);
    if (found) { free(found->packets); free(found); }
    return result;
}

static void mark_disconnected(usbip_transport *t) {
    pthread_mutex_lock(&t->queue_lock);
    t->connected = 0;
    pthread_cond_broadcast(&t->queue_changed);
    pthread_mutex_unlock(&t->queue_lock);
}

static void *reader_main(void *argument) {
    usbip_transport *t = argument;
    uint8_t header[HEADER_SIZE];
    while (read_full(t->fd, header, sizeof header) == 0) {
        uint32_t command = get32(header, 0);
        int result = command == CMD_SUBMIT ? handle_submit(t, header)
                   : command == CMD_UNLINK ? handle_unlink(t, header) : -1;
        if (result < 0) break;
    }
    // On a protocol error, end the connection: vhci then sees a disconnect at once instead of
    // waiting forever for an answer that will not come.
    shutdown(t->fd, SHUT_RDWR);
    mark_disconnected(t);
    return NULL;
}

// MARK: - Device side

static struct urb *first_on(usbip_transport *t, uint8_t endpoint) {
    for (struct urb *u = t->queue; u; u = u->next)
        if (u->endpoint == endpoint) return u;
    return NULL;
}

/// Waits with queue_lock held. Returns the URB, or NULL on timeout or disconnect.
static struct urb *wait_for(usbip_transport *t, uint8_t endpoint, int timeout_ms) {
    struct timespec deadline;
    clock_gettime(CLOCK_MONOTONIC, &deadline);
    deadline.tv_sec += timeout_ms / 1000;
    deadline.tv_nsec += (long)(timeout_ms % 1000) * 1000000L;
    if (deadline.tv_nsec >= 1000000000L) { deadline.tv_sec++; deadline.tv_nsec -= 1000000000L; }
    struct urb *urb;
    while (t->connected && !(urb = first_on(t, endpoint))) {
        if (pthread_cond_timedwait(&t->queue_changed, &t->queue_lock, &deadline) == ETIMEDOUT) break;
    }
    return t->connected ? first_on(t, endpoint) : NULL;
}

int usbip_wait_urb(usbip_transport *t, uint8_t endpoint, int timeout_ms) {
    pthread_mutex_lock(&t->queue_lock);
    struct urb *urb = wait_for(t, endpoint, timeout_ms);
    int result = !t->connected ? -1 : urb ? 1 : 0;
    pthread_mutex_unlock(&t->queue_lock);
    return result;
}

/// Moves each packet's actual bytes to the front, one after another (USB/IP's packed form).
static uint32_t pack_iso(uint8_t *buffer, const struct usbip_iso_packet *packets, int32_t count) {
    uint32_t packed = 0;
    for (int32_t i = 0; i < count; i++) {
        if (packed != packets[i].offset) memmove(buffer + packed, buffer + packets[i].offset, packets[i].actual_length);
        packed += packets[i].actual_length;
    }
    return packed;
}

int usbip_complete_next(usbip_transport *t, uint8_t endpoint, int timeout_ms, usbip_fill_fn fill, void *context) {
    pthread_mutex_lock(&t->queue_lock);
    struct urb *urb = wait_for(t, endpoint, timeout_ms);
    if (!urb) {
        int result = t->connected ? 0 : -1;
        pthread_mutex_unlock(&t->queue_lock);
        return result;
    }
    uint8_t *buffer = calloc(1, urb->length ? urb->length : 1);
    int32_t status = 0;
    uint32_t length = 0;
    if (!buffer) {
        status = -ENOMEM;
    } else {
        uint32_t count = urb->packet_count > 0 ? (uint32_t)urb->packet_count : 0;
        int32_t filled = fill(context, buffer, urb->length, urb->packets, count);
        if (filled == USBIP_FILL_DECLINE) {
            pthread_mutex_unlock(&t->queue_lock);
            free(buffer);
            return 0;
        }
        if (filled < 0) status = filled;
        else if (urb->packet_count > 0) length = pack_iso(buffer, urb->packets, urb->packet_count);
        else length = (uint32_t)filled > urb->length ? urb->length : (uint32_t)filled;
    }
    for (struct urb **p = &t->queue; *p; p = &(*p)->next)
        if (*p == urb) { *p = urb->next; break; }
    // Still under queue_lock, so an unlink of this URB is answered after its RET_SUBMIT.
    int sent = send_ret_submit(t, urb->seqnum, status, buffer, status < 0 ? 0 : length, urb->packets,
                               urb->packet_count, urb->start_frame);
    pthread_mutex_unlock(&t->queue_lock);
    free(buffer);
    free(urb->packets);
    free(urb);
    return sent == 0 ? 1 : -1;
}

// MARK: - Life cycle

usbip_transport *usbip_attach(const usbip_device_ops *ops, void *context, int speed, char *error, size_t error_size) {
    usbip_transport *t = calloc(1, sizeof *t);
    if (!t || !(t->control_buffer = malloc(65536))) {
        snprintf(error, error_size, "out of memory");
        free(t);
        return NULL;
    }
    t->ops = ops;
    t->context = context;
    t->port = -1;
    t->trace = getenv("USBDEV_TRACE") != NULL;
    t->fd = -1;
    pthread_mutex_init(&t->queue_lock, NULL);
    pthread_mutex_init(&t->write_lock, NULL);
    pthread_condattr_t attributes;
    pthread_condattr_init(&attributes);
    pthread_condattr_setclock(&attributes, CLOCK_MONOTONIC);
    pthread_cond_init(&t->queue_changed, &attributes);
    pthread_condattr_destroy(&attributes);
    int pair[2];
    if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, pair) < 0) {
        snprintf(error, error_size, "socketpair: %s", strerror(errno));
        usbip_free(t);
        return NULL;
    }
    t->fd = pair[0];
    t->connected = 1;
    // The reader must run before the kernel's first request arrives (it comes at once).
    if (pthread_create(&t->reader, NULL, reader_main, t) != 0) {
        snprintf(error, error_size, "pthread_create failed");
        close(pair[1]);
        t->connected = 0;
        usbip_free(t);
        return NULL;
    }
    t->reader_started = 1;
    t->port = vhci_attach(pair[1], speed, error, error_size);
    close(pair[1]);  // the kernel holds its own reference now
    if (t->port < 0) {
        shutdown(t->fd, SHUT_RDWR);
        usbip_free(t);
        return NULL;
    }
    return t;
}

int usbip_connected(usbip_transport *t) {
    pthread_mutex_lock(&t->queue_lock);
    int connected = t->connected;
    pthread_mutex_unlock(&t->queue_lock);
    return connected;
}

int usbip_port(usbip_transport *t) { return t->port; }

void usbip_unplug(usbip_transport *t) {
    if (usbip_connected(t) && t->port >= 0) vhci_detach(t->port);
    // Detach closes the kernel's end; shutting ours down as well ends the reader either way.
    shutdown(t->fd, SHUT_RDWR);
    if (t->reader_started) { pthread_join(t->reader, NULL); t->reader_started = 0; }
    mark_disconnected(t);
}

void usbip_free(usbip_transport *t) {
    if (!t) return;
    if (t->fd >= 0) {
        usbip_unplug(t);
        close(t->fd);
    }
    while (t->queue) {
        struct urb *next = t->queue->next;
        free(t->queue->packets);
        free(t->queue);
        t->queue = next;
    }
    pthread_mutex_destroy(&t->queue_lock);
    pthread_mutex_destroy(&t->write_lock);
    pthread_cond_destroy(&t->queue_changed);
    free(t->control_buffer);
    free(t);
}
