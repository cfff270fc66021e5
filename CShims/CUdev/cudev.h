// CUdev: libudev (enumeration and hotplug monitoring). Used by DeviceMonitor.
#ifndef CUDEV_H
#define CUDEV_H
#include <libudev.h>
#endif
