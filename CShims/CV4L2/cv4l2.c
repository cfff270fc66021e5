#include "cv4l2.h"
#include <sys/ioctl.h>

int cv4l2_ioctl(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}
