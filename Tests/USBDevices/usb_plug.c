// usb_plug.c: see usb_plug.h.
#include "usb_plug.h"
#include <errno.h>

void usb_plug_init(usb_plug *plug, void *device, usb_plug_attach_fn attach, usb_plug_detach_fn detach) {
    pthread_mutex_init(&plug->lock, NULL);
    plug->transport = NULL;
    plug->device = device;
    plug->attach = attach;
    plug->detach = detach;
}

/// Detaches if attached (lock held).
static void detach(usb_plug *plug) {
    if (!plug->transport) return;
    plug->detach(plug->device, plug->transport);
    plug->transport = NULL;
}

int usb_plug_replug(usb_plug *plug, char *error, size_t error_size) {
    pthread_mutex_lock(&plug->lock);
    detach(plug);  // also cleans up after an unplug by the host
    plug->transport = plug->attach(plug->device, error, error_size);
    int result = plug->transport ? 0 : ENODEV;
    pthread_mutex_unlock(&plug->lock);
    return result;
}

int usb_plug_unplug(usb_plug *plug) {
    pthread_mutex_lock(&plug->lock);
    int result = plug->transport ? 0 : ENODEV;
    detach(plug);
    pthread_mutex_unlock(&plug->lock);
    return result;
}

int usb_plug_is_plugged(usb_plug *plug) {
    pthread_mutex_lock(&plug->lock);
    int plugged = plug->transport && usbip_connected(plug->transport);
    pthread_mutex_unlock(&plug->lock);
    return plugged;
}

void usb_plug_destroy(usb_plug *plug) {
    usb_plug_unplug(plug);
    pthread_mutex_destroy(&plug->lock);
}
