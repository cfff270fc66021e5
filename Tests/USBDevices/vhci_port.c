// vhci_port.c: see vhci_port.h.
#include "vhci_port.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define VHCI "/sys/devices/platform/vhci_hcd.0"

/// Writes `text` to a sysfs file. Returns 0 or an errno.
static int write_attribute(const char *path, const char *text) {
    int fd = open(path, O_WRONLY | O_CLOEXEC);
    if (fd < 0) return errno;
    ssize_t n = write(fd, text, strlen(text));
    int result = n < 0 ? errno : 0;
    close(fd);
    return result;
}

/// The free high-speed ports of vhci_hcd.0, in order; returns how many (at most `capacity`).
/// Lines look like "hs  0003 004 000 00000000 0000000000000000 0-0" (hub, port, status, ...).
static int free_ports(int *ports, int capacity) {
    FILE *file = fopen(VHCI "/status", "re");
    if (!file) return -1;
    char line[256], hub[8];
    int count = 0;
    unsigned port, status;
    while (count < capacity && fgets(line, sizeof line, file)) {
        if (sscanf(line, "%7s %u %u", hub, &port, &status) == 3 && strcmp(hub, "hs") == 0 && status == 4)
            ports[count++] = (int)port;
    }
    fclose(file);
    return count;
}

int vhci_attach(int socket_fd, int speed, char *error, size_t error_size) {
    int ports[32];
    int count = free_ports(ports, 32);
    if (count < 0) {
        snprintf(error, error_size, "%s/status: %s (is the vhci-hcd module loaded? `modprobe vhci-hcd`)", VHCI, strerror(errno));
        return -1;
    }
    if (count == 0) {
        snprintf(error, error_size, "no free high-speed port on vhci_hcd.0");
        return -1;
    }
    int last = 0;
    for (int i = 0; i < count; i++) {
        char text[64];
        // DEVID = busnum << 16 | devnum, as usbipd reports it; ours only has to be unique.
        snprintf(text, sizeof text, "%d %d %d %d", ports[i], socket_fd, (1 << 16) | (ports[i] + 2), speed);
        last = write_attribute(VHCI "/attach", text);
        if (last == 0) return ports[i];
        if (last != EBUSY) break;  // EBUSY: another process took this port meanwhile
    }
    snprintf(error, error_size, "writing %s/attach failed: %s%s", VHCI, strerror(last),
             last == EACCES || last == EPERM ? " (needs root)" : "");
    return -1;
}

int vhci_detach(int port) {
    char text[16];
    snprintf(text, sizeof text, "%d", port);
    return write_attribute(VHCI "/detach", text);
}
