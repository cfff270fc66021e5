// CDRM: libdrm (xf86drm, xf86drmMode) and the DRM fourcc codes, which are function-like macros
// and so are exported here as typed constants prefixed `cdrm_`.
#ifndef CDRM_H
#define CDRM_H
#include <stdint.h>
#include <fcntl.h>
#include <xf86drm.h>
#include <xf86drmMode.h>
#include <drm_fourcc.h>

static const uint32_t cdrm_FORMAT_YUYV = DRM_FORMAT_YUYV;
static const uint32_t cdrm_FORMAT_UYVY = DRM_FORMAT_UYVY;
static const uint32_t cdrm_FORMAT_YVYU = DRM_FORMAT_YVYU;
static const uint32_t cdrm_FORMAT_VYUY = DRM_FORMAT_VYUY;
static const uint32_t cdrm_FORMAT_NV12 = DRM_FORMAT_NV12;
static const uint32_t cdrm_FORMAT_NV21 = DRM_FORMAT_NV21;
static const uint32_t cdrm_FORMAT_NV16 = DRM_FORMAT_NV16;
static const uint32_t cdrm_FORMAT_NV61 = DRM_FORMAT_NV61;
static const uint32_t cdrm_FORMAT_YUV420 = DRM_FORMAT_YUV420;
static const uint32_t cdrm_FORMAT_YVU420 = DRM_FORMAT_YVU420;
static const uint32_t cdrm_FORMAT_R8 = DRM_FORMAT_R8;
static const uint32_t cdrm_FORMAT_RGB888 = DRM_FORMAT_RGB888;
static const uint32_t cdrm_FORMAT_BGR888 = DRM_FORMAT_BGR888;
static const uint32_t cdrm_FORMAT_XRGB8888 = DRM_FORMAT_XRGB8888;
static const uint32_t cdrm_FORMAT_ARGB8888 = DRM_FORMAT_ARGB8888;
static const uint32_t cdrm_FORMAT_XBGR8888 = DRM_FORMAT_XBGR8888;
static const uint32_t cdrm_FORMAT_ABGR8888 = DRM_FORMAT_ABGR8888;
static const uint32_t cdrm_FORMAT_RGBX8888 = DRM_FORMAT_RGBX8888;
static const uint32_t cdrm_FORMAT_RGBA8888 = DRM_FORMAT_RGBA8888;
static const uint32_t cdrm_FORMAT_BGRX8888 = DRM_FORMAT_BGRX8888;
static const uint32_t cdrm_FORMAT_BGRA8888 = DRM_FORMAT_BGRA8888;
static const uint32_t cdrm_FORMAT_RGB565 = DRM_FORMAT_RGB565;
static const uint32_t cdrm_FORMAT_XRGB2101010 = DRM_FORMAT_XRGB2101010;
static const uint32_t cdrm_FORMAT_ARGB2101010 = DRM_FORMAT_ARGB2101010;
static const uint64_t cdrm_FORMAT_MOD_LINEAR = DRM_FORMAT_MOD_LINEAR;
static const uint64_t cdrm_FORMAT_MOD_INVALID = DRM_FORMAT_MOD_INVALID;

// Screen capture (ScreenSource): the ioctls issued per frame without libdrm's allocating wrappers.
static const unsigned long cdrm_IOCTL_MODE_GETPLANE = DRM_IOCTL_MODE_GETPLANE;
static const unsigned long cdrm_IOCTL_MODE_GETCRTC = DRM_IOCTL_MODE_GETCRTC;
static const unsigned long cdrm_IOCTL_MODE_GETFB = DRM_IOCTL_MODE_GETFB;
static const unsigned long cdrm_IOCTL_MODE_GETFB2 = DRM_IOCTL_MODE_GETFB2;
static const unsigned long cdrm_IOCTL_MODE_MAP_DUMB = DRM_IOCTL_MODE_MAP_DUMB;
static const unsigned long cdrm_IOCTL_MODE_OBJ_GETPROPERTIES = DRM_IOCTL_MODE_OBJ_GETPROPERTIES;
static const unsigned long cdrm_IOCTL_GEM_CLOSE = DRM_IOCTL_GEM_CLOSE;
static const uint32_t cdrm_MODE_FB_MODIFIERS = DRM_MODE_FB_MODIFIERS;
static const uint32_t cdrm_MODE_OBJECT_PLANE = DRM_MODE_OBJECT_PLANE;
static const uint32_t cdrm_MODE_OBJECT_CONNECTOR = DRM_MODE_OBJECT_CONNECTOR;
static const uint32_t cdrm_CLOEXEC = DRM_CLOEXEC;
static const uint32_t cdrm_RDWR = DRM_RDWR;
#endif
