// CPulse: libpulse, the asynchronous API (pa_threaded_mainloop, pa_context, pa_stream). Used by
// AudioDevice's Pulse backend.
#ifndef CPULSE_H
#define CPULSE_H
#include <pulse/pulseaudio.h>
#include <pulse/error.h>
#endif
