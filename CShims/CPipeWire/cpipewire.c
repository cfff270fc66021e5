// CPipeWire: see cpipewire.h.
#define _GNU_SOURCE  // mremap and MREMAP_MAYMOVE (cpw_mapping_alias)
#include "cpipewire.h"
#include "cpw_connection.h"
#include "cpw_cameras.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <linux/dma-buf.h>

#include <pipewire/pipewire.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/buffer/meta.h>
#include <spa/utils/result.h>

struct cpw_capture {
    struct cpw_connection connection;
    struct spa_hook core_listener;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    uint32_t node_id;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    struct spa_video_info_raw info;
    int has_format;
    enum cpw_state state;
    char error[256];
    struct pw_buffer *held;
    cpw_frame held_frame;
    uint64_t skipped;
    int notify_fd;  // eventfd: written when a screen cast's buffer arrives (cpw_capture_fd)
    // A camera's: what its data loop's last run saw (enum cpw_ready), and the sources it
    // watches beside the graph cycles (the capture's loop, the caller's descriptor).
    uint32_t ready;
    struct spa_source *loop_source;
    struct spa_source *watch_source;
    int camera;     // a camera stream (any raw format, MJPEG, DMA-BUF) rather than a screen cast
    const char *gone; // why the stream ended when its node went away
    uint32_t subtype; // enum cpw_subtype of the negotiated format
    // Buffers by slot (cpw_frame.slot), with what the lender did with them.
    struct pw_buffer *slots[CPW_MAX_SLOTS];
    uint8_t lent[CPW_MAX_SLOTS];      // lent out (cpw_capture_lend): not the producer's (maybe still held)
    uint8_t disowned[CPW_MAX_SLOTS];  // removed while lent: the slot waits for cpw_capture_return
    struct cpw_mapping *disowned_mapping[CPW_MAX_SLOTS];
    // For the operator's log (cpw_capture_negotiations): formats the stream took, buffers it
    // was given and let go.
    uint32_t formats;
    uint32_t buffers_added;
    uint32_t buffers_removed;
};

/// One buffer's record (pw_buffer.user_data): its slot and our own read-only mapping of the
/// pixels, so that they stay readable after the stream let the buffer go (a lent frame
/// outliving its buffer set or the run): memfd and DMA-BUF mapped over a
/// descriptor of our own; plain memory (MemPtr) in PipeWire's shared pool mapped a second time
/// (cpw_mapping_alias).
struct cpw_mapping {
    int slot;       // -1: none (no free slot)
    void *base;     // NULL: not ours (plain memory outside PipeWire's pool, or mapped by the stream)
    size_t size;
    const uint8_t *bytes; // the first plane's first byte (spa_data.data's equivalent) in `base`
    int fd;         // ours (dup'd), -1 when none
    int is_dmabuf;  // DMA_BUF_IOCTL_SYNC brackets reads
};

cpw_mapping *cpw_mapping_alias(const void *data, size_t size, int slot) {
    if (data == NULL || size == 0) return NULL;
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) return NULL;
    uintptr_t start = (uintptr_t)data & ~((uintptr_t)page - 1);
    size_t length = ((uintptr_t)data + size - start + (uintptr_t)page - 1) & ~((uintptr_t)page - 1);
    struct cpw_mapping *mapping = calloc(1, sizeof *mapping);
    if (mapping == NULL) return NULL;
    // Old size 0: a new mapping of the same pages (shared mappings only; the kernel refuses a
    // private one with EINVAL). It outlives PipeWire's munmap of the original.
    void *alias = mremap((void *)start, 0, length, MREMAP_MAYMOVE);
    if (alias == MAP_FAILED) {
        free(mapping);
        return NULL;
    }
    mprotect(alias, length, PROT_READ);  // ours are reads only
    mapping->slot = slot;
    mapping->fd = -1;
    mapping->base = alias;
    mapping->size = length;
    mapping->bytes = (const uint8_t *)alias + ((uintptr_t)data - start);
    return mapping;
}

const void *cpw_mapping_bytes(const cpw_mapping *mapping) { return mapping != NULL ? mapping->bytes : NULL; }

