// libjpeg-turbo's TurboJPEG API (Debian: libturbojpeg0-dev), for the console's JPEG encoder.
#include <turbojpeg.h>
