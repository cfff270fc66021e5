// usb_plug: the plug state of an emulated device that owns its USB/IP transport (the
// microphone alone, the composite webcam), behind the lock its API functions take: plug in,
// unplug, plug in again, whether it is plugged. The device says how it attaches (a transport
// attached and its threads started) and detaches (unplugged, threads joined, transport freed);
// neither runs on a device thread, so they may join them while the lock is held.
#ifndef USB_PLUG_H
#define USB_PLUG_H
#include "usbip_transport.h"
#include <pthread.h>

/// Attaches `device` and starts its threads: its transport, or NULL with the reason in `error`.
typedef usbip_transport *(*usb_plug_attach_fn)(void *device, char *error, size_t error_size);
/// Unplugs `device` from `transport`, joins its threads and frees the transport.
typedef void (*usb_plug_detach_fn)(void *device, usbip_transport *transport);

typedef struct {
    pthread_mutex_t lock;
    usbip_transport *transport;  // NULL while unplugged
    void *device;
    usb_plug_attach_fn attach;
    usb_plug_detach_fn detach;
} usb_plug;

/// An unplugged device's state.
void usb_plug_init(usb_plug *plug, void *device, usb_plug_attach_fn attach, usb_plug_detach_fn detach);
/// Plugs the device in, unplugging it first if it is. Returns 0, or an errno (reason in `error`).
int usb_plug_replug(usb_plug *plug, char *error, size_t error_size);
/// Unplugs it. Returns 0, or ENODEV when it was not plugged in.
int usb_plug_unplug(usb_plug *plug);
/// Whether it is plugged in and the host still holds it.
int usb_plug_is_plugged(usb_plug *plug);
/// Unplugs it if plugged; the state is not used again.
void usb_plug_destroy(usb_plug *plug);

#endif
