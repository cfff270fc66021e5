// CPipeWire: a PipeWire video stream that a screen grabber or a camera source pulls frames from, written in C
// because what it needs is macros and inline functions Swift cannot import (SPA pod builders,
// pw_loop_iterate, spa_format_video_raw_parse) and a listener struct of C callbacks.
// It owns its own loop (no thread): the caller iterates it. Every symbol is prefixed `cpw_`.
#ifndef CPIPEWIRE_H
#define CPIPEWIRE_H
#include <stddef.h>
#include <stdint.h>

/// One stream from a PipeWire node, over a connection made from a file descriptor.
typedef struct cpw_capture cpw_capture;

/// A buffer's own mapping (memfd, a camera's DMA-BUF, or plain memory in PipeWire's shared
/// pool), which a lent frame's pixels live in.
typedef struct cpw_mapping cpw_mapping;

/// The most buffers a stream keeps slots for (it asks for at most 16).
#define CPW_MAX_SLOTS 64

/// The pixel layouts the stream offers (SPA video formats), as the capture reports them.
enum cpw_format {
    CPW_FORMAT_UNKNOWN = 0,
    CPW_FORMAT_BGRX = 1, ///< bytes B, G, R, x (SPA_VIDEO_FORMAT_BGRx, DRM XRGB8888)
    CPW_FORMAT_RGBX = 2, ///< bytes R, G, B, x (SPA_VIDEO_FORMAT_RGBx, DRM XBGR8888)
    CPW_FORMAT_BGRA = 3, ///< bytes B, G, R, A (SPA_VIDEO_FORMAT_BGRA, DRM ARGB8888)
    CPW_FORMAT_RGBA = 4, ///< bytes R, G, B, A (SPA_VIDEO_FORMAT_RGBA, DRM ABGR8888)
};

/// Where the stream is.
enum cpw_state {
    CPW_STATE_CONNECTING = 0, ///< negotiating; no buffer yet
    CPW_STATE_PAUSED = 1,     ///< negotiated, not streaming
    CPW_STATE_STREAMING = 2,  ///< buffers flow
    CPW_STATE_ENDED = 3,      ///< the node went away or the connection broke (see cpw_capture_error)
};

/// The newest picture the capture holds: valid until the next cpw_capture_newest or close.
typedef struct cpw_frame {
    const void *data;     ///< the first byte of the picture (mapped memfd, plain memory or DMA-BUF)
    size_t size;          ///< bytes from `data`
    int32_t stride;       ///< bytes per row (0: the producer did not say)
    uint32_t width;       ///< pixels
    uint32_t height;      ///< rows
    uint32_t format;      ///< an enum cpw_format (screen streams)
    uint32_t spa_format;  ///< the SPA video format of raw video (camera streams); 0 when encoded
    uint32_t subtype;     ///< an enum cpw_subtype (cpw_cameras.h): raw, MJPEG, H.264
    uint32_t transform;   ///< the buffer's VideoTransform meta (SPA_META_TRANSFORMATION_*; 0: none)
    uint32_t is_dmabuf;   ///< 1 when `data` maps a DMA-BUF (read between DMA_BUF_IOCTL_SYNC start and end)
    int32_t slot;         ///< the buffer's slot when it can be lent (our own mapping), else -1
    cpw_mapping *mapping; ///< that mapping (NULL when it cannot be lent)
    int64_t pts;          ///< the buffer's SPA_META_Header pts (ns; the producer's clock: SPA's V4L2 and libcamera
                          ///< sources put the capture time there, on CLOCK_MONOTONIC); -1 when it has none
} cpw_frame;

/// The one format a camera stream asks for (one of the node's EnumFormat entries, fixed).
typedef struct cpw_stream_request {
    uint32_t subtype;     ///< an enum cpw_subtype
    uint32_t spa_format;  ///< raw: the SPA video format
    uint32_t width, height;
    uint32_t rate_num, rate_denom; ///< frames per second; 0/0 when the node gives no rate (libcamera)
} cpw_stream_request;

/// Connects to PipeWire over `fd` (taken: closed with the capture, or here on failure) and
/// asks for a stream from node `node_id`. NULL on failure, with a sentence in `error`.
cpw_capture *cpw_capture_open(int fd, uint32_t node_id, char *error, size_t error_size);

/// Connects over `fd` (taken), or to the default remote when `fd` is -1, and asks camera node
/// `node_id` for a stream in exactly `request`'s format. Buffers may be memfd, plain memory or
/// DMA-BUF (mapped here, read between DMA_BUF_IOCTL_SYNC start and end); buffers flagged
/// corrupt are given back unread. NULL on failure, with a sentence in `error`.
cpw_capture *cpw_capture_open_camera(int fd, uint32_t node_id, const cpw_stream_request *request,
                                     char *error, size_t error_size);

/// Runs the capture's loop once, waiting at most `timeout_ms` (0: not at all) for events.
/// Returns what pw_loop_iterate returns (a negative errno on failure).
int cpw_capture_iterate(cpw_capture *capture, int timeout_ms);

