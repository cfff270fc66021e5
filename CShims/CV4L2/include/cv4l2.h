// CV4L2: what Swift cannot import from the kernel's V4L2 uapi header.
// Function-like macros (VIDIOC_* request codes, v4l2_fourcc pixel formats) become typed
// constants; the variadic ioctl(2) becomes a typed, non-variadic function. Every symbol is
// prefixed `cv4l2_`. Structs and plain #define constants are imported by Swift directly.
#ifndef CV4L2_H
#define CV4L2_H

#include <linux/videodev2.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/eventfd.h> /* the capture thread's wake-up event */

/// ioctl(2) with a pointer argument. Returns -1 and sets errno on failure.
int cv4l2_ioctl(int fd, unsigned long request, void *argument);

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
static const unsigned long cv4l2_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long cv4l2_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long cv4l2_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long cv4l2_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long cv4l2_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long cv4l2_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long cv4l2_VIDIOC_G_INPUT = VIDIOC_G_INPUT;
static const unsigned long cv4l2_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;

// MARK: control identifiers built from other macros
static const uint32_t cv4l2_CID_CAMERA_ORIENTATION = V4L2_CID_CAMERA_ORIENTATION;
static const uint32_t cv4l2_CID_CAMERA_SENSOR_ROTATION = V4L2_CID_CAMERA_SENSOR_ROTATION;

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

// MARK: struct sizes, checked by the unit tests against Swift's view of the same structs
static const size_t cv4l2_sizeof_capability = sizeof(struct v4l2_capability);
static const size_t cv4l2_sizeof_format = sizeof(struct v4l2_format);
static const size_t cv4l2_sizeof_buffer = sizeof(struct v4l2_buffer);
static const size_t cv4l2_sizeof_plane = sizeof(struct v4l2_plane);
static const size_t cv4l2_sizeof_requestbuffers = sizeof(struct v4l2_requestbuffers);
static const size_t cv4l2_sizeof_fmtdesc = sizeof(struct v4l2_fmtdesc);
static const size_t cv4l2_sizeof_frmsizeenum = sizeof(struct v4l2_frmsizeenum);
static const size_t cv4l2_sizeof_frmivalenum = sizeof(struct v4l2_frmivalenum);
static const size_t cv4l2_sizeof_streamparm = sizeof(struct v4l2_streamparm);
static const size_t cv4l2_offsetof_buffer_timestamp = offsetof(struct v4l2_buffer, timestamp);
static const size_t cv4l2_offsetof_buffer_m = offsetof(struct v4l2_buffer, m);

#endif