void cpw_mapping_free(struct cpw_mapping *mapping) {
    if (mapping == NULL) return;
    if (mapping->base != NULL) {
        if (mapping->is_dmabuf) {
            struct dma_buf_sync sync = {.flags = DMA_BUF_SYNC_END | DMA_BUF_SYNC_READ};
            while (ioctl(mapping->fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {}
        }
        munmap(mapping->base, mapping->size);
    }
    if (mapping->fd >= 0) close(mapping->fd);
    free(mapping);
}

static void cpw_fail(struct cpw_capture *c, const char *what) {
    c->state = CPW_STATE_ENDED;
    if (c->error[0] == 0) snprintf(c->error, sizeof c->error, "%s", what ? what : "the stream ended");
}

static uint32_t cpw_format_of(enum spa_video_format format) {
    switch (format) {
    case SPA_VIDEO_FORMAT_BGRx: return CPW_FORMAT_BGRX;
    case SPA_VIDEO_FORMAT_RGBx: return CPW_FORMAT_RGBX;
    case SPA_VIDEO_FORMAT_BGRA: return CPW_FORMAT_BGRA;
    case SPA_VIDEO_FORMAT_RGBA: return CPW_FORMAT_RGBA;
    default: return CPW_FORMAT_UNKNOWN;
    }
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct cpw_capture *c = data;
    if (id != PW_ID_CORE && res != -EPIPE) return;
    char text[200];
    snprintf(text, sizeof text, "PipeWire: %s (%s)", message ? message : "error", spa_strerror(res));
    cpw_fail(c, text);
}

static const struct pw_core_events cpw_core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
};

// The node shared going away (the portal session ended, the monitor or window is gone) leaves
// the stream waiting for ever in "paused": the registry says it.
static void on_global_remove(void *data, uint32_t id) {
    struct cpw_capture *c = data;
    if (id == c->node_id) cpw_fail(c, c->gone);
}

static const struct pw_registry_events cpw_registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global_remove = on_global_remove,
};

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    struct cpw_capture *c = data;
    switch (state) {
    case PW_STREAM_STATE_ERROR:
        cpw_fail(c, error ? error : "the stream failed");
        break;
    case PW_STREAM_STATE_UNCONNECTED:
        cpw_fail(c, c->gone);
        break;
    case PW_STREAM_STATE_PAUSED:
        if (c->state != CPW_STATE_ENDED) c->state = CPW_STATE_PAUSED;
        break;
    case PW_STREAM_STATE_STREAMING:
        if (c->state != CPW_STATE_ENDED) c->state = CPW_STATE_STREAMING;
        break;
    default:
        break;
    }
}

static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct cpw_capture *c = data;
    if (id != SPA_PARAM_Format || param == NULL) return;
    uint32_t media_type, media_subtype;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0) return;
    if (media_type != SPA_MEDIA_TYPE_video) return;
    struct spa_video_info_raw info = {0};
    if (media_subtype == SPA_MEDIA_SUBTYPE_raw) {
        if (spa_format_video_raw_parse(param, &info) < 0) return;
        c->subtype = CPW_SUBTYPE_RAW;
    } else if (c->camera && media_subtype == SPA_MEDIA_SUBTYPE_mjpg) {
        struct spa_video_info_mjpg mjpg;
        if (spa_format_video_mjpg_parse(param, &mjpg) < 0) return;
        info.size = mjpg.size;
        info.framerate = mjpg.framerate;
        c->subtype = CPW_SUBTYPE_MJPG;
    } else if (c->camera && media_subtype == SPA_MEDIA_SUBTYPE_h264) {
        struct spa_video_info_h264 h264;
        if (spa_format_video_h264_parse(param, &h264) < 0) return;
        info.size = h264.size;
        info.framerate = h264.framerate;
        c->subtype = CPW_SUBTYPE_H264;
    } else {
        return;
    }
    c->info = info;
    c->has_format = 1;
    c->formats++;

    // Buffers we can read with the CPU: memfd (mapped by the stream), plain memory and, for
    // cameras, DMA-BUF (mapped in on_add_buffer); the header meta, whose flags say when a
    // buffer is corrupt; for cameras the VideoTransform meta. At least 3: the reader holds the
    // newest, the producer fills one, and one travels back (a buffer given back returns to
    // the producer only with the next cycle; with 2, a producer waiting for a change can be
    // left without one).
    uint8_t storage[512];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    const struct spa_pod *params[3];
    int types = (1 << SPA_DATA_MemFd) | (1 << SPA_DATA_MemPtr) | (c->camera ? (1 << SPA_DATA_DmaBuf) : 0);
    params[0] = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(c->camera ? 8 : 4, 3, 16),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int(types));
    params[1] = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    params[2] = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_VideoTransform),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_videotransform)));
    pw_stream_update_params(c->stream, params, c->camera ? 3 : 2);
}

