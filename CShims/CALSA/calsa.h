// CALSA: libasound (ALSA PCM, control and hw_params). Used by AudioDevice.
#ifndef CALSA_H
#define CALSA_H
#include <alsa/asoundlib.h>
#endif
