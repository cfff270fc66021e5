// CDRM: libdrm (xf86drm, xf86drmMode) and the DRM fourcc codes, which are function-like macros
// and so are exported here as typed constants prefixed `cdrm_`.
#ifndef CDRM_H
#define CDRM_H
#include <stdint.h>
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
static const uint64_t cdrm_FORMAT_MOD_LINEAR = DRM_FORMAT_MOD_LINEAR;
static const uint64_t cdrm_FORMAT_MOD_INVALID = DRM_FORMAT_MOD_INVALID;
#endif