// Each buffer gets a record when the stream adds it. Memfd (and a camera's DMA-BUF) buffers are
// mapped here, once, by us (PW_STREAM_FLAG_MAP_BUFFERS maps only memfd in PipeWire 0.3.65, and
// its mappings end with the stream), for camera and screen-cast streams alike: read-only, the
// whole of the first plane, over a descriptor of our own, and the buffer gets a slot (a free one not awaiting a lent buffer's return).
// Plain memory (MemPtr, fd -1: a producer such as GStreamer's pipewiresink) lies in a block of
// PipeWire's pool, a memfd the stream mapped shared, and its mapping ends with the buffer set:
// those pages are mapped a second time, read-only (cpw_mapping_alias), so that the buffer is
// lent as a memfd one is, and a lease outlives the set with no copy. Plain memory outside the
// pool (a producer in this process) gets no mapping of ours: its frames are copied.
static void on_add_buffer(void *data, struct pw_buffer *buffer) {
    struct cpw_capture *c = data;
    c->buffers_added++;
    buffer->user_data = NULL;
    struct cpw_mapping *mapping = calloc(1, sizeof *mapping);
    if (mapping == NULL) return;
    mapping->slot = -1;
    mapping->fd = -1;
    buffer->user_data = mapping;
    if (buffer->buffer->n_datas < 1) return;
    struct spa_data *d = &buffer->buffer->datas[0];
    for (int i = 0; i < CPW_MAX_SLOTS; i++) {
        if (c->slots[i] == NULL && !c->disowned[i]) {
            c->slots[i] = buffer;
            c->lent[i] = 0;
            mapping->slot = i;
            break;
        }
    }
    if (d->type == SPA_DATA_MemPtr && d->data != NULL && d->maxsize > 0 && mapping->slot >= 0
        && pw_mempool_find_ptr(pw_core_get_mempool(c->connection.core), d->data) != NULL) {
        struct cpw_mapping *alias = cpw_mapping_alias(d->data, d->maxsize, mapping->slot);
        if (alias != NULL) {
            buffer->user_data = alias;
            free(mapping);
        }
        return;
    }
    if (d->data != NULL || (d->type != SPA_DATA_DmaBuf && d->type != SPA_DATA_MemFd) || d->fd < 0) return;
    int fd = fcntl((int)d->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) return;
    size_t size = (size_t)d->mapoffset + d->maxsize;
    void *base = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
    if (base == MAP_FAILED) {
        close(fd);
        return;
    }
    mapping->fd = fd;
    mapping->base = base;
    mapping->size = size;
    mapping->bytes = (const uint8_t *)base + d->mapoffset;
    mapping->is_dmabuf = d->type == SPA_DATA_DmaBuf;
}

// Where a buffer's first plane is readable: our mapping when there is one (a lent frame's
// pixels must outlive the stream's), else the stream's (NULL: nowhere).
static const uint8_t *cpw_buffer_bytes(struct pw_buffer *buffer) {
    struct cpw_mapping *mapping = buffer->user_data;
    if (mapping != NULL && mapping->base != NULL) return mapping->bytes;
    return buffer->buffer->datas[0].data;
}

// Brackets CPU reads of a DMA-BUF buffer (DMA_BUF_IOCTL_SYNC start, then end when given back).
static void cpw_sync(struct pw_buffer *buffer, uint64_t flags) {
    struct cpw_mapping *mapping = buffer->user_data;
    if (mapping == NULL || mapping->base == NULL || !mapping->is_dmabuf) return;
    struct dma_buf_sync sync = {.flags = flags | DMA_BUF_SYNC_READ};
    while (ioctl(mapping->fd, DMA_BUF_IOCTL_SYNC, &sync) < 0 && errno == EINTR) {}
}

// Gives a buffer back to the producer, ending a DMA-BUF read first.
static void cpw_give_back(struct cpw_capture *c, struct pw_buffer *buffer, int was_read) {
    if (was_read) cpw_sync(buffer, DMA_BUF_SYNC_END);
    pw_stream_queue_buffer(c->stream, buffer);
}

