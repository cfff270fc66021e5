// CXCB: libxcb and the extensions screen capture uses (MIT-SHM, RandR, DAMAGE, XFIXES).
// Swift imports the functions as they are; only the extension descriptors, mutable C globals
// that Swift 6 refuses to touch, are reached through the accessors below, and memfd_create
// (MIT-SHM 1.2 shares a memfd), which glibc declares only under _GNU_SOURCE.
#ifndef CXCB_H
#define CXCB_H
#include <stdlib.h>
#include <sys/ipc.h>
#include <sys/shm.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/memfd.h>
#include <xcb/xcb.h>
#include <xcb/shm.h>
#include <xcb/randr.h>
#include <xcb/damage.h>
#include <xcb/xfixes.h>

static inline xcb_extension_t *cxcb_shm_extension(void) { return &xcb_shm_id; }
static inline xcb_extension_t *cxcb_randr_extension(void) { return &xcb_randr_id; }
static inline xcb_extension_t *cxcb_damage_extension(void) { return &xcb_damage_id; }
static inline xcb_extension_t *cxcb_xfixes_extension(void) { return &xcb_xfixes_id; }

/// memfd_create(2) with MFD_CLOEXEC: an anonymous file to share with the X server. -1 and errno on failure.
static inline int cxcb_memfd_create(const char *name) { return (int)syscall(SYS_memfd_create, name, MFD_CLOEXEC); }
#endif
