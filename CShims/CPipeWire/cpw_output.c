// CPipeWire: see cpw_output.h.
#include "cpw_output.h"
#include "cpipewire.h"
#include "cpw_connection.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/thread-loop.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/buffers.h>
#include <spa/buffer/meta.h>
#include <spa/utils/result.h>

/// The most formats one node offers (each an EnumFormat param).
#define CPW_OUTPUT_MAX_FORMATS 256
/// Room for one EnumFormat pod (five properties: ~150 bytes).
#define CPW_OUTPUT_POD_SIZE 256
/// The most links, nodes and clients of the session the node keeps track of (to name its consumers).
#define CPW_OUTPUT_MAX_LINKS 64
#define CPW_OUTPUT_MAX_NODES 512
#define CPW_OUTPUT_MAX_CLIENTS 256

/// A link of the session (registry global): which node's output feeds which node's input.
struct cpw_output_link { uint32_t id, output_node, input_node; };
/// A node of the session: its client and name.
struct cpw_output_node { uint32_t id, client; char name[128]; };
/// A client of the session: its process (pipewire.sec.pid).
struct cpw_output_client { uint32_t id; int32_t pid; };

struct cpw_output {
    struct cpw_connection connection;
    struct pw_thread_loop *thread_loop;
    struct spa_hook core_listener;
    struct pw_stream *stream;
    struct spa_hook stream_listener;
    cpw_output_format *formats;
    size_t format_count;
    int notify_fd;
    // Written on the loop's thread under its lock; read under it (cpw_output_get_status).
    cpw_output_status status;
    // The buffer between cpw_output_begin and cpw_output_end (the lock held meanwhile).
    struct pw_buffer *pending;
    // The session's links, nodes and clients as the registry announces them (loop thread, lock).
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct cpw_output_link links[CPW_OUTPUT_MAX_LINKS];
    size_t link_count;
    struct cpw_output_node nodes[CPW_OUTPUT_MAX_NODES];
    size_t node_count;
    struct cpw_output_client clients[CPW_OUTPUT_MAX_CLIENTS];
    size_t client_count;
    // The core sync that ends the first listing of the registry, and whether its done came.
    int sync_seq;
    int synced;
};

static void notify(struct cpw_output *o) {
    o->status.changes++;
    if (o->notify_fd >= 0) {
        uint64_t one = 1;
        if (write(o->notify_fd, &one, sizeof one) < 0) { /* already signalled (counter full) */ }
    }
    pw_thread_loop_signal(o->thread_loop, false);
}

static void fail(struct cpw_output *o, const char *why) {
    if (o->status.state == CPW_STATE_ENDED) return;
    o->status.state = CPW_STATE_ENDED;
    snprintf(o->status.error, sizeof o->status.error, "%s", why ? why : "the stream ended");
    notify(o);
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct cpw_output *o = data;
    if (id != PW_ID_CORE && res != -EPIPE) return;
    char text[200];
    snprintf(text, sizeof text, "PipeWire: %s (%s)", message ? message : "error", spa_strerror(res));
    fail(o, text);
}

static void on_core_done(void *data, uint32_t id, int seq);

static const struct pw_core_events cpw_output_core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
    .done = on_core_done,
};

static void on_state_changed(void *data, enum pw_stream_state old, enum pw_stream_state state, const char *error) {
    (void)old;
    struct cpw_output *o = data;
    if (o->status.state == CPW_STATE_ENDED) return;
    uint32_t id = pw_stream_get_node_id(o->stream);
    if (id != o->status.node_id && id != SPA_ID_INVALID) {
        o->status.node_id = id;
        notify(o);
    }
    switch (state) {
    case PW_STREAM_STATE_ERROR:
        fail(o, error ? error : "the stream failed");
        break;
    case PW_STREAM_STATE_UNCONNECTED:
        fail(o, "the node was disconnected from PipeWire (the daemon quit or removed it)");
        break;
    case PW_STREAM_STATE_PAUSED:
        if (o->status.state != CPW_STATE_PAUSED) { o->status.state = CPW_STATE_PAUSED; notify(o); }
        break;
    case PW_STREAM_STATE_STREAMING:
        if (o->status.state != CPW_STATE_STREAMING) { o->status.state = CPW_STATE_STREAMING; notify(o); }
        break;
    default:
        break;
    }
}