/// Readable when a buffer may have arrived. For a screen cast, an eventfd its stream's process
/// callback writes (PipeWire's data-loop thread runs the stream and hands `process` to the
/// capture's loop); `cpw_capture_newest` then takes the buffer. For a camera, the descriptor of
/// the context's data loop, which the capture's thread runs itself: `cpw_capture_wait`.
int cpw_capture_fd(const cpw_capture *capture);

/// What a camera's `cpw_capture_wait` saw (bits).
enum cpw_ready {
    CPW_READY_BUFFER = 1,  ///< a graph cycle brought a buffer: cpw_capture_newest takes it
    CPW_READY_LOOP = 2,    ///< the capture's loop has something: cpw_capture_iterate
    CPW_READY_WATCHED = 4, ///< the descriptor given to cpw_capture_watch is readable (and stays so until read)
};

/// A camera's thread sleeps in `cpw_capture_wait`, which then also wakes when `fd` becomes
/// readable (the caller's wake-up event). One descriptor; -EINVAL for a screen cast or a second.
int cpw_capture_watch(cpw_capture *capture, int fd);

/// A camera's: runs the stream's data loop once on the calling thread, waiting at most
/// `timeout_ms` (-1: without limit): the due graph cycles (the stream processed there:
/// PW_STREAM_FLAG_RT_PROCESS), and notes whether the capture's loop or the watched descriptor
/// is readable. So one thread wakes per frame, in one system call, where PipeWire's own
/// data-loop thread would wake and then hand the buffer to the capture's. Returns enum
/// cpw_ready bits; 0 for a screen cast, or when the time ran out. A failure ends the stream.
uint32_t cpw_capture_wait(cpw_capture *capture, int timeout_ms);

/// Where the stream is now.
enum cpw_state cpw_capture_state(const cpw_capture *capture);

/// Why the stream ended or failed ("" if it has not).
const char *cpw_capture_error(const cpw_capture *capture);

/// Takes every buffer that arrived, keeps the newest (giving back the others and the one held
/// before) and describes it in `frame`. Returns 1 when a new picture is held, 0 when none
/// arrived since the last call (`frame` then describes the one still held, if any: `data` NULL
/// when there is none).
int cpw_capture_newest(cpw_capture *capture, cpw_frame *frame);

/// How many buffers arrived and were given back unread because a newer one followed (or
/// because they held no picture).
uint64_t cpw_capture_skipped(const cpw_capture *capture);

/// What the stream negotiated so far: formats taken (one at the start; more when the producer
/// or the graph changed it), buffers added and removed (a new format or buffer set replaces
/// them all). For the log; read on the thread that iterates the capture.
typedef struct {
    uint32_t formats;
    uint32_t buffers_added;
    uint32_t buffers_removed;
} cpw_negotiations;
cpw_negotiations cpw_capture_negotiations(const cpw_capture *capture);

/// Lends the held buffer out: it is no longer given back when a newer one arrives, but by
/// cpw_capture_return. It stays the held one (cpw_capture_newest still describes it) until a
/// newer one arrives. Returns its slot, or -1 when there is none or it cannot be lent.
int cpw_capture_lend(cpw_capture *capture);

/// A lent buffer came back (on the thread that iterates the capture): 1 when it went back to
/// the producer (a DMA-BUF read ended first) or, still the newest, is held again (given back
/// when a newer one arrives), 0 when the stream had let it go meanwhile (its
/// mapping is freed here and the slot reusable), -1 when `slot` was not lent.
int cpw_capture_return(cpw_capture *capture, int slot);

/// How many buffers the producer has (neither held nor lent).
uint32_t cpw_capture_with_producer(const cpw_capture *capture);
/// How many buffers the stream has negotiated (held, lent or with the producer).
uint32_t cpw_capture_buffer_count(const cpw_capture *capture);

/// Frees a lent buffer's mapping after its capture was closed (ending a DMA-BUF read first).
void cpw_mapping_free(cpw_mapping *mapping);

/// A second, read-only mapping of the shared pages holding the `size` bytes at `data` (mremap
/// with old size 0: the same pages, no copy), which stays readable when the first is unmapped:
/// how a camera buffer in plain memory (MemPtr) of PipeWire's pool is lent beyond its buffer set.
/// NULL when the memory is not a shared mapping (the kernel refuses a private one) or on failure.
/// Free it with cpw_mapping_free.
cpw_mapping *cpw_mapping_alias(const void *data, size_t size, int slot);

/// The first byte of the memory a mapping of cpw_mapping_alias (or of a camera buffer) reads.
const void *cpw_mapping_bytes(const cpw_mapping *mapping);

/// Gives back the held buffer, disconnects the stream and the connection, frees the capture.
/// The mappings of buffers still lent stay (see cpw_mapping_free).
void cpw_capture_close(cpw_capture *capture);
#endif
