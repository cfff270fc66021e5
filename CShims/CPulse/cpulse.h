// CPulse: libpulse (the asynchronous API with a threaded main loop). Used by AudioDevice.
#ifndef CPULSE_H
#define CPULSE_H
#include <pulse/pulseaudio.h>
#endif