// A consumer's link fixed the format (or, NULL, the format was cleared: the node idle and
// suspended, or before a new negotiation). The node answers with the buffers it wants: 2 to 8
// (one with the owner while it copies, one or more with the consumers), one block of exactly one
// tightly packed frame, in memfd (PipeWire allocates it; the stream maps it: MAP_BUFFERS), with
// the header meta that carries the timestamp and sequence.
static void on_param_changed(void *data, uint32_t id, const struct spa_pod *param) {
    struct cpw_output *o = data;
    if (id != SPA_PARAM_Format) return;
    uint32_t negotiated = UINT32_MAX;
    struct spa_video_info_raw info = {0};
    uint32_t media_type, media_subtype;
    if (param != NULL && spa_format_parse(param, &media_type, &media_subtype) >= 0 && media_type == SPA_MEDIA_TYPE_video
        && media_subtype == SPA_MEDIA_SUBTYPE_raw && spa_format_video_raw_parse(param, &info) >= 0) {
        for (size_t i = 0; i < o->format_count; i++) {
            const cpw_output_format *f = &o->formats[i];
            if (f->spa_format == info.format && f->width == info.size.width && f->height == info.size.height) {
                negotiated = (uint32_t)i;
                break;
            }
        }
    }
    if (negotiated != o->status.negotiated) {
        o->status.negotiated = negotiated;
        notify(o);
    }
    // Not one of ours (cannot happen: a link's format is one of the node's EnumFormat params):
    // no buffers asked for, no frame sent.
    if (param == NULL || negotiated == UINT32_MAX) return;
    const cpw_output_format *f = &o->formats[negotiated];
    uint8_t storage[512];
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
    const struct spa_pod *params[2];
    params[0] = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamBuffers, SPA_PARAM_Buffers,
        SPA_PARAM_BUFFERS_buffers, SPA_POD_CHOICE_RANGE_Int(4, 2, 8),
        SPA_PARAM_BUFFERS_blocks, SPA_POD_Int(1),
        SPA_PARAM_BUFFERS_size, SPA_POD_Int(f->frame_size),
        SPA_PARAM_BUFFERS_stride, SPA_POD_Int(f->stride),
        SPA_PARAM_BUFFERS_dataType, SPA_POD_CHOICE_FLAGS_Int(1 << SPA_DATA_MemFd));
    params[1] = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_ParamMeta, SPA_PARAM_Meta,
        SPA_PARAM_META_type, SPA_POD_Id(SPA_META_Header),
        SPA_PARAM_META_size, SPA_POD_Int(sizeof(struct spa_meta_header)));
    pw_stream_update_params(o->stream, params, 2);
}

static void on_add_buffer(void *data, struct pw_buffer *buffer) {
    (void)buffer;
    struct cpw_output *o = data;
    o->status.buffers++;
    notify(o);
}

static void on_remove_buffer(void *data, struct pw_buffer *buffer) {
    struct cpw_output *o = data;
    if (o->pending == buffer) o->pending = NULL;  // cannot happen: begin holds the lock until end
    if (o->status.buffers > 0) o->status.buffers--;
    notify(o);
}

static const struct pw_stream_events cpw_output_stream_events = {
    PW_VERSION_STREAM_EVENTS,
    .state_changed = on_state_changed,
    .param_changed = on_param_changed,
    .add_buffer = on_add_buffer,
    .remove_buffer = on_remove_buffer,
};


static uint32_t uint_property(const struct spa_dict *props, const char *key) {
    const char *value = props != NULL ? spa_dict_lookup(props, key) : NULL;
    if (value == NULL) return SPA_ID_INVALID;
    char *end = NULL;
    unsigned long parsed = strtoul(value, &end, 10);
    return end != value ? (uint32_t)parsed : SPA_ID_INVALID;
}

