// usbip_transport: the device side of the USB/IP protocol over a socket pair handed to vhci-hcd.
// One reader thread takes the host's commands: control requests on endpoint 0 are answered at
// once through the device's `control` callback; URBs for other endpoints wait in a queue until a
// device thread completes them (usbip_complete_next) or the host unlinks them (CMD_UNLINK).
//
// Wire format (drivers/usb/usbip): 48-byte big-endian headers. CMD_SUBMIT (1) is answered by
// RET_SUBMIT (3); CMD_UNLINK (2) by RET_UNLINK (4), status -ECONNRESET when the URB was still
// queued, else 0 (its RET_SUBMIT went first). A STALL is RET_SUBMIT with status -EPIPE. OUT
// data follows CMD_SUBMIT, IN data follows RET_SUBMIT; isochronous URBs carry their packet
// descriptors after the data, and IN data travels packed (only each packet's actual bytes).
#ifndef USBIP_TRANSPORT_H
#define USBIP_TRANSPORT_H
#include <stddef.h>
#include <stdint.h>

/// A USB setup packet (host byte order).
struct usb_setup {
    uint8_t request_type, request;
    uint16_t value, index, length;
};

/// One isochronous packet of a URB: where its data goes in the URB's buffer, how long it may
/// be, and (set by the device) how long it is.
struct usbip_iso_packet {
    uint32_t offset, length, actual_length;
    int32_t status;
};

/// What a device implements.
typedef struct {
    /// Answers a control request (all but SET_ADDRESS, which vhci-hcd handles itself). IN: write
    /// at most `setup->length` bytes into `data` and return the count. OUT: `data` holds the
    /// host's `setup->length` bytes; return 0. A negative return STALLs the request. Runs on the
    /// reader thread.
    int (*control)(void *context, const struct usb_setup *setup, uint8_t *data);
} usbip_device_ops;

typedef struct usbip_transport usbip_transport;

/// Speeds, as vhci's attach file takes them (enum usb_device_speed).
enum { USBIP_SPEED_FULL = 2, USBIP_SPEED_HIGH = 3 };

/// Attaches a device to a free high-speed port of vhci_hcd.0 and starts serving it. Returns NULL
/// and writes the reason into `error` on failure.
usbip_transport *usbip_attach(const usbip_device_ops *ops, void *context, int speed,
                              char *error, size_t error_size);

/// Fills the oldest URB queued on `endpoint` (its address, 0x80 set for IN) through `fill` and
/// sends it back. `fill` gets the URB's buffer and length (and, for isochronous URBs, its packets,
/// whose `actual_length` it sets) and returns the bytes written, or a negative status
/// (-EPIPE: STALL), or USBIP_FILL_DECLINE to leave the URB queued untouched (say, because it
/// belongs to a stream that started after the data was made). Waits up to `timeout_ms` for a URB. Returns 1 when one was completed, 0 on
/// timeout or decline, -1 once the device is disconnected.
typedef int32_t (*usbip_fill_fn)(void *context, uint8_t *buffer, uint32_t length,
                                 struct usbip_iso_packet *packets, uint32_t packet_count);
#define USBIP_FILL_DECLINE INT32_MIN
int usbip_complete_next(usbip_transport *transport, uint8_t endpoint, int timeout_ms,
                        usbip_fill_fn fill, void *context);

/// Waits up to `timeout_ms` until a URB is queued on `endpoint`. Returns 1 if one is, 0 on
/// timeout, -1 once disconnected.
int usbip_wait_urb(usbip_transport *transport, uint8_t endpoint, int timeout_ms);

/// Whether the host still holds the device (0 after an unplug from either side).
int usbip_connected(usbip_transport *transport);
/// The vhci port number the device is attached to.
int usbip_port(usbip_transport *transport);

/// Unplugs: detaches the port (a real USB disconnect), stops the reader thread and wakes every
/// waiter with -1. Safe to call more than once and from any thread but the reader's.
void usbip_unplug(usbip_transport *transport);
/// Frees the transport (unplugging first if needed). No thread may use it any more.
void usbip_free(usbip_transport *transport);

/// CLOCK_MONOTONIC in nanoseconds.
uint64_t usbip_now_ns(void);

#endif
