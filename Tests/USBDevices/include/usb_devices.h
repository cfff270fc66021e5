// USBDevices: USB devices emulated in userspace for the device tests, plugged into the kernel's
// USB/IP virtual host controller (vhci-hcd) so that the real class drivers bind them: a UVC 1.0
// webcam (uvcvideo) and a UAC1 microphone (snd-usb-audio). No network and no usbip tool: each
// device serves the USB/IP protocol on one end of a socket pair whose other end is handed to
// /sys/devices/platform/vhci_hcd.0/attach. Needs root and the vhci-hcd module.
//
// Unplugging (usbdev_*_unplug) writes the port to vhci's `detach`: a real USB disconnect, as
// when a cable is pulled. Replugging attaches the same device (same serial number) again,
// possibly on another port.
#ifndef USB_DEVICES_H
#define USB_DEVICES_H
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

// MARK: - Camera (UVC 1.0, high speed, bulk streaming)

typedef struct usbdev_camera usbdev_camera;

/// The camera's vendor and product IDs (pid.codes test IDs) and the strings it reports.
#define USBDEV_CAMERA_VENDOR_ID 0x1209
#define USBDEV_CAMERA_PRODUCT_ID 0x0001
#define USBDEV_MANUFACTURER "MediaDevices"
#define USBDEV_CAMERA_PRODUCT "MediaDevices Test Camera"

/// The camera's formats, in the order of its descriptors (bFormatIndex - 1).
typedef enum { USBDEV_FORMAT_MJPEG = 0, USBDEV_FORMAT_YUYV = 1 } usbdev_format;

/// One frame size the camera offers: its format, size, JPEG chroma subsampling (4:2:0 or 4:2:2;
/// 0 for YUYV) and frame intervals in 100 ns units, fastest first.
typedef struct {
    usbdev_format format;
    uint16_t width, height;
    uint8_t subsampling;  // 20 = 4:2:0, 22 = 4:2:2, 0 = uncompressed
    uint32_t intervals[4];
    uint8_t interval_count;
} usbdev_frame_size;

/// How many frame sizes the camera offers, and each of them (index 0 ..< count).
size_t usbdev_camera_frame_size_count(void);
usbdev_frame_size usbdev_camera_frame_size(size_t index);

/// Creates the camera and plugs it in. `serial` is its iSerialNumber (so /dev/v4l/by-id has a
/// stable name). Returns NULL and writes the reason into `error` on failure.
usbdev_camera *usbdev_camera_plug(const char *serial, char *error, size_t error_size);
/// Unplugs it (a real USB disconnect). Returns 0, or an errno. The handle stays valid.
int usbdev_camera_unplug(usbdev_camera *camera);
/// Plugs it in again with the same serial number, its controls back at their defaults (a camera
/// powered up again). Returns 0, or an errno (reason in `error`).
int usbdev_camera_replug(usbdev_camera *camera, char *error, size_t error_size);
/// Unplugs it if plugged and frees everything.
void usbdev_camera_destroy(usbdev_camera *camera);
/// Whether it is plugged in now (0 once unplugged, by the API or by the host).
int usbdev_camera_is_plugged(usbdev_camera *camera);
/// The vhci port it is plugged into (-1 when unplugged).
int usbdev_camera_port(usbdev_camera *camera);

/// Frames the camera started sending since it was created. The frame counter a frame carries
/// (in the YUYV picture's top strip, and in the JPEG's COM segment) is this count before it.
uint32_t usbdev_camera_frames_sent(usbdev_camera *camera);
/// CLOCK_MONOTONIC nanoseconds of the last unplug (0 if none).
uint64_t usbdev_camera_unplug_time_ns(usbdev_camera *camera);

/// Faults the camera can be told to make.
typedef enum {
    USBDEV_FAULT_NONE = 0,
    USBDEV_FAULT_TRUNCATED_JPEG = 1,  ///< the next MJPEG frame is cut at half (EOF still set)
    USBDEV_FAULT_CORRUPT_JPEG = 2,    ///< the next MJPEG frame has garbage in its entropy-coded data
    USBDEV_FAULT_SHORT_YUYV = 3,      ///< the next YUYV frame ends early (uvcvideo drops it)
} usbdev_fault;
/// Makes the next frame of the matching format faulty.
void usbdev_camera_inject(usbdev_camera *camera, usbdev_fault fault);
/// Unplugs the camera by itself once it has sent `frames` more frames (0: never).
void usbdev_camera_unplug_after(usbdev_camera *camera, uint32_t frames);