// Links, nodes and clients: what names the node's consumers (a link from our node to a node,
// that node's client, its process) and what tells whether our node's name is taken.
static void on_registry_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                               const struct spa_dict *props) {
    (void)permissions; (void)version;
    struct cpw_output *o = data;
    if (strcmp(type, PW_TYPE_INTERFACE_Link) == 0) {
        if (o->link_count == CPW_OUTPUT_MAX_LINKS) return;
        struct cpw_output_link *l = &o->links[o->link_count++];
        l->id = id;
        l->output_node = uint_property(props, PW_KEY_LINK_OUTPUT_NODE);
        l->input_node = uint_property(props, PW_KEY_LINK_INPUT_NODE);
        if (l->output_node == o->status.node_id && o->status.node_id != SPA_ID_INVALID) notify(o);
    } else if (strcmp(type, PW_TYPE_INTERFACE_Node) == 0) {
        if (o->node_count == CPW_OUTPUT_MAX_NODES) return;
        struct cpw_output_node *n = &o->nodes[o->node_count++];
        n->id = id;
        n->client = uint_property(props, PW_KEY_CLIENT_ID);
        const char *name = props != NULL ? spa_dict_lookup(props, PW_KEY_NODE_NAME) : NULL;
        snprintf(n->name, sizeof n->name, "%s", name ? name : "");
    } else if (strcmp(type, PW_TYPE_INTERFACE_Client) == 0) {
        if (o->client_count == CPW_OUTPUT_MAX_CLIENTS) return;
        struct cpw_output_client *c = &o->clients[o->client_count++];
        c->id = id;
        uint32_t pid = uint_property(props, PW_KEY_SEC_PID);
        c->pid = pid == SPA_ID_INVALID ? 0 : (int32_t)pid;
    }
}

static void on_registry_global_remove(void *data, uint32_t id) {
    struct cpw_output *o = data;
    for (size_t i = 0; i < o->link_count; i++) {
        if (o->links[i].id != id) continue;
        int ours = o->links[i].output_node == o->status.node_id;
        o->links[i] = o->links[--o->link_count];
        if (ours) notify(o);
        return;
    }
    for (size_t i = 0; i < o->node_count; i++) {
        if (o->nodes[i].id == id) { o->nodes[i] = o->nodes[--o->node_count]; return; }
    }
    for (size_t i = 0; i < o->client_count; i++) {
        if (o->clients[i].id == id) { o->clients[i] = o->clients[--o->client_count]; return; }
    }
}

static const struct pw_registry_events cpw_output_registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_registry_global,
    .global_remove = on_registry_global_remove,
};

static void on_core_done(void *data, uint32_t id, int seq) {
    struct cpw_output *o = data;
    if (id == PW_ID_CORE && seq == o->sync_seq) {
        o->synced = 1;
        pw_thread_loop_signal(o->thread_loop, false);
    }
}

int cpw_output_get_consumers(cpw_output *o, cpw_output_consumer *consumers, size_t capacity) {
    pw_thread_loop_lock(o->thread_loop);
    int count = 0;
    for (size_t i = 0; i < o->link_count && (size_t)count < capacity; i++) {
        const struct cpw_output_link *l = &o->links[i];
        if (l->output_node != o->status.node_id || o->status.node_id == SPA_ID_INVALID) continue;
        cpw_output_consumer *c = &consumers[count++];
        memset(c, 0, sizeof *c);
        c->link_id = l->id;
        c->node_id = l->input_node;
        for (size_t n = 0; n < o->node_count; n++) {
            if (o->nodes[n].id != l->input_node) continue;
            snprintf(c->node_name, sizeof c->node_name, "%s", o->nodes[n].name);
            for (size_t k = 0; k < o->client_count; k++) {
                if (o->clients[k].id == o->nodes[n].client) c->pid = o->clients[k].pid;
            }
        }
    }
    pw_thread_loop_unlock(o->thread_loop);
    return count;
}

