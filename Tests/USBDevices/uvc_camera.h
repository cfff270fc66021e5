// uvc_camera: the emulated UVC 1.0 webcam's internals, shared by uvc_camera.c (life cycle,
// requests, streaming), uvc_descriptors.c, uvc_controls.c and uvc_frames.c.
#ifndef UVC_CAMERA_H
#define UVC_CAMERA_H
#include "usb_devices.h"
#include "usbip_transport.h"
#include "webcam_av.h"
#include <pthread.h>
#include <stdio.h>
#include <stdatomic.h>

/// Interfaces, entities and the streaming endpoint, as the descriptors declare them.
enum {
    UVC_INTERFACE_CONTROL = 0, UVC_INTERFACE_STREAMING = 1,
    UVC_CAMERA_TERMINAL = 1, UVC_PROCESSING_UNIT = 2, UVC_OUTPUT_TERMINAL = 3,
    UVC_STREAM_ENDPOINT = 0x81, UVC_PAYLOAD_HEADER = 2,
};

/// UVC 1.0 video probe and commit control (26 bytes on the wire).
struct uvc_probe {
    uint16_t hint;
    uint8_t format_index, frame_index;  // 1-based, as in the descriptors
    uint32_t interval;                  // 100 ns units
    uint32_t max_video_frame_size, max_payload_transfer_size;
};

/// A UVC control's description and value.
struct uvc_control {
    uint8_t unit, selector, size;
    int32_t minimum, maximum, resolution, default_value, value;
};

struct usbdev_camera {
    char serial[64];
    uint16_t product_id;   // idProduct: the camera's, or the composite webcam's
    const char *product;   // iProduct's string (static)
    usbip_transport *transport;
    pthread_t streamer;
    int streamer_running;
    atomic_int stopping;
    pthread_mutex_t lock;  // probe, commit, controls, generation, faults (never held long)
    struct uvc_probe probe, commit;
    uint32_t generation;  // bumped by COMMIT and CLEAR_FEATURE(HALT): abandon the frame being sent
    uint32_t controls_generation;
    struct uvc_control controls[USBDEV_CTRL_COUNT];
    uint8_t request_error;  // VC_REQUEST_ERROR_CODE_CONTROL
    usbdev_fault pending_fault[2];  // per format
    atomic_uint frames_sent;
    atomic_uint unplug_after;  // frames_sent value at which to unplug (0: never)
    atomic_ullong unplug_time_ns;
    struct uvc_frame_cache *frames;  // uvc_frames.c
    FILE *frame_log;  // MEDIADEVICES_USB_FRAME_LOG: "counter monotonic-ns" per frame sent (or NULL)
    struct webcam_av *av;  // the composite webcam's A/V test mode (NULL for the camera alone)
};

// uvc_camera.c: the camera as a function of a device that owns the transport (the composite
// webcam, usb_webcam.c), and as a device of its own (usbdev_camera_*).
/// A camera not plugged in, reporting `product_id` and `product` (static) in its device
/// descriptor. NULL (reason in `error`) when out of memory. Freed by usbdev_camera_destroy.
usbdev_camera *uvc_camera_new(const char *serial, uint16_t product_id, const char *product, char *error, size_t error_size);
/// Powered up again: default probe, commit and controls; the frame being sent abandoned.
void uvc_camera_reset(usbdev_camera *camera);
/// Starts the streaming thread on `transport` (attached by the caller). Returns 0 or an errno.
int uvc_camera_start(usbdev_camera *camera, usbip_transport *transport, char *error, size_t error_size);
/// Stops and joins the streaming thread (unplug the transport first to wake it at once); the
/// transport stays the caller's to free.
void uvc_camera_join(usbdev_camera *camera);
/// Answers a control request: standard ones (descriptors: the camera's own), VideoControl and
/// VideoStreaming class requests. Runs on the transport's reader thread.
int uvc_camera_control(void *camera, const struct usb_setup *setup, uint8_t *data);

// uvc_descriptors.c
/// Writes the video function's descriptors (its interface association, VideoControl interface 0,
/// VideoStreaming interface 1 with its bulk endpoint 0x81) into `out` (at most `capacity`
/// bytes). Returns their full length.
size_t uvc_function_descriptors(uint8_t *out, size_t capacity);
/// Writes the descriptor that GET_DESCRIPTOR asks for (`value` = type << 8 | index) into `out`.
/// Returns its full length, or -1 to STALL.
int uvc_descriptor(const usbdev_camera *camera, uint16_t value, uint8_t *out, size_t capacity);
/// The frame size for a probe's format and frame index, or NULL.
const usbdev_frame_size *uvc_frame_size(uint8_t format_index, uint8_t frame_index);

// uvc_controls.c
/// Resets every control to its default value.
void uvc_controls_reset(usbdev_camera *camera);
/// Answers a GET_*/SET_CUR on a camera-terminal or processing-unit control (lock held).
/// Returns the IN length, 0 for SET, or -1 to STALL (request_error set).
int uvc_control_request(usbdev_camera *camera, uint8_t entity, const struct usb_setup *setup, uint8_t *data);

// uvc_frames.c
/// Renders YUYV frame `counter` at the committed size into `out`: the bars with the current
/// controls, or a flat dark or white picture (A/V test mode), under the counter strip.
void uvc_render_yuyv(usbdev_camera *camera, const usbdev_frame_size *size, uint32_t counter, uvc_picture picture, uint8_t *out);
/// Writes MJPEG frame `counter` showing `picture` into `out` (capacity bytes). Returns its
/// length (0 on failure).
size_t uvc_render_jpeg(usbdev_camera *camera, const usbdev_frame_size *size, uint32_t counter, uvc_picture picture,
                       uint8_t *out, size_t capacity);
/// Frees what uvc_frames.c cached (JPEGs per size, the YUYV picture).
void uvc_frames_free(usbdev_camera *camera);

#endif
