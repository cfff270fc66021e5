// CPipeWire: see cpw_watch.h.
#include "cpw_watch.h"
#include "cpw_connection.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct cpw_watch {
    struct cpw_connection connection;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_hook core_listener;
    // Ids of the Video/Source nodes present, so a removal of anything else is not reported.
    uint32_t *nodes;
    size_t node_count, node_capacity;
    // Pending events, oldest first.
    cpw_watch_event *events;
    size_t event_count, event_capacity;
    int lost;
};

static void push(struct cpw_watch *w, uint32_t action, uint32_t id) {
    if (w->event_count == w->event_capacity) {
        size_t capacity = w->event_capacity ? w->event_capacity * 2 : 16;
        cpw_watch_event *grown = realloc(w->events, capacity * sizeof *grown);
        if (grown == NULL) return;  // out of memory: the event is lost, the watch goes on
        w->events = grown;
        w->event_capacity = capacity;
    }
    w->events[w->event_count++] = (cpw_watch_event){.action = action, .id = id};
}

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)permissions; (void)version;
    struct cpw_watch *w = data;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) != 0 || props == NULL) return;
    const char *media_class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
    if (media_class == NULL || strcmp(media_class, "Video/Source") != 0) return;
    if (w->node_count == w->node_capacity) {
        size_t capacity = w->node_capacity ? w->node_capacity * 2 : 16;
        uint32_t *grown = realloc(w->nodes, capacity * sizeof *grown);
        if (grown == NULL) return;
        w->nodes = grown;
        w->node_capacity = capacity;
    }
    w->nodes[w->node_count++] = id;
    push(w, CPW_WATCH_ADDED, id);
}

static void on_global_remove(void *data, uint32_t id) {
    struct cpw_watch *w = data;
    for (size_t i = 0; i < w->node_count; i++) {
        if (w->nodes[i] != id) continue;
        w->nodes[i] = w->nodes[--w->node_count];
        push(w, CPW_WATCH_REMOVED, id);
        return;
    }
}

static const struct pw_registry_events registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
    .global_remove = on_global_remove,
};

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq; (void)message;
    struct cpw_watch *w = data;
    if (id == PW_ID_CORE && res < 0 && !w->lost) {
        w->lost = 1;
        push(w, CPW_WATCH_LOST, 0);
    }
}

static const struct pw_core_events core_events = {
    PW_VERSION_CORE_EVENTS,
    .error = on_core_error,
};

cpw_watch *cpw_watch_open(char *error, size_t error_size) {
    struct cpw_watch *w = calloc(1, sizeof *w);
    if (w == NULL) { snprintf(error, error_size, "out of memory"); return NULL; }
    if (cpw_connection_open(&w->connection, -1, 0, error, error_size) != 0) { free(w); return NULL; }
    pw_core_add_listener(w->connection.core, &w->core_listener, &core_events, w);
    w->registry = pw_core_get_registry(w->connection.core, PW_VERSION_REGISTRY, 0);
    if (w->registry == NULL) {
        snprintf(error, error_size, "pw_core_get_registry failed: %s", strerror(errno));
        cpw_watch_close(w);
        return NULL;
    }
    pw_registry_add_listener(w->registry, &w->registry_listener, &registry_events, w);
    return w;
}

int cpw_watch_fd(const cpw_watch *w) { return pw_loop_get_fd(w->connection.loop); }

int cpw_watch_iterate(cpw_watch *w) {
    int result = cpw_connection_iterate(&w->connection, 0);
    return result < 0 && result != -EINTR && result != -EAGAIN ? result : 0;
}

int cpw_watch_next(cpw_watch *w, cpw_watch_event *event) {
    if (w->event_count == 0) return 0;
    *event = w->events[0];
    memmove(w->events, w->events + 1, (w->event_count - 1) * sizeof *w->events);
    w->event_count--;
    return 1;
}

void cpw_watch_close(cpw_watch *w) {
    if (w == NULL) return;
    if (w->registry != NULL) {
        spa_hook_remove(&w->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)w->registry);
    }
    if (w->connection.core != NULL) spa_hook_remove(&w->core_listener);
    cpw_connection_close(&w->connection);
    free(w->nodes);
    free(w->events);
    free(w);
}
