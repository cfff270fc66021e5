// CV4L2: what Swift cannot import from the kernel's V4L2 uapi header.
// Function-like macros (VIDIOC_* request codes, v4l2_fourcc pixel formats) become typed
// constants; the requests whose structs Swift cannot read become typed functions. Every symbol
// is prefixed `cv4l2_`. Structs and plain #define constants are imported by Swift directly.
// The generic ioctl(2) wrapper and eventfd are CLinuxSystem's.
#ifndef CV4L2_H
#define CV4L2_H

#include <linux/dma-buf.h> /* DMA_BUF_IOCTL_SYNC around CPU access to exported buffers */
#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>

// MARK: ioctl request codes
static const unsigned long cv4l2_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long cv4l2_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long cv4l2_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long cv4l2_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long cv4l2_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long cv4l2_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long cv4l2_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long cv4l2_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long cv4l2_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long cv4l2_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long cv4l2_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long cv4l2_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long cv4l2_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long cv4l2_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long cv4l2_VIDIOC_EXPBUF = VIDIOC_EXPBUF;
static const unsigned long cv4l2_DMA_BUF_IOCTL_SYNC = DMA_BUF_IOCTL_SYNC;
static const unsigned long cv4l2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long cv4l2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long cv4l2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long cv4l2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long cv4l2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long cv4l2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long cv4l2_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;
static const unsigned long cv4l2_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_TRY_EXT_CTRLS = VIDIOC_TRY_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_SUBSCRIBE_EVENT = VIDIOC_SUBSCRIBE_EVENT;
static const unsigned long cv4l2_VIDIOC_UNSUBSCRIBE_EVENT = VIDIOC_UNSUBSCRIBE_EVENT;

// MARK: controls whose structs Swift cannot read: v4l2_ext_control and v4l2_querymenu are
// packed structs around unions, and v4l2_event's payload is a union of unions.

/// VIDIOC_G_EXT_CTRLS, VIDIOC_TRY_EXT_CTRLS or VIDIOC_S_EXT_CTRLS (`request`) on `count`
/// controls as one request, `which` being V4L2_CTRL_WHICH_CUR_VAL or V4L2_CTRL_WHICH_DEF_VAL.
/// Control i is `ids[i]`; its value is `values[i]` (read back into it for G), unless
/// `payloads[i]` is non-NULL: then the control's payload (a string, an array) is the
/// `payload_sizes[i]` bytes there. Returns 0, or -1 with errno set and `*error_index` as the
/// driver set it (`count` when the request failed before any control was applied).
int cv4l2_ext_controls(int fd, unsigned long request, uint32_t which, uint32_t count, const uint32_t *ids,
                       int64_t *values, void *const *payloads, const uint32_t *payload_sizes, uint32_t *error_index);

/// VIDIOC_QUERYMENU for entry `index` of menu control `id`: its name (NUL-terminated, at most
/// 32 bytes) for menus, its value for integer menus. Returns 0, or -1 with errno set (EINVAL for
/// the gaps drivers leave in a menu).
int cv4l2_query_menu(int fd, uint32_t id, uint32_t index, char name[32], int64_t *value);

/// A V4L2_EVENT_CTRL event, flattened.
struct cv4l2_control_event {
    uint32_t id, changes, type, flags;
    int64_t value, minimum, maximum, step, default_value;
};
/// VIDIOC_DQEVENT. Returns 1 with `*event` filled for a control event, 0 for another event,
/// -1 with errno set (ENOENT: no event pending).
int cv4l2_dequeue_control_event(int fd, struct cv4l2_control_event *event);

// MARK: buffer types
// Plain integers: the enum's V4L2_BUF_TYPE_VIDEO_CAPTURE is not found by a release (whole-module)
// build of MediaDevices since CV4LConvert's libv4lconvert.h includes videodev2.h too (the
// importer gives the constant to that module); a debug build finds it.
static const uint32_t cv4l2_BUF_TYPE_VIDEO_CAPTURE = V4L2_BUF_TYPE_VIDEO_CAPTURE;
static const uint32_t cv4l2_BUF_TYPE_VIDEO_CAPTURE_MPLANE = V4L2_BUF_TYPE_VIDEO_CAPTURE_MPLANE;
/// The producer's side of a loopback device (v4l2loopback): VIDIOC_S_FMT and VIDIOC_S_PARM there.
static const uint32_t cv4l2_BUF_TYPE_VIDEO_OUTPUT = V4L2_BUF_TYPE_VIDEO_OUTPUT;

