// CPipeWire's internal pieces shared by the screen-cast capture and the cameras (not exported to Swift).
#ifndef CPW_CONNECTION_H
#define CPW_CONNECTION_H
#include <stddef.h>
#include <pipewire/pipewire.h>

/// A PipeWire client: its own loop (no thread: the owner iterates it), context and core.
struct cpw_connection {
    struct pw_loop *loop;
    struct pw_context *context;
    struct pw_core *core;
    /// The context's data loop (where streams' graph cycles run) when the owner iterates it
    /// too, on the same thread as `loop`; NULL when PipeWire's own data-loop thread runs it.
    struct pw_loop *data_loop;
};

/// Connects over `fd` (taken: owned by the core, or closed here on failure), or to the default
/// remote (PIPEWIRE_REMOTE, else $XDG_RUNTIME_DIR/pipewire-0) when `fd` is -1. With
/// `own_data_loop`, the context's data-loop thread is stopped and `data_loop` set: the owner
/// then runs both loops on one thread (neither is entered by another thread, so PipeWire's
/// invokes between them run at once, inline, and none can wait on the other). Returns 0, or
/// -1 with a sentence in `error` (the connection then holds nothing).
int cpw_connection_open(struct cpw_connection *connection, int fd, int own_data_loop, char *error, size_t error_size);

/// Disconnects and frees what `cpw_connection_open` made (safe on a zeroed or half-made one).
void cpw_connection_close(struct cpw_connection *connection);

/// Runs the loop once for at most `timeout_ms`, entered as pw_loop_iterate requires.
int cpw_connection_iterate(struct cpw_connection *connection, int timeout_ms);

/// Runs `loop` (the connection's loop or its data loop) once for at most `timeout_ms`, entered.
int cpw_loop_run_once(struct pw_loop *loop, int timeout_ms);

struct cpw_format_entry;
/// The entries an EnumFormat param gives (the camera list's parser: one per format and size
/// alternative), at most `capacity` of them into `entries`. Returns how many, or -1 when out of memory.
int cpw_format_entries_of_pod(const struct spa_pod *param, struct cpw_format_entry *entries, size_t capacity);
#endif