// Buffers go away when the format changes (a new size) or the stream ends: the held one is
// then no longer ours to give back. A lent one keeps its mapping (the lender's now: freed by
// cpw_capture_return during the run, by the lender with cpw_mapping_free after it).
static void on_remove_buffer(void *data, struct pw_buffer *buffer) {
    struct cpw_capture *c = data;
    c->buffers_removed++;
    if (c->held == buffer) {
        cpw_sync(buffer, DMA_BUF_SYNC_END);
        c->held = NULL;
        c->held_frame = (cpw_frame){0};
    }
    struct cpw_mapping *mapping = buffer->user_data;
    buffer->user_data = NULL;
    if (mapping == NULL) return;
    int slot = mapping->slot;
    if (slot >= 0 && slot < CPW_MAX_SLOTS && c->slots[slot] == buffer) {
        c->slots[slot] = NULL;
        if (c->lent[slot]) {
            c->lent[slot] = 0;
            c->disowned[slot] = 1;
            c->disowned_mapping[slot] = mapping;
            return;
        }
    }
    cpw_mapping_free(mapping);
}

// A buffer arrived. Dequeuing is left to cpw_capture_newest. A screen cast's stream calls this
// on the capture's loop (handed over from PipeWire's data-loop thread); it makes cpw_capture_fd
// readable, so the capture thread can sleep on it while the screen is still. A camera's stream
// calls it inside cpw_capture_wait's run of the data loop, on the capture thread: noted there.
static void on_process(void *data) {
    struct cpw_capture *c = data;
    if (c->camera) {
        c->ready |= CPW_READY_BUFFER;
        return;
    }
    uint64_t one = 1;
    if (write(c->notify_fd, &one, sizeof one) < 0) { /* already signalled (counter full) */ }
}

static const struct pw_stream_events cpw_stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
    .add_buffer = on_add_buffer,
    .remove_buffer = on_remove_buffer,
    .process = on_process,
};

// The capture's own loop has something (a camera's: seen from its data loop, run by cpw_capture_wait).
static void on_loop_ready(void *data, int fd, uint32_t mask) { ((struct cpw_capture *)data)->ready |= CPW_READY_LOOP; }

// The descriptor cpw_capture_watch named is readable.
static void on_watched_ready(void *data, int fd, uint32_t mask) { ((struct cpw_capture *)data)->ready |= CPW_READY_WATCHED; }

// Makes a capture and its connection, and a stream of `role` with the listeners; NULL on failure.
static struct cpw_capture *capture_new(int fd, uint32_t node_id, int camera, char *error, size_t error_size) {
    struct cpw_capture *c = calloc(1, sizeof *c);
    if (c == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    c->camera = camera;
    c->gone = camera ? "the camera's node went away (unplugged, its driver unloaded, or the session manager removed it)"
                     : "the shared node went away (sharing stopped, or the screen or window is gone)";
    c->notify_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (c->notify_fd < 0) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "eventfd failed: %s", strerror(errno));
        free(c);
        return NULL;
    }
    // A camera's graph cycles run on the capture thread (the one thread that wakes per frame);
    // a screen cast's on PipeWire's data-loop thread, its buffers signalled through notify_fd.
    if (cpw_connection_open(&c->connection, fd, camera, error, error_size) < 0) {
        cpw_capture_close(c);
        return NULL;
    }
    if (c->connection.data_loop != NULL) {
        c->loop_source = pw_loop_add_io(c->connection.data_loop, pw_loop_get_fd(c->connection.loop), SPA_IO_IN, false,
                                        on_loop_ready, c);
        if (c->loop_source == NULL) {
            snprintf(error, error_size, "pw_loop_add_io failed: %s", strerror(errno));
            cpw_capture_close(c);
            return NULL;
        }
    }
    struct pw_core *core = c->connection.core;
    pw_core_add_listener(core, &c->core_listener, &cpw_core_events, c);
    c->node_id = node_id;
    c->registry = pw_core_get_registry(core, PW_VERSION_REGISTRY, 0);
    if (c->registry != NULL) pw_registry_add_listener(c->registry, &c->registry_listener, &cpw_registry_events, c);
    c->stream = pw_stream_new(core, camera ? "mediadevices camera" : "mediadevices screen",
                              pw_properties_new(PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture",
                                                PW_KEY_MEDIA_ROLE, camera ? "Camera" : "Screen", NULL));
    if (c->stream == NULL) {
        snprintf(error, error_size, "pw_stream_new failed: %s", strerror(errno));
        cpw_capture_close(c);
        return NULL;
    }
    pw_stream_add_listener(c->stream, &c->stream_listener, &cpw_stream_events, c);
    return c;
}