// MARK: control identifiers built from other macros
static const uint32_t cv4l2_CID_CAMERA_ORIENTATION = V4L2_CID_CAMERA_ORIENTATION;
static const uint32_t cv4l2_CID_CAMERA_SENSOR_ROTATION = V4L2_CID_CAMERA_SENSOR_ROTATION;
static const uint32_t cv4l2_CTRL_FLAG_NEXT_CTRL = V4L2_CTRL_FLAG_NEXT_CTRL;
static const uint32_t cv4l2_CTRL_FLAG_NEXT_COMPOUND = V4L2_CTRL_FLAG_NEXT_COMPOUND;
static const uint32_t cv4l2_CTRL_WHICH_CUR_VAL = V4L2_CTRL_WHICH_CUR_VAL;
static const uint32_t cv4l2_CTRL_WHICH_DEF_VAL = V4L2_CTRL_WHICH_DEF_VAL;

// MARK: pixel formats (v4l2_fourcc)
static const uint32_t cv4l2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t cv4l2_PIX_FMT_UYVY = V4L2_PIX_FMT_UYVY;
static const uint32_t cv4l2_PIX_FMT_YVYU = V4L2_PIX_FMT_YVYU;
static const uint32_t cv4l2_PIX_FMT_VYUY = V4L2_PIX_FMT_VYUY;
static const uint32_t cv4l2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t cv4l2_PIX_FMT_NV21 = V4L2_PIX_FMT_NV21;
static const uint32_t cv4l2_PIX_FMT_NV16 = V4L2_PIX_FMT_NV16;
static const uint32_t cv4l2_PIX_FMT_NV61 = V4L2_PIX_FMT_NV61;
static const uint32_t cv4l2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const uint32_t cv4l2_PIX_FMT_YVU420 = V4L2_PIX_FMT_YVU420;
static const uint32_t cv4l2_PIX_FMT_NV12M = V4L2_PIX_FMT_NV12M;
static const uint32_t cv4l2_PIX_FMT_NV21M = V4L2_PIX_FMT_NV21M;
static const uint32_t cv4l2_PIX_FMT_YUV420M = V4L2_PIX_FMT_YUV420M;
static const uint32_t cv4l2_PIX_FMT_GREY = V4L2_PIX_FMT_GREY;
static const uint32_t cv4l2_PIX_FMT_RGB24 = V4L2_PIX_FMT_RGB24;
static const uint32_t cv4l2_PIX_FMT_BGR24 = V4L2_PIX_FMT_BGR24;
static const uint32_t cv4l2_PIX_FMT_XRGB32 = V4L2_PIX_FMT_XRGB32;
static const uint32_t cv4l2_PIX_FMT_ARGB32 = V4L2_PIX_FMT_ARGB32;
static const uint32_t cv4l2_PIX_FMT_XBGR32 = V4L2_PIX_FMT_XBGR32;
static const uint32_t cv4l2_PIX_FMT_ABGR32 = V4L2_PIX_FMT_ABGR32;
static const uint32_t cv4l2_PIX_FMT_RGBX32 = V4L2_PIX_FMT_RGBX32;
static const uint32_t cv4l2_PIX_FMT_RGBA32 = V4L2_PIX_FMT_RGBA32;
static const uint32_t cv4l2_PIX_FMT_BGRX32 = V4L2_PIX_FMT_BGRX32;
static const uint32_t cv4l2_PIX_FMT_BGRA32 = V4L2_PIX_FMT_BGRA32;
static const uint32_t cv4l2_PIX_FMT_RGB565 = V4L2_PIX_FMT_RGB565;
static const uint32_t cv4l2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t cv4l2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;
static const uint32_t cv4l2_PIX_FMT_YUV422P = V4L2_PIX_FMT_YUV422P;
static const uint32_t cv4l2_PIX_FMT_YUV422M = V4L2_PIX_FMT_YUV422M;
static const uint32_t cv4l2_PIX_FMT_YVU422M = V4L2_PIX_FMT_YVU422M;
static const uint32_t cv4l2_PIX_FMT_YUV444M = V4L2_PIX_FMT_YUV444M;
static const uint32_t cv4l2_PIX_FMT_YVU444M = V4L2_PIX_FMT_YVU444M;
static const uint32_t cv4l2_PIX_FMT_YVU420M = V4L2_PIX_FMT_YVU420M;
static const uint32_t cv4l2_PIX_FMT_NV16M = V4L2_PIX_FMT_NV16M;
static const uint32_t cv4l2_PIX_FMT_NV61M = V4L2_PIX_FMT_NV61M;
static const uint32_t cv4l2_PIX_FMT_NV24 = V4L2_PIX_FMT_NV24;
static const uint32_t cv4l2_PIX_FMT_NV42 = V4L2_PIX_FMT_NV42;
static const uint32_t cv4l2_PIX_FMT_YUV32 = V4L2_PIX_FMT_YUV32;
static const uint32_t cv4l2_PIX_FMT_AYUV32 = V4L2_PIX_FMT_AYUV32;
static const uint32_t cv4l2_PIX_FMT_XYUV32 = V4L2_PIX_FMT_XYUV32;
static const uint32_t cv4l2_PIX_FMT_VUYA32 = V4L2_PIX_FMT_VUYA32;
static const uint32_t cv4l2_PIX_FMT_VUYX32 = V4L2_PIX_FMT_VUYX32;
static const uint32_t cv4l2_PIX_FMT_YUVA32 = V4L2_PIX_FMT_YUVA32;
static const uint32_t cv4l2_PIX_FMT_YUVX32 = V4L2_PIX_FMT_YUVX32;
static const uint32_t cv4l2_PIX_FMT_Y10 = V4L2_PIX_FMT_Y10;
static const uint32_t cv4l2_PIX_FMT_Y12 = V4L2_PIX_FMT_Y12;
static const uint32_t cv4l2_PIX_FMT_Y16 = V4L2_PIX_FMT_Y16;
static const uint32_t cv4l2_PIX_FMT_Y16_BE = V4L2_PIX_FMT_Y16_BE;
static const uint32_t cv4l2_PIX_FMT_RGB32 = V4L2_PIX_FMT_RGB32;
static const uint32_t cv4l2_PIX_FMT_BGR32 = V4L2_PIX_FMT_BGR32;
static const uint32_t cv4l2_PIX_FMT_RGB555 = V4L2_PIX_FMT_RGB555;
static const uint32_t cv4l2_PIX_FMT_XRGB555 = V4L2_PIX_FMT_XRGB555;
static const uint32_t cv4l2_PIX_FMT_ARGB555 = V4L2_PIX_FMT_ARGB555;
static const uint32_t cv4l2_PIX_FMT_XBGR555 = V4L2_PIX_FMT_XBGR555;
static const uint32_t cv4l2_PIX_FMT_ABGR555 = V4L2_PIX_FMT_ABGR555;
static const uint32_t cv4l2_PIX_FMT_RGB555X = V4L2_PIX_FMT_RGB555X;
static const uint32_t cv4l2_PIX_FMT_XRGB555X = V4L2_PIX_FMT_XRGB555X;
static const uint32_t cv4l2_PIX_FMT_ARGB555X = V4L2_PIX_FMT_ARGB555X;
static const uint32_t cv4l2_PIX_FMT_RGB565X = V4L2_PIX_FMT_RGB565X;
static const uint32_t cv4l2_PIX_FMT_RGB444 = V4L2_PIX_FMT_RGB444;
static const uint32_t cv4l2_PIX_FMT_XRGB444 = V4L2_PIX_FMT_XRGB444;
static const uint32_t cv4l2_PIX_FMT_ARGB444 = V4L2_PIX_FMT_ARGB444;
static const uint32_t cv4l2_PIX_FMT_RGBX444 = V4L2_PIX_FMT_RGBX444;
static const uint32_t cv4l2_PIX_FMT_RGBA444 = V4L2_PIX_FMT_RGBA444;
static const uint32_t cv4l2_PIX_FMT_XBGR444 = V4L2_PIX_FMT_XBGR444;
static const uint32_t cv4l2_PIX_FMT_ABGR444 = V4L2_PIX_FMT_ABGR444;
static const uint32_t cv4l2_PIX_FMT_BGRX444 = V4L2_PIX_FMT_BGRX444;
static const uint32_t cv4l2_PIX_FMT_BGRA444 = V4L2_PIX_FMT_BGRA444;
static const uint32_t cv4l2_PIX_FMT_SBGGR8 = V4L2_PIX_FMT_SBGGR8;
static const uint32_t cv4l2_PIX_FMT_SGBRG8 = V4L2_PIX_FMT_SGBRG8;
static const uint32_t cv4l2_PIX_FMT_SGRBG8 = V4L2_PIX_FMT_SGRBG8;
static const uint32_t cv4l2_PIX_FMT_SRGGB8 = V4L2_PIX_FMT_SRGGB8;
static const uint32_t cv4l2_PIX_FMT_SBGGR10 = V4L2_PIX_FMT_SBGGR10;
static const uint32_t cv4l2_PIX_FMT_SGBRG10 = V4L2_PIX_FMT_SGBRG10;
static const uint32_t cv4l2_PIX_FMT_SGRBG10 = V4L2_PIX_FMT_SGRBG10;
static const uint32_t cv4l2_PIX_FMT_SRGGB10 = V4L2_PIX_FMT_SRGGB10;
static const uint32_t cv4l2_PIX_FMT_SBGGR16 = V4L2_PIX_FMT_SBGGR16;
static const uint32_t cv4l2_PIX_FMT_SGBRG16 = V4L2_PIX_FMT_SGBRG16;
static const uint32_t cv4l2_PIX_FMT_SGRBG16 = V4L2_PIX_FMT_SGRBG16;
static const uint32_t cv4l2_PIX_FMT_SRGGB16 = V4L2_PIX_FMT_SRGGB16;
static const uint32_t cv4l2_PIX_FMT_SBGGR12 = V4L2_PIX_FMT_SBGGR12;
static const uint32_t cv4l2_PIX_FMT_SGBRG12 = V4L2_PIX_FMT_SGBRG12;
static const uint32_t cv4l2_PIX_FMT_SGRBG12 = V4L2_PIX_FMT_SGRBG12;
static const uint32_t cv4l2_PIX_FMT_SRGGB12 = V4L2_PIX_FMT_SRGGB12;
static const uint32_t cv4l2_PIX_FMT_RGB332 = V4L2_PIX_FMT_RGB332;
static const uint32_t cv4l2_PIX_FMT_BGR666 = V4L2_PIX_FMT_BGR666;
static const uint32_t cv4l2_PIX_FMT_RGBX555 = V4L2_PIX_FMT_RGBX555;
static const uint32_t cv4l2_PIX_FMT_RGBA555 = V4L2_PIX_FMT_RGBA555;
static const uint32_t cv4l2_PIX_FMT_BGRX555 = V4L2_PIX_FMT_BGRX555;
static const uint32_t cv4l2_PIX_FMT_BGRA555 = V4L2_PIX_FMT_BGRA555;
static const uint32_t cv4l2_PIX_FMT_YUV444 = V4L2_PIX_FMT_YUV444;
static const uint32_t cv4l2_PIX_FMT_YUV555 = V4L2_PIX_FMT_YUV555;
static const uint32_t cv4l2_PIX_FMT_YUV565 = V4L2_PIX_FMT_YUV565;
static const uint32_t cv4l2_PIX_FMT_HSV24 = V4L2_PIX_FMT_HSV24;
static const uint32_t cv4l2_PIX_FMT_HSV32 = V4L2_PIX_FMT_HSV32;

