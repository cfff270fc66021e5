// vhci_port: plugging a socket into a port of the USB/IP virtual host controller vhci_hcd.0
// (drivers/usb/usbip/vhci_sysfs.c), without the usbip tool.
#ifndef VHCI_PORT_H
#define VHCI_PORT_H
#include <stddef.h>

/// Writes "PORT FD DEVID SPEED" to vhci_hcd.0's `attach` for the first free high-speed port
/// (status 004 in `status`), retrying the next one if another process took it first. Returns
/// the port, or -1 with the reason in `error` (no vhci-hcd module, no free port, not root).
int vhci_attach(int socket_fd, int speed, char *error, size_t error_size);

/// Writes the port to `detach`: the kernel disconnects the device and closes its socket end.
/// Returns 0, or an errno.
int vhci_detach(int port);

#endif