int cpw_output_build_enum_format(const cpw_output_format *f, void *storage, size_t size) {
    struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, size);
    const struct spa_pod *pod = spa_pod_builder_add_object(&b,
        SPA_TYPE_OBJECT_Format, SPA_PARAM_EnumFormat,
        SPA_FORMAT_mediaType, SPA_POD_Id(SPA_MEDIA_TYPE_video),
        SPA_FORMAT_mediaSubtype, SPA_POD_Id(SPA_MEDIA_SUBTYPE_raw),
        SPA_FORMAT_VIDEO_format, SPA_POD_Id(f->spa_format),
        SPA_FORMAT_VIDEO_size, SPA_POD_Rectangle(&SPA_RECTANGLE(f->width, f->height)),
        SPA_FORMAT_VIDEO_framerate, SPA_POD_Fraction(&SPA_FRACTION(f->rate_num, f->rate_denom)));
    if (pod == NULL) return -1;
    return (int)SPA_POD_SIZE(pod);
}

int cpw_output_enum_format_entries(const cpw_output_format *format, cpw_format_entry *entries, size_t capacity) {
    uint8_t storage[CPW_OUTPUT_POD_SIZE];
    if (cpw_output_build_enum_format(format, storage, sizeof storage) < 0) return -1;
    return cpw_format_entries_of_pod((const struct spa_pod *)storage, entries, capacity);
}

static void output_free(struct cpw_output *o) {
    if (o->thread_loop != NULL) {
        pw_thread_loop_lock(o->thread_loop);
        if (o->stream != NULL) {
            pw_stream_disconnect(o->stream);
            spa_hook_remove(&o->stream_listener);
            pw_stream_destroy(o->stream);
            o->stream = NULL;
        }
        if (o->registry != NULL) {
            spa_hook_remove(&o->registry_listener);
            pw_proxy_destroy((struct pw_proxy *)o->registry);
            o->registry = NULL;
        }
        if (o->connection.core != NULL) spa_hook_remove(&o->core_listener);
        pw_thread_loop_unlock(o->thread_loop);
        pw_thread_loop_stop(o->thread_loop);
        pw_thread_loop_destroy(o->thread_loop);
        o->thread_loop = NULL;
    }
    cpw_connection_close(&o->connection);
    free(o->formats);
    free(o);
}

