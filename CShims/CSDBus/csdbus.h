// CSDBus: sd-bus from libsystemd, the D-Bus client the ScreenCast portal backend talks through.
// Swift imports the non-variadic calls as they are (method calls, basic values, containers,
// signal matches, process/wait); nothing here needs wrapping.
#ifndef CSDBUS_H
#define CSDBUS_H
#include <systemd/sd-bus.h>
#endif