// Streams map their buffers themselves (on_add_buffer), so that a lent buffer outlives its
// buffer set; camera streams are processed where their data loop runs (the capture thread:
// RT_PROCESS), screen streams on PipeWire's data-loop thread (announced through notify_fd).
// DONT_RECONNECT (node.dont-reconnect, as GStreamer's pipewiresrc connects): the session
// manager links the stream to the node asked for or to none, and never moves it to another one
// (WirePlumber 0.4 otherwise falls back to the default camera when it does not find the target,
// and moves a linked stream when a rescan finds a different "best" target: a capture would go
// on from another camera).
static struct cpw_capture *capture_connect(struct cpw_capture *c, const struct spa_pod *format, char *error, size_t error_size) {
    enum pw_stream_flags flags = PW_STREAM_FLAG_AUTOCONNECT | PW_STREAM_FLAG_DONT_RECONNECT
                                 | (c->camera ? PW_STREAM_FLAG_RT_PROCESS : 0);
    int result = pw_stream_connect(c->stream, PW_DIRECTION_INPUT, c->node_id, flags, &format, 1);
    if (result < 0) {
        snprintf(error, error_size, "pw_stream_connect to node %u failed: %s", c->node_id, spa_strerror(result));
        cpw_capture_close(c);
        return NULL;
    }
    return c;
}

cpw_capture *cpw_capture_open(int fd, uint32_t node_id, char *error, size_t error_size) {
    struct cpw_capture *c = capture_new(fd, node_id, 0, error, error_size);
    if (c == NULL) return NULL;
    // Raw video in the 32-bit layouts the pipeline reads, any size, any rate (the portal's
    // streams announce 0/1: frames come when the screen changes).
    uint8_t storage[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    const struct spa_pod *format = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_CHOICE_ENUM_Id(5, SPA_VIDEO_FORMAT_BGRx, SPA_VIDEO_FORMAT_BGRx,
                                                        SPA_VIDEO_FORMAT_RGBx, SPA_VIDEO_FORMAT_BGRA, SPA_VIDEO_FORMAT_RGBA),
        SPA_FORMAT_VIDEO_size, SPA_POD_CHOICE_RANGE_Rectangle(&SPA_RECTANGLE(1920, 1080), &SPA_RECTANGLE(1, 1),
                                                              &SPA_RECTANGLE(16384, 16384)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_CHOICE_RANGE_Fraction(&SPA_FRACTION(0, 1), &SPA_FRACTION(0, 1),
                                                                  &SPA_FRACTION(1000, 1)));
    return capture_connect(c, format, error, error_size);
}

cpw_capture *cpw_capture_open_camera(int fd, uint32_t node_id, const cpw_stream_request *request,
                                     char *error, size_t error_size) {
    uint32_t subtype;
    switch (request->subtype) {
    case CPW_SUBTYPE_RAW: subtype = SPA_MEDIA_SUBTYPE_raw; break;
    case CPW_SUBTYPE_MJPG: subtype = SPA_MEDIA_SUBTYPE_mjpg; break;
    case CPW_SUBTYPE_H264: subtype = SPA_MEDIA_SUBTYPE_h264; break;
    default:
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "media subtype %u is not one a camera stream reads", request->subtype);
        return NULL;
    }
    struct cpw_capture *c = capture_new(fd, node_id, 1, error, error_size);
    if (c == NULL) return NULL;
    // Exactly the chosen entry: subtype, format, size, and the rate where the node gives one.
    uint8_t storage[1024];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    struct spa_pod_frame frame;
    spa_pod_builder_push_object(&b, &frame, SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat);
    spa_pod_builder_add(&b, SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
                        SPA_FORMAT_mediaSubtype, SPA_POD_Id(subtype), 0);
    if (request->subtype == CPW_SUBTYPE_RAW) spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_format, SPA_POD_Id(request->spa_format), 0);
    spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(request->width, request->height)), 0);
    if (request->rate_denom != 0)
        spa_pod_builder_add(&b, SPA_FORMAT_VIDEO_framerate,
                            SPA_POD_Fraction(&SPA_FRACTION(request->rate_num, request->rate_denom)), 0);
    const struct spa_pod *format = spa_pod_builder_pop(&b, &frame);
    return capture_connect(c, format, error, error_size);
}