cpw_output *cpw_output_open(int fd, const cpw_output_config *config, const cpw_output_format *formats, size_t count,
                            int notify_fd, int timeout_ms, char *error, size_t error_size) {
    if (count == 0 || count > CPW_OUTPUT_MAX_FORMATS) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "a node offers 1 to %d formats, not %zu", CPW_OUTPUT_MAX_FORMATS, count);
        return NULL;
    }
    struct cpw_output *o = calloc(1, sizeof *o);
    uint8_t *storage = calloc(count, CPW_OUTPUT_POD_SIZE);
    const struct spa_pod **params = calloc(count, sizeof *params);
    if (o == NULL || storage == NULL || params == NULL || (o->formats = malloc(count * sizeof *formats)) == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "out of memory");
        if (o != NULL) free(o->formats);
        free(o); free(storage); free(params);
        return NULL;
    }
    memcpy(o->formats, formats, count * sizeof *formats);
    o->format_count = count;
    o->notify_fd = notify_fd;
    o->status.node_id = SPA_ID_INVALID;
    o->status.negotiated = UINT32_MAX;
    o->status.state = CPW_STATE_CONNECTING;
    cpw_output *result = NULL;
    if (cpw_connection_open(&o->connection, fd, 0, error, error_size) < 0) goto done;
    o->thread_loop = pw_thread_loop_new_full(o->connection.loop, "md-pw-node", NULL);
    if (o->thread_loop == NULL) {
        snprintf(error, error_size, "pw_thread_loop_new failed: %s", strerror(errno));
        goto done;
    }
    pw_core_add_listener(o->connection.core, &o->core_listener, &cpw_output_core_events, o);
    // The registry first: its first listing (ended by a core sync) tells whether the name is taken.
    o->registry = pw_core_get_registry(o->connection.core, PW_VERSION_REGISTRY, 0);
    if (o->registry == NULL) {
        snprintf(error, error_size, "pw_core_get_registry failed: %s", strerror(errno));
        goto done;
    }
    pw_registry_add_listener(o->registry, &o->registry_listener, &cpw_output_registry_events, o);
    o->sync_seq = pw_core_sync(o->connection.core, PW_ID_CORE, 0);
    struct pw_properties *props = pw_properties_new(
        PW_KEY_MEDIA_TYPE, "Video", PW_KEY_MEDIA_CATEGORY, "Capture", PW_KEY_MEDIA_CLASS, "Video/Source",
        PW_KEY_MEDIA_ROLE, "Camera", PW_KEY_NODE_NAME, config->node_name,
        PW_KEY_NODE_DESCRIPTION, config->node_description, NULL);
    if (props != NULL && config->marker_key != NULL)
        pw_properties_set(props, config->marker_key, config->marker_value ? config->marker_value : "true");
    o->stream = pw_stream_new(o->connection.core, config->node_description, props);
    if (o->stream == NULL) {
        snprintf(error, error_size, "pw_stream_new failed: %s", strerror(errno));
        goto done;
    }
    pw_stream_add_listener(o->stream, &o->stream_listener, &cpw_output_stream_events, o);
    for (size_t i = 0; i < count; i++) {
        uint8_t *pod = storage + i * CPW_OUTPUT_POD_SIZE;
        if (cpw_output_build_enum_format(&formats[i], pod, CPW_OUTPUT_POD_SIZE) < 0) {
            snprintf(error, error_size, "the EnumFormat param of format %zu did not fit", i);
            goto done;
        }
        params[i] = (const struct spa_pod *)pod;
    }
    if (pw_thread_loop_start(o->thread_loop) < 0) {
        snprintf(error, error_size, "pw_thread_loop_start failed: %s", strerror(errno));
        goto done;
    }
    pw_thread_loop_lock(o->thread_loop);
    struct timespec deadline;
    pw_thread_loop_get_time(o->thread_loop, &deadline, (int64_t)timeout_ms * SPA_NSEC_PER_MSEC);
    // Until the registry listed the session (or PipeWire failed, or the time ran out).
    while (!o->synced && o->status.state != CPW_STATE_ENDED) {
        if (pw_thread_loop_timed_wait_full(o->thread_loop, &deadline) == -ETIMEDOUT) break;
    }
    if (!o->synced) {
        snprintf(error, error_size, "%s", o->status.state == CPW_STATE_ENDED ? o->status.error
                 : "PipeWire did not make the node within the time given (no answer to the registry's listing)");
        pw_thread_loop_unlock(o->thread_loop);
        goto done;
    }
    // PipeWire itself lets two nodes share a name; consumers' targets (and people) could not
    // tell them apart, so a name in use is refused here.
    for (size_t i = 0; i < o->node_count; i++) {
        if (strcmp(o->nodes[i].name, config->node_name) != 0) continue;
        int32_t pid = 0;
        for (size_t k = 0; k < o->client_count; k++) {
            if (o->clients[k].id == o->nodes[i].client) pid = o->clients[k].pid;
        }
        snprintf(error, error_size, "name taken: node %u of process %d is named %s", o->nodes[i].id, pid, config->node_name);
        pw_thread_loop_unlock(o->thread_loop);
        goto done;
    }
    // A driver: the node starts each graph cycle itself, when the owner queues a frame (a video
    // source's pace is its own). Not AUTOCONNECT: consumers link to it, it links to nothing.
    int connected = pw_stream_connect(o->stream, PW_DIRECTION_OUTPUT, PW_ID_ANY,
                                      PW_STREAM_FLAG_DRIVER | PW_STREAM_FLAG_MAP_BUFFERS, params, (uint32_t)count);
    if (connected < 0) {
        snprintf(error, error_size, "pw_stream_connect failed: %s", spa_strerror(connected));
        pw_thread_loop_unlock(o->thread_loop);
        goto done;
    }
    // Until PipeWire made the node (its id known), refused it, or the time ran out.
    while (o->status.state != CPW_STATE_ENDED && (o->status.node_id == SPA_ID_INVALID || o->status.state == CPW_STATE_CONNECTING)) {
        if (pw_thread_loop_timed_wait_full(o->thread_loop, &deadline) == -ETIMEDOUT) break;
    }
    int made = o->status.state != CPW_STATE_ENDED && o->status.node_id != SPA_ID_INVALID;
    if (!made) {
        snprintf(error, error_size, "%s", o->status.state == CPW_STATE_ENDED ? o->status.error
                 : "PipeWire did not make the node within the time given");
    }
    pw_thread_loop_unlock(o->thread_loop);
    if (made) result = o;