// MARK: struct sizes, checked by the unit tests against Swift's view of the same structs
static const size_t cv4l2_sizeof_capability = sizeof(struct v4l2_capability);
static const size_t cv4l2_sizeof_format = sizeof(struct v4l2_format);
static const size_t cv4l2_sizeof_buffer = sizeof(struct v4l2_buffer);
static const size_t cv4l2_sizeof_plane = sizeof(struct v4l2_plane);
static const size_t cv4l2_sizeof_requestbuffers = sizeof(struct v4l2_requestbuffers);
static const size_t cv4l2_sizeof_fmtdesc = sizeof(struct v4l2_fmtdesc);
static const size_t cv4l2_sizeof_frmsizeenum = sizeof(struct v4l2_frmsizeenum);
static const size_t cv4l2_sizeof_query_ext_ctrl = sizeof(struct v4l2_query_ext_ctrl);
static const size_t cv4l2_sizeof_event_subscription = sizeof(struct v4l2_event_subscription);
static const size_t cv4l2_sizeof_frmivalenum = sizeof(struct v4l2_frmivalenum);
static const size_t cv4l2_sizeof_streamparm = sizeof(struct v4l2_streamparm);
static const size_t cv4l2_offsetof_buffer_timestamp = offsetof(struct v4l2_buffer, timestamp);
static const size_t cv4l2_offsetof_buffer_m = offsetof(struct v4l2_buffer, m);

#endif
