// CALSA: libasound (ALSA PCM, control and hw_params). Used by AudioDevice.
#ifndef CALSA_H
#define CALSA_H
#include <alsa/asoundlib.h>

// libasound prints its own errors to stderr unless given a handler; the handler type is
// variadic, which Swift cannot write, so the no-op handler lives here.
static inline void calsa_ignore_error(const char *file, int line, const char *function, int err, const char *fmt, ...) {
    (void)file; (void)line; (void)function; (void)err; (void)fmt;
}

/// Stops libasound from printing errors (MediaDevices reports them itself).
static inline void calsa_silence_errors(void) {
    snd_lib_error_set_handler(calsa_ignore_error);
}
#endif
