// CPulse: libpulse (the asynchronous API with a threaded main loop) and libpulse-simple (the
// blocking stream API an audio thread of its own can call). Used by AudioDevice.
#ifndef CPULSE_H
#define CPULSE_H
#include <pulse/pulseaudio.h>
#include <pulse/simple.h>
#include <pulse/error.h>
#endif
