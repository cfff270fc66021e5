// uvc_controls.c: the camera terminal's and processing unit's controls (UVC 1.1 sections 4.2.2.1
// and 4.2.2.3): GET_CUR/MIN/MAX/RES/DEF/LEN/INFO and SET_CUR. An out-of-range SET_CUR STALLs
// with bRequestErrorCode 0x04 (out of range), as a real device does.
#include "uvc_camera.h"
#include <string.h>

enum { CT = UVC_CAMERA_TERMINAL, PU = UVC_PROCESSING_UNIT };
enum { SET_CUR = 0x01, GET_CUR = 0x81, GET_MIN = 0x82, GET_MAX = 0x83, GET_RES = 0x84,
       GET_LEN = 0x85, GET_INFO = 0x86, GET_DEF = 0x87 };
enum { ERROR_OUT_OF_RANGE = 0x04, ERROR_INVALID_CONTROL = 0x06, ERROR_INVALID_REQUEST = 0x07 };

/// unit, selector, size, minimum, maximum, resolution, default (indexed by usbdev_control).
static const struct uvc_control table[USBDEV_CTRL_COUNT] = {
    [USBDEV_CTRL_BRIGHTNESS] = {PU, 0x02, 2, -64, 64, 1, 0, 0},
    [USBDEV_CTRL_CONTRAST] = {PU, 0x03, 2, 0, 100, 1, 50, 0},
    [USBDEV_CTRL_SATURATION] = {PU, 0x07, 2, 0, 200, 1, 100, 0},
    [USBDEV_CTRL_GAIN] = {PU, 0x04, 2, 0, 100, 1, 0, 0},
    [USBDEV_CTRL_POWER_LINE_FREQUENCY] = {PU, 0x05, 1, 0, 2, 1, 1, 0},
    [USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE] = {PU, 0x0A, 2, 2800, 6500, 10, 4600, 0},
    [USBDEV_CTRL_WHITE_BALANCE_TEMPERATURE_AUTO] = {PU, 0x0B, 1, 0, 1, 1, 1, 0},
    [USBDEV_CTRL_BACKLIGHT_COMPENSATION] = {PU, 0x01, 2, 0, 2, 1, 1, 0},
    // AE mode is a bitmap: 1 manual, 8 aperture priority (a webcam's "auto"); GET_RES lists them.
    [USBDEV_CTRL_AE_MODE] = {CT, 0x02, 1, 1, 8, 9, 8, 0},
    [USBDEV_CTRL_AE_PRIORITY] = {CT, 0x03, 1, 0, 1, 1, 0, 0},
    [USBDEV_CTRL_EXPOSURE_TIME_ABSOLUTE] = {CT, 0x04, 4, 3, 2047, 1, 250, 0},
    [USBDEV_CTRL_FOCUS_ABSOLUTE] = {CT, 0x06, 2, 0, 250, 5, 0, 0},
    [USBDEV_CTRL_FOCUS_AUTO] = {CT, 0x08, 1, 0, 1, 1, 1, 0},
    [USBDEV_CTRL_ZOOM_ABSOLUTE] = {CT, 0x0B, 2, 100, 400, 1, 100, 0},
};

void uvc_controls_reset(usbdev_camera *camera) {
    for (int i = 0; i < USBDEV_CTRL_COUNT; i++) {
        camera->controls[i] = table[i];
        camera->controls[i].value = table[i].default_value;
    }
}

static void put(uint8_t *data, uint8_t size, int32_t value) {
    for (uint8_t i = 0; i < size; i++) data[i] = (uint8_t)((uint32_t)value >> (8 * i));
}

/// The little-endian value of `control` in `data`, sign-extended for signed controls.
static int32_t value_of(const struct uvc_control *control, const uint8_t *data) {
    uint32_t value = 0;
    for (uint8_t i = 0; i < control->size; i++) value |= (uint32_t)data[i] << (8 * i);
    if (control->minimum >= 0 || control->size == 4) return (int32_t)value;
    unsigned shift = 32 - 8 * control->size;
    return (int32_t)(value << shift) >> shift;
}

static int valid(const struct uvc_control *control, int32_t value) {
    if (control->unit == CT && control->selector == 0x02)  // AE mode: exactly one supported bit
        return value == 1 || value == 8;
    return value >= control->minimum && value <= control->maximum;
}

static struct uvc_control *find(usbdev_camera *camera, uint8_t entity, uint8_t selector) {
    for (int i = 0; i < USBDEV_CTRL_COUNT; i++)
        if (camera->controls[i].unit == entity && camera->controls[i].selector == selector) return &camera->controls[i];
    return NULL;
}

static int stall(usbdev_camera *camera, uint8_t code) {
    camera->request_error = code;
    return -1;
}

int uvc_control_request(usbdev_camera *camera, uint8_t entity, const struct usb_setup *setup, uint8_t *data) {
    struct uvc_control *control = find(camera, entity, setup->value >> 8);
    if (!control) return stall(camera, ERROR_INVALID_CONTROL);
    camera->request_error = 0;
    switch (setup->request) {
    case GET_CUR: put(data, control->size, control->value); return control->size;
    case GET_MIN: put(data, control->size, control->minimum); return control->size;
    case GET_MAX: put(data, control->size, control->maximum); return control->size;
    case GET_RES: put(data, control->size, control->resolution); return control->size;
    case GET_DEF: put(data, control->size, control->default_value); return control->size;
    case GET_LEN: put(data, 2, control->size); return 2;
    case GET_INFO: data[0] = 0x03; return 1;  // supports GET and SET
    case SET_CUR: {
        if (setup->length < control->size) return stall(camera, ERROR_INVALID_REQUEST);
        int32_t value = value_of(control, data);
        if (!valid(control, value)) return stall(camera, ERROR_OUT_OF_RANGE);
        control->value = value;
        camera->controls_generation++;
        return 0;
    }
    default: return stall(camera, ERROR_INVALID_REQUEST);
    }
}

int usbdev_camera_control(usbdev_camera *camera, usbdev_control control, int32_t *value) {
    if ((int)control < 0 || control >= USBDEV_CTRL_COUNT) return 2;  // ENOENT
    pthread_mutex_lock(&camera->lock);
    *value = camera->controls[control].value;
    pthread_mutex_unlock(&camera->lock);
    return 0;
}
