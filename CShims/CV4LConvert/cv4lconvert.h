// CV4LConvert: libv4lconvert (Debian's libv4l-dev), for the formats libyuv lacks (Bayer).
// Only what Swift cannot do itself: a converter with no device behind it (libv4lconvert asks
// its device for formats and controls when created), and one conversion call with the
// v4l2_format structs built here, so that Swift never sees a second copy of videodev2.h's types.
#ifndef CV4LCONVERT_H
#define CV4LCONVERT_H
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/types.h>
#include <libv4lconvert.h>
#include <libv4l-plugin.h>

// The "device" of a detached converter: it lists one format libv4lconvert does not convert
// (so libv4lconvert adds no software controls: no shared-memory control segment, no white
// balance or gamma processing) and answers every other request as an unsupported ioctl.
static int cv4lconvert_detached_ioctl(void *priv, int fd, unsigned long request, void *arg) {
    (void)priv; (void)fd;
    if (request == VIDIOC_ENUM_FMT) {
        struct v4l2_fmtdesc *desc = (struct v4l2_fmtdesc *)arg;
        if (desc->index == 0) {
            desc->pixelformat = v4l2_fourcc('M', 'D', 'N', 'O');
            return 0;
        }
        errno = EINVAL;
        return -1;
    }
    errno = ENOTTY;
    return -1;
}
static ssize_t cv4lconvert_detached_read(void *priv, int fd, void *buffer, size_t n) {
    (void)priv; (void)fd; (void)buffer; (void)n;
    errno = EINVAL;
    return -1;
}
static ssize_t cv4lconvert_detached_write(void *priv, int fd, const void *buffer, size_t n) {
    (void)priv; (void)fd; (void)buffer; (void)n;
    errno = EINVAL;
    return -1;
}
static const struct libv4l_dev_ops cv4lconvert_detached_ops = {
    .ioctl = cv4lconvert_detached_ioctl,
    .read = cv4lconvert_detached_read,
    .write = cv4lconvert_detached_write,
};

/// A converter with no device (NULL when libv4lconvert cannot make one). Free it with
/// v4lconvert_destroy.
static inline struct v4lconvert_data *cv4lconvert_create_detached(void) {
    return v4lconvert_create_with_dev_ops(-1, NULL, &cv4lconvert_detached_ops);
}

/// Converts one `width`x`height` frame of V4L2 format `pixelformat` (rows `bytesperline` apart,
/// `src_size` bytes) into tightly packed RGB24 (bytes R, G, B) at `dest` (`dest_size` bytes,
/// at least width * height * 3). Returns the bytes written, or -1 with errno set.
static inline int cv4lconvert_to_rgb24(struct v4lconvert_data *data, uint32_t pixelformat,
                                       uint32_t width, uint32_t height, uint32_t bytesperline,
                                       const uint8_t *src, int src_size, uint8_t *dest, int dest_size) {
    struct v4l2_format source, destination;
    memset(&source, 0, sizeof source);
    source.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    source.fmt.pix.pixelformat = pixelformat;
    source.fmt.pix.width = width;
    source.fmt.pix.height = height;
    source.fmt.pix.bytesperline = bytesperline;
    source.fmt.pix.sizeimage = (uint32_t)src_size;
    source.fmt.pix.field = V4L2_FIELD_NONE;
    destination = source;
    destination.fmt.pix.pixelformat = V4L2_PIX_FMT_RGB24;
    destination.fmt.pix.bytesperline = width * 3;
    destination.fmt.pix.sizeimage = width * height * 3;
    return v4lconvert_convert(data, &source, &destination, (unsigned char *)src, src_size, dest, dest_size);
}
#endif