/// The exact JPEG bytes the camera sends as frame number `counter` at `width`x`height`
/// (without injected faults). Returns its length; copies at most `capacity` bytes into `out`;
/// 0 when that size is not an MJPEG size.
size_t usbdev_camera_jpeg(usbdev_camera *camera, uint16_t width, uint16_t height, uint32_t counter,
                          uint8_t *out, size_t capacity);

/// The camera's MJPEG picture `variant` (0-3) encoded at any `width`x`height` and `subsampling`
/// (20 = 4:2:0, 22 = 4:2:2), without the counter segment: what unit tests decode on the host.
/// Returns its length (0 on failure); copies it into `out` when it fits in `capacity` bytes.
size_t usbdev_camera_picture_jpeg(uint16_t width, uint16_t height, uint8_t subsampling, uint32_t variant,
                                  uint8_t *out, size_t capacity);

/// The frame counter stored in a YUYV frame's top strip (`stride` bytes per row), or -1 when the
/// strip is unreadable.
int64_t usbdev_yuyv_counter(const uint8_t *frame, size_t stride, uint16_t width, uint16_t height);
/// The frame counter in a JPEG's COM segment, or -1 when it has none.
int64_t usbdev_jpeg_counter(const uint8_t *jpeg, size_t length);

/// The UVC controls the camera implements (unit, selector), and their value as the camera
/// holds it now. Returns 0 and sets `value`, or ENOENT.
typedef enum {
    USBDEV_CTRL_BRIGHTNESS, USBDEV_CTRL_CONTRAST, USBDEV_CTRL_SATURATION, USBDEV_CTRL_GAIN,
    USBDEV_CTRL_POWER_LINE_FREQUENCY, USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE,
    USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE_AUTO, USBDEV_CTRL_BACKLIGHT_COMPENSATION,
    USBDEV_CTRL_AE_MODE, USBDEV_CTRL_AE_PRIORITY, USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE,
    USBDEV_CTRL_FOCUS_ABSOLUTE, USBDEV_CTRL_FOCUS_AUTO, USBDEV_CTRL_ZOOM_ABSOLUTE,
    USBDEV_CTRL_COUNT
} usbdev_control;
int usbdev_camera_control(usbdev_camera *camera, usbdev_control control, int32_t *value);

// MARK: - Microphone (UAC1, full speed, isochronous, 48 kHz mono S16LE)

typedef struct usbdev_microphone usbdev_microphone;

#define USBDEV_MICROPHONE_PRODUCT_ID 0x0002
#define USBDEV_MICROPHONE_PRODUCT "MediaDevices Test Microphone"
#define USBDEV_MICROPHONE_RATE 48000

/// Creates the microphone and plugs it in. It records a sine of `frequency` Hz at `amplitude`
/// (0...1 of full scale), with continuous phase, paced by the wall clock (never faster than
/// real time). Returns NULL and writes the reason into `error` on failure.
usbdev_microphone *usbdev_microphone_plug(const char *serial, double frequency, double amplitude,
                                          char *error, size_t error_size);
int usbdev_microphone_unplug(usbdev_microphone *microphone);
int usbdev_microphone_replug(usbdev_microphone *microphone, char *error, size_t error_size);
void usbdev_microphone_destroy(usbdev_microphone *microphone);
int usbdev_microphone_is_plugged(usbdev_microphone *microphone);
/// Samples the microphone has sent since it was created.
uint64_t usbdev_microphone_samples_sent(usbdev_microphone *microphone);
/// The sampling rate the host set (SET_CUR SAMPLING_FREQ_CONTROL), 0 if never.
uint32_t usbdev_microphone_rate(usbdev_microphone *microphone);
/// CLOCK_MONOTONIC nanoseconds of the last unplug (0 if none).
uint64_t usbdev_microphone_unplug_time_ns(usbdev_microphone *microphone);

// MARK: - Composite webcam (the camera and the microphone in one USB device)

typedef struct usbdev_webcam usbdev_webcam;

#define USBDEV_WEBCAM_PRODUCT_ID 0x0003
#define USBDEV_WEBCAM_PRODUCT "MediaDevices Test Webcam"