int cpw_capture_iterate(cpw_capture *c, int timeout_ms) {
    int result = cpw_connection_iterate(&c->connection, timeout_ms);
    if (result < 0 && result != -EINTR) {
        char text[120];
        snprintf(text, sizeof text, "pw_loop_iterate failed: %s", spa_strerror(result));
        cpw_fail(c, text);
    }
    return result;
}

int cpw_capture_watch(cpw_capture *c, int fd) {
    if (c->connection.data_loop == NULL || c->watch_source != NULL) return -EINVAL;
    c->watch_source = pw_loop_add_io(c->connection.data_loop, fd, SPA_IO_IN, false, on_watched_ready, c);
    return c->watch_source != NULL ? 0 : -errno;
}

uint32_t cpw_capture_wait(cpw_capture *c, int timeout_ms) {
    if (c->connection.data_loop == NULL) return 0;
    c->ready = 0;
    int result = cpw_loop_run_once(c->connection.data_loop, timeout_ms);
    if (result < 0 && result != -EINTR) {
        char text[120];
        snprintf(text, sizeof text, "pw_loop_iterate on the data loop failed: %s", spa_strerror(result));
        cpw_fail(c, text);
    }
    return c->ready;
}

int cpw_capture_fd(const cpw_capture *c) {
    return c->connection.data_loop != NULL ? pw_loop_get_fd(c->connection.data_loop) : c->notify_fd;
}

enum cpw_state cpw_capture_state(const cpw_capture *c) { return c->state; }

const char *cpw_capture_error(const cpw_capture *c) { return c->error; }

uint64_t cpw_capture_skipped(const cpw_capture *c) { return c->skipped; }

cpw_negotiations cpw_capture_negotiations(const cpw_capture *c) {
    return (cpw_negotiations){.formats = c->formats, .buffers_added = c->buffers_added, .buffers_removed = c->buffers_removed};
}

/// Whether `buffer` holds a picture the CPU can read (not empty, not flagged corrupt).
static int cpw_has_picture(struct pw_buffer *buffer) {
    struct spa_buffer *b = buffer->buffer;
    if (b->n_datas < 1 || cpw_buffer_bytes(buffer) == NULL || b->datas[0].chunk == NULL) return 0;
    struct spa_data *d = &b->datas[0];
    if (d->chunk->size == 0 || (d->chunk->flags & SPA_CHUNK_FLAG_CORRUPTED)) return 0;
    struct spa_meta_header *header = spa_buffer_find_meta_data(b, SPA_META_Header, sizeof *header);
    if (header != NULL && (header->flags & SPA_META_HEADER_FLAG_CORRUPTED)) return 0;
    return 1;
}

// Whether `buffer` is lent out (cpw_capture_lend): the lender gives it back, not a newer buffer.
static int cpw_is_lent(const struct cpw_capture *c, const struct pw_buffer *buffer) {
    const struct cpw_mapping *mapping = buffer->user_data;
    return mapping != NULL && mapping->slot >= 0 && mapping->slot < CPW_MAX_SLOTS && c->slots[mapping->slot] == buffer
        && c->lent[mapping->slot];
}

