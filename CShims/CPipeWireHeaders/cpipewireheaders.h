// CPipeWireHeaders: libpipewire-0.3 and its SPA headers, found through pkg-config, for the
// CPipeWire shim to compile against and link (Swift calls CPipeWire, not these).
#ifndef CPIPEWIREHEADERS_H
#define CPIPEWIREHEADERS_H
#include <pipewire/pipewire.h>
#endif
