// CPipeWire: a camera node of our own in a PipeWire session (a pw_stream in the output direction,
// media.class Video/Source, media.role Camera) that other processes read as a camera: it offers
// the formats it is given as EnumFormat params, reports what each consumer negotiated and whether
// anyone streams, and copies frames into the buffers PipeWire gives it. Its loop runs on a
// pw_thread_loop (PipeWire's thread); calls from other threads take that loop's lock.
#ifndef CPW_OUTPUT_H
#define CPW_OUTPUT_H
#include <stddef.h>
#include <stdint.h>
#include "cpw_cameras.h"

/// One camera node we publish.
typedef struct cpw_output cpw_output;

/// One format the node offers (an EnumFormat param: raw video, one SPA format, one size, one
/// rate), with the layout frames of it have in a buffer (tightly packed, as the owner sends them).
typedef struct cpw_output_format {
    uint32_t spa_format;       ///< SPA_VIDEO_FORMAT_* (YUY2, NV12, I420…)
    uint32_t width, height;    ///< pixels
    uint32_t rate_num, rate_denom; ///< frames per second
    uint32_t frame_size;       ///< bytes of one frame, all planes
    uint32_t stride;           ///< bytes per row of the first plane
} cpw_output_format;

/// What the node is doing, as its owner reads it (cpw_output_status).
typedef struct cpw_output_status {
    uint32_t state;       ///< an enum cpw_state (cpipewire.h): CONNECTING, PAUSED (no consumer streams), STREAMING, ENDED
    uint32_t node_id;     ///< the node's global id once PipeWire made it, else UINT32_MAX (SPA_ID_INVALID)
    uint32_t negotiated;  ///< index into the offered formats of the format a consumer negotiated, or UINT32_MAX
    uint32_t buffers;     ///< buffers the stream has for that format
    uint64_t changes;     ///< counts every change of the above (state, format, buffers, node id)
    char error[256];      ///< why it ended ("" while it has not)
} cpw_output_status;

/// The node's names and properties.
typedef struct cpw_output_config {
    const char *node_name;        ///< node.name (unique in the session: what consumers' targets name)
    const char *node_description; ///< node.description: the name people see ("MediaDevices Camera")
    const char *marker_key;       ///< a property marking the node as ours ("mediadevices.virtual"), NULL for none
    const char *marker_value;     ///< its value ("true")
} cpw_output_config;

/// Connects to the default remote (PIPEWIRE_REMOTE, else $XDG_RUNTIME_DIR/pipewire-0), or over
/// `fd` (taken) when it is not -1, starts PipeWire's thread loop and creates the node offering
/// `formats` (the first is the preferred one). Waits at most `timeout_ms` for PipeWire to
/// have made the node (its id in the status). NULL on failure, with a sentence in `error`; a
/// `node_name` another node of the session has already is refused, the sentence starting with
/// "name taken:" (PipeWire itself would make a second node of that name).
/// `notify_fd`, when not -1, gets 8 bytes written (an eventfd's increment) on every change of
/// the status; it stays the caller's.
cpw_output *cpw_output_open(int fd, const cpw_output_config *config, const cpw_output_format *formats, size_t count,
                            int notify_fd, int timeout_ms, char *error, size_t error_size);

/// The node's status now (taken under the loop's lock).
void cpw_output_get_status(cpw_output *output, cpw_output_status *status);

/// A buffer the owner fills (cpw_output_begin .. cpw_output_end).
typedef struct cpw_output_buffer {
    uint8_t *data;        ///< the first byte of the buffer's memory (mapped by the stream)
    uint32_t capacity;    ///< bytes available from `data`
    uint32_t format;      ///< index of the negotiated format the buffer is for
} cpw_output_buffer;

/// Takes a free buffer of the stream for the next frame, a frame of offered format `format` (an
/// index into the formats given), holding the loop's lock until cpw_output_end (so the stream
/// cannot take it back meanwhile). Returns 1 with `buffer` set; 0 (lock not held) when there is
/// none: no consumer streams, or all buffers are with the consumers; 2 (lock not held) when the
/// negotiated format is another (nothing taken: the consumers get no empty cycle); -1 (lock not
/// held) when the stream has ended.
int cpw_output_begin(cpw_output *output, uint32_t format, cpw_output_buffer *buffer);

/// Hands the buffer cpw_output_begin gave to the consumers with `size` bytes of picture
/// (`size` 0: given back empty, flagged corrupt), `pts` (ns, CLOCK_MONOTONIC) and `seq`, and
/// releases the loop's lock. As the node drives its graph, queueing the buffer starts a cycle.
void cpw_output_end(cpw_output *output, uint32_t size, int64_t pts, uint64_t seq);

/// One consumer of the node: a link from the node to another node (a reader's stream), with
/// that node's name and its client's process.
typedef struct cpw_output_consumer {
    uint32_t link_id;     ///< the link's global id
    uint32_t node_id;     ///< the reading node's global id
    int32_t pid;          ///< its client's process (pipewire.sec.pid), 0 when not known
    char node_name[128];  ///< its node.name ("" when not known)
} cpw_output_consumer;

/// The links from the node to consumers as the session's registry announces them, at most
/// `capacity` into `consumers`; how many. Each change of them notifies like a status change.
int cpw_output_get_consumers(cpw_output *output, cpw_output_consumer *consumers, size_t capacity);

/// Disconnects, stops the thread loop and frees everything (every path: also when it ended).
void cpw_output_close(cpw_output *output);

/// Builds the EnumFormat param of `format` into `storage` and parses it back with the pod parser
/// the camera list uses, into at most `capacity` entries. Returns how many entries it gave, or
/// -1 when the pod did not fit `storage`. For tests: the pods the node offers, read as a consumer
/// reads them.
int cpw_output_enum_format_entries(const cpw_output_format *format, cpw_format_entry *entries, size_t capacity);

/// The EnumFormat pod of `format` into `storage` (`size` bytes); its size in bytes, or -1 when it
/// does not fit. For tests and pw-cli comparisons.
int cpw_output_build_enum_format(const cpw_output_format *format, void *storage, size_t size);
#endif