/// Creates a webcam as real ones are and plugs it in: one high-speed USB device whose video
/// function (an interface association of VideoControl interface 0 and VideoStreaming interface
/// 1, bulk endpoint 0x81) is the camera above, and whose audio function (AudioControl interface
/// 2, AudioStreaming interface 3, isochronous endpoint 0x82 polled every 1 ms) is the
/// microphone above, recording a sine of `frequency` Hz at `amplitude`. uvcvideo and
/// snd-usb-audio both bind it. Returns NULL and writes the reason into `error` on failure.
///
/// Both functions live in this one process on one clock: usbdev_webcam_flash makes the camera's
/// next frame a flash and the microphone's sample of that instant a click.
usbdev_webcam *usbdev_webcam_plug(const char *serial, double frequency, double amplitude, char *error, size_t error_size);
/// Unplugs it (a real USB disconnect: both functions go). Returns 0, or ENODEV when not plugged.
int usbdev_webcam_unplug(usbdev_webcam *webcam);
/// Plugs it in again (same serial), unplugging it first if needed; the camera's controls back
/// at their defaults. Returns 0, or an errno (reason in `error`).
int usbdev_webcam_replug(usbdev_webcam *webcam, char *error, size_t error_size);
/// Unplugs it if plugged and frees everything (its camera and microphone handles too).
void usbdev_webcam_destroy(usbdev_webcam *webcam);
/// Whether it is plugged in now.
int usbdev_webcam_is_plugged(usbdev_webcam *webcam);
/// Its camera and its microphone, for what they count and hold (usbdev_camera_frames_sent,
/// usbdev_camera_inject, usbdev_microphone_samples_sent...). Plug and unplug the webcam, not
/// them; they are freed with it.
usbdev_camera *usbdev_webcam_camera(usbdev_webcam *webcam);
usbdev_microphone *usbdev_webcam_microphone(usbdev_webcam *webcam);

/// A/V test mode (off by default, and across replugs as set): the camera shows dark frames
/// (Y 16, the frame counter still in the YUYV strip and the JPEG's COM segment) and the
/// microphone records silence (zeros) instead of the bars and the tone, until a flash.
void usbdev_webcam_set_av_test(usbdev_webcam *webcam, int on);

/// Click N lasts USBDEV_AV_CLICK_SAMPLES × N samples, each USBDEV_AV_CLICK_LEVEL (half of full scale).
#define USBDEV_AV_CLICK_SAMPLES 8
#define USBDEV_AV_CLICK_LEVEL 16384

/// One flash and its click, as the webcam made them: the frame that shows the flash (its
/// counter, as the frame carries it), the click's first sample (counted since the microphone was
/// created) and how many samples the click lasts (8 × `number`, so a capture tells the clicks
/// apart), and each one's instant on CLOCK_MONOTONIC (ns). `flash_ns` is the flash frame's
/// creation instant (as the frame log has it); `click_ns` is 0 until the click was recorded.
/// `flash_sent_ns` and `click_sent_ns` are when the webcam handed each to the host (the flash
/// frame's first bytes, the URB holding the click's first sample; 0 until then): how late the
/// emulator itself was, which a loaded machine makes tens of milliseconds and more, and which a
/// capture that stamps what arrives sees as an A/V offset that is not its own.
typedef struct {
    uint32_t number, frame, click_samples;
    uint64_t flash_ns, sample, click_ns;
    uint64_t flash_sent_ns, click_sent_ns;
} usbdev_av_event;

/// In A/V test mode: asks for a flash and a click at one instant of the webcam's clock. The
/// camera's next frame is white (Y 235) and made at the first sample instant of the microphone
/// at or after that frame's moment; the microphone's sample of that instant starts a pulse of
/// `click_samples` samples at half of full scale after silence. Returns the flash's number (1,
/// 2, ...), or 0 when not in A/V test mode.
uint32_t usbdev_webcam_flash(usbdev_webcam *webcam);
/// Flash `number` (one of the last 256) once the camera made it: 1 and `event` filled; 0 while
/// it has not been made (or is no longer kept).
int usbdev_webcam_av_event(usbdev_webcam *webcam, uint32_t number, usbdev_av_event *event);

#ifdef __cplusplus
}
#endif
#endif
