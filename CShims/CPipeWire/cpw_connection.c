// CPipeWire: see cpw_connection.h.
#include "cpw_connection.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static pthread_once_t cpw_init_once = PTHREAD_ONCE_INIT;
static void cpw_init(void) { pw_init(NULL, NULL); }

int cpw_connection_open(struct cpw_connection *c, int fd, int own_data_loop, char *error, size_t error_size) {
    pthread_once(&cpw_init_once, cpw_init);
    *c = (struct cpw_connection){0};
    c->loop = pw_loop_new(NULL);
    if (c->loop == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "pw_loop_new failed: %s", strerror(errno));
        return -1;
    }
    // Video buffers are not locked into memory (mem.allow-mlock, on by default): that is for
    // real-time audio, and a camera's or a screen cast's buffer in plain memory is mapped a
    // second time to be lent (cpw_mapping_alias), which a locked mapping would count twice
    // against RLIMIT_MEMLOCK (the second mapping then refused: those frames copied).
    c->context = pw_context_new(c->loop, pw_properties_new("mem.allow-mlock", "false", NULL), 0);
    if (c->context == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "pw_context_new failed: %s", strerror(errno));
        cpw_connection_close(c);
        return -1;
    }
    if (own_data_loop) {
        // pw_context_new started the data loop's thread; it leaves the loop on stopping.
        struct pw_data_loop *data_loop = pw_context_get_data_loop(c->context);
        pw_data_loop_stop(data_loop);
        c->data_loop = pw_data_loop_get_loop(data_loop);
    }
    c->core = fd >= 0 ? pw_context_connect_fd(c->context, fd, NULL, 0) : pw_context_connect(c->context, NULL, 0);
    if (c->core == NULL) {
        snprintf(error, error_size, "%s failed: %s", fd >= 0 ? "pw_context_connect_fd" : "pw_context_connect",
                 strerror(errno));
        cpw_connection_close(c);
        return -1;
    }
    return 0;
}

void cpw_connection_close(struct cpw_connection *c) {
    if (c->core != NULL) pw_core_disconnect(c->core);
    if (c->context != NULL) pw_context_destroy(c->context);
    if (c->loop != NULL) pw_loop_destroy(c->loop);
    *c = (struct cpw_connection){0};
}

int cpw_connection_iterate(struct cpw_connection *c, int timeout_ms) { return cpw_loop_run_once(c->loop, timeout_ms); }

int cpw_loop_run_once(struct pw_loop *loop, int timeout_ms) {
    pw_loop_enter(loop);
    int result = pw_loop_iterate(loop, timeout_ms);
    pw_loop_leave(loop);
    return result;
}