int cpw_capture_newest(cpw_capture *c, cpw_frame *frame) {
    if (c->connection.data_loop == NULL) {
        uint64_t signalled;
        if (read(c->notify_fd, &signalled, sizeof signalled) < 0) { /* nothing arrived: EAGAIN */ }
    }
    struct pw_buffer *newest = NULL;
    struct pw_buffer *buffer;
    if (c->stream != NULL && c->state != CPW_STATE_ENDED) {
        pw_loop_enter(c->connection.loop);
        while ((buffer = pw_stream_dequeue_buffer(c->stream)) != NULL) {
            if (!cpw_has_picture(buffer) || !c->has_format) {
                cpw_give_back(c, buffer, 0);
                c->skipped += 1;
                continue;
            }
            if (newest != NULL) {
                cpw_give_back(c, newest, 0);
                c->skipped += 1;
            }
            newest = buffer;
        }
        if (newest != NULL && c->held != NULL && !cpw_is_lent(c, c->held)) cpw_give_back(c, c->held, 1);
        pw_loop_leave(c->connection.loop);
    }
    if (newest != NULL) {
        c->held = newest;
        cpw_sync(newest, DMA_BUF_SYNC_START);
        struct spa_data *d = &newest->buffer->datas[0];
        uint32_t offset = d->chunk->offset % (d->maxsize ? d->maxsize : 1);
        int32_t stride = d->chunk->stride != 0 ? d->chunk->stride : (c->camera ? 0 : (int32_t)(c->info.size.width * 4));
        struct spa_meta_videotransform *transform =
            spa_buffer_find_meta_data(newest->buffer, SPA_META_VideoTransform, sizeof *transform);
        size_t size = d->chunk->size;
        if (offset + size > d->maxsize) size = d->maxsize - offset;  // a chunk past its buffer: read what is there
        struct cpw_mapping *mapping = newest->user_data;
        struct spa_meta_header *header = spa_buffer_find_meta_data(newest->buffer, SPA_META_Header, sizeof *header);
        c->held_frame = (cpw_frame){
            .data = cpw_buffer_bytes(newest) + offset,
            .size = size,
            .stride = stride,
            .width = c->info.size.width,
            .height = c->info.size.height,
            .format = cpw_format_of(c->info.format),
            .spa_format = c->subtype == CPW_SUBTYPE_RAW ? c->info.format : 0,
            .subtype = c->subtype,
            .transform = transform != NULL ? transform->transform : 0,
            .is_dmabuf = mapping != NULL && mapping->is_dmabuf,
            .slot = mapping != NULL && mapping->base != NULL ? mapping->slot : -1,
            .mapping = mapping != NULL && mapping->base != NULL ? mapping : NULL,
            .pts = header != NULL ? header->pts : -1,
        };
    }
    *frame = c->held != NULL ? c->held_frame : (cpw_frame){0};
    return newest != NULL;
}

int cpw_capture_lend(cpw_capture *c) {
    if (c->held == NULL) return -1;
    struct cpw_mapping *mapping = c->held->user_data;
    if (mapping == NULL || mapping->base == NULL || mapping->slot < 0) return -1;
    c->lent[mapping->slot] = 1;
    return mapping->slot;
}

int cpw_capture_return(cpw_capture *c, int slot) {
    if (slot < 0 || slot >= CPW_MAX_SLOTS) return -1;
    if (c->disowned[slot]) {
        cpw_mapping_free(c->disowned_mapping[slot]);
        c->disowned_mapping[slot] = NULL;
        c->disowned[slot] = 0;
        return 0;
    }
    if (!c->lent[slot] || c->slots[slot] == NULL || c->stream == NULL) return -1;
    c->lent[slot] = 0;
    if (c->slots[slot] == c->held) return 1;  // still the newest: held again, given back when a newer one comes
    pw_loop_enter(c->connection.loop);
    cpw_give_back(c, c->slots[slot], 1);
    pw_loop_leave(c->connection.loop);
    return 1;
}

uint32_t cpw_capture_with_producer(const cpw_capture *c) {
    uint32_t count = 0;
    for (int i = 0; i < CPW_MAX_SLOTS; i++)
        if (c->slots[i] != NULL && !c->lent[i] && c->slots[i] != c->held) count++;
    return count;
}

uint32_t cpw_capture_buffer_count(const cpw_capture *c) {
    uint32_t count = 0;
    for (int i = 0; i < CPW_MAX_SLOTS; i++)
        if (c->slots[i] != NULL) count++;
    return count;
}

void cpw_capture_close(cpw_capture *c) {
    if (c == NULL) return;
    if (c->stream != NULL) {
        if (c->held != NULL && !cpw_is_lent(c, c->held)) cpw_give_back(c, c->held, 1);
        c->held = NULL;
        pw_stream_disconnect(c->stream);
        pw_stream_destroy(c->stream);
    }
    if (c->registry != NULL) {
        spa_hook_remove(&c->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)c->registry);
    }
    if (c->connection.core != NULL) spa_hook_remove(&c->core_listener);
    if (c->watch_source != NULL) pw_loop_destroy_source(c->connection.data_loop, c->watch_source);
    if (c->loop_source != NULL) pw_loop_destroy_source(c->connection.data_loop, c->loop_source);
    cpw_connection_close(&c->connection);
    // Lent buffers' mappings (all disowned by now) are the lender's to free (cpw_mapping_free).
    close(c->notify_fd);
    free(c);
}
