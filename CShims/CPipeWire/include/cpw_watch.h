// CPipeWire: watching a PipeWire session's video source nodes come and go (registry global and
// global_remove), for hotplug. The owner polls `cpw_watch_fd` and calls `cpw_watch_iterate`,
// then takes the events with `cpw_watch_next`.
#ifndef CPW_WATCH_H
#define CPW_WATCH_H
#include <stddef.h>
#include <stdint.h>

/// A connection watching the registry.
typedef struct cpw_watch cpw_watch;

/// What happened.
enum cpw_watch_action {
    CPW_WATCH_ADDED = 1,   ///< a Video/Source node appeared (its media.role is in its full properties only)
    CPW_WATCH_REMOVED = 2, ///< a Video/Source node seen before went away
    CPW_WATCH_LOST = 3,    ///< the connection to PipeWire broke (the daemon went away); no more events
};

/// One event.
typedef struct {
    uint32_t action; ///< a cpw_watch_action
    uint32_t id;     ///< the node's global id
} cpw_watch_event;

/// Connects to the default remote (PIPEWIRE_REMOTE, else $XDG_RUNTIME_DIR/pipewire-0) and
/// starts watching; the nodes present now arrive as ADDED events. NULL with a sentence in
/// `error` when no PipeWire answers.
cpw_watch *cpw_watch_open(char *error, size_t error_size);

/// The descriptor to poll for readiness (the connection's loop).
int cpw_watch_fd(const cpw_watch *watch);

/// Handles what the server sent, without waiting. Returns 0, or a negative errno.
int cpw_watch_iterate(cpw_watch *watch);

/// Takes the oldest pending event into `event`: 1, or 0 when none is pending.
int cpw_watch_next(cpw_watch *watch, cpw_watch_event *event);

/// Disconnects and frees.
void cpw_watch_close(cpw_watch *watch);
#endif
