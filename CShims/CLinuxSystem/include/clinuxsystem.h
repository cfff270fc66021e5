// CLinuxSystem: what Swift cannot import from the C library's Linux system headers, for every
// capability (MediaDevicesCore, so audio as well as video). The variadic ioctl(2) becomes a
// typed, non-variadic function; <sys/eventfd.h>, which Swift's Glibc module leaves out, is
// included so that eventfd(2) and its EFD_* flags import directly. Every symbol is prefixed
// `clinuxsystem_`. The V4L2 uapi is CV4L2's.
#ifndef CLINUXSYSTEM_H
#define CLINUXSYSTEM_H

#include <sys/eventfd.h> /* the capture and audio threads' wake-up event */

/// ioctl(2) with a pointer argument. Returns -1 and sets errno on failure.
int clinuxsystem_ioctl(int fd, unsigned long request, void *argument);

#endif