done:
    free(storage);
    free(params);
    if (result == NULL) output_free(o);
    return result;
}

void cpw_output_get_status(cpw_output *o, cpw_output_status *status) {
    pw_thread_loop_lock(o->thread_loop);
    *status = o->status;
    pw_thread_loop_unlock(o->thread_loop);
}

int cpw_output_begin(cpw_output *o, uint32_t format, cpw_output_buffer *buffer) {
    pw_thread_loop_lock(o->thread_loop);
    if (o->status.state == CPW_STATE_ENDED) {
        pw_thread_loop_unlock(o->thread_loop);
        return -1;
    }
    if (o->status.state == CPW_STATE_STREAMING && o->status.negotiated != UINT32_MAX && o->status.negotiated != format) {
        pw_thread_loop_unlock(o->thread_loop);
        return 2;
    }
    struct pw_buffer *b = NULL;
    if (o->status.state == CPW_STATE_STREAMING && o->status.negotiated != UINT32_MAX)
        b = pw_stream_dequeue_buffer(o->stream);
    if (b == NULL) {
        pw_thread_loop_unlock(o->thread_loop);
        return 0;
    }
    struct spa_data *d = b->buffer->n_datas > 0 ? &b->buffer->datas[0] : NULL;
    if (d == NULL || d->data == NULL || d->chunk == NULL) {
        if (d != NULL && d->chunk != NULL) d->chunk->size = 0;
        pw_stream_queue_buffer(o->stream, b);
        pw_thread_loop_unlock(o->thread_loop);
        return 0;
    }
    o->pending = b;
    buffer->data = d->data;
    buffer->capacity = d->maxsize;
    buffer->format = o->status.negotiated;
    return 1;
}

void cpw_output_end(cpw_output *o, uint32_t size, int64_t pts, uint64_t seq) {
    struct pw_buffer *b = o->pending;
    o->pending = NULL;
    if (b != NULL) {
        struct spa_data *d = &b->buffer->datas[0];
        const cpw_output_format *f = o->status.negotiated < o->format_count ? &o->formats[o->status.negotiated] : NULL;
        d->chunk->offset = 0;
        d->chunk->size = size <= d->maxsize ? size : d->maxsize;
        d->chunk->stride = f != NULL ? (int32_t)f->stride : 0;
        d->chunk->flags = size == 0 ? SPA_CHUNK_FLAG_CORRUPTED : 0;
        struct spa_meta_header *h = spa_buffer_find_meta_data(b->buffer, SPA_META_Header, sizeof *h);
        if (h != NULL) {
            h->pts = pts;
            h->flags = size == 0 ? SPA_META_HEADER_FLAG_CORRUPTED : 0;
            h->seq = seq;
            h->dts_offset = 0;
        }
        pw_stream_queue_buffer(o->stream, b);
    }
    pw_thread_loop_unlock(o->thread_loop);
}

void cpw_output_close(cpw_output *o) {
    if (o != NULL) output_free(o);
}
