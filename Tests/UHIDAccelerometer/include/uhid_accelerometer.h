// UHIDAccelerometer: a HID sensor-hub 3D accelerometer made from userspace through /dev/uhid,
// for the device tests. The stock kernel's hid-sensor-hub and hid-sensor-accel-3d bind it and
// make a real IIO device named "accel_3d" (1 g = 100 raw units, in_accel_scale 0.0980665).
#ifndef UHID_ACCELEROMETER_H
#define UHID_ACCELEROMETER_H
#include <stdint.h>
#include <stddef.h>

typedef struct uhidaccel uhidaccel;

/// Creates the HID device and starts the thread that answers the kernel's requests.
/// Returns NULL and writes the reason into `error` on failure (needs root and the uhid module).
uhidaccel *uhidaccel_create(const char *name, char *error, size_t error_size);

/// Sets what the sensor measures (raw units, 100 = 1 g) and pushes an input report.
/// Returns 0, or an errno.
int uhidaccel_set(uhidaccel *device, int16_t x, int16_t y, int16_t z);

/// How many GET_REPORT and SET_REPORT requests the kernel made so far.
unsigned uhidaccel_requests(uhidaccel *device);

/// The power-state selector the driver last wrote (1-based list position; 0 if never).
unsigned uhidaccel_power_state(uhidaccel *device);

/// Destroys the HID device (the IIO device goes away) and frees everything.
void uhidaccel_destroy(uhidaccel *device);

#endif
