#include "clinuxsystem.h"
#include <sys/ioctl.h>

int clinuxsystem_ioctl(int fd, unsigned long request, void *argument) {
    return ioctl(fd, request, argument);
}
