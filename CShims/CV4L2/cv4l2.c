#include "cv4l2.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>

int cv4l2_ext_controls(int fd, unsigned long request, uint32_t which, uint32_t count, const uint32_t *ids,
                       int64_t *values, void *const *payloads, const uint32_t *payload_sizes, uint32_t *error_index) {
    struct v4l2_ext_control *controls = calloc(count ? count : 1, sizeof *controls);
    if (!controls) { errno = ENOMEM; return -1; }
    for (uint32_t i = 0; i < count; i++) {
        controls[i].id = ids[i];
        if (payloads && payloads[i]) {
            controls[i].size = payload_sizes[i];
            controls[i].ptr = payloads[i];
        } else {
            controls[i].value64 = values[i];
        }
    }
    struct v4l2_ext_controls request_block = {.which = which, .count = count, .controls = controls};
    int result;
    do { result = ioctl(fd, request, &request_block); } while (result < 0 && errno == EINTR);
    int saved = errno;
    *error_index = request_block.error_idx;
    for (uint32_t i = 0; i < count; i++)
        if (!(payloads && payloads[i])) values[i] = controls[i].value64;
    free(controls);
    errno = saved;
    return result < 0 ? -1 : 0;
}

int cv4l2_query_menu(int fd, uint32_t id, uint32_t index, char name[32], int64_t *value) {
    struct v4l2_querymenu entry = {.id = id, .index = index};
    int result;
    do { result = ioctl(fd, VIDIOC_QUERYMENU, &entry); } while (result < 0 && errno == EINTR);
    if (result < 0) return -1;
    memcpy(name, entry.name, sizeof entry.name);
    name[31] = 0;
    *value = entry.value;
    return 0;
}

int cv4l2_dequeue_control_event(int fd, struct cv4l2_control_event *event) {
    struct v4l2_event raw;
    memset(&raw, 0, sizeof raw);
    int result;
    do { result = ioctl(fd, VIDIOC_DQEVENT, &raw); } while (result < 0 && errno == EINTR);
    if (result < 0) return -1;
    if (raw.type != V4L2_EVENT_CTRL) return 0;
    *event = (struct cv4l2_control_event){
        .id = raw.id, .changes = raw.u.ctrl.changes, .type = raw.u.ctrl.type, .flags = raw.u.ctrl.flags,
        .value = raw.u.ctrl.type == V4L2_CTRL_TYPE_INTEGER64 ? raw.u.ctrl.value64 : raw.u.ctrl.value,
        .minimum = raw.u.ctrl.minimum, .maximum = raw.u.ctrl.maximum, .step = raw.u.ctrl.step,
        .default_value = raw.u.ctrl.default_value,
    };
    return 1;
}
