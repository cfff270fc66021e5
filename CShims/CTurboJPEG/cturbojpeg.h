// CTurboJPEG: libjpeg-turbo's TurboJPEG API (Debian's libturbojpeg0-dev).
#ifndef CTURBOJPEG_H
#define CTURBOJPEG_H
#include <turbojpeg.h>
#endif
