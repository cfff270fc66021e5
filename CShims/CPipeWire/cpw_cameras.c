// CPipeWire: see cpw_cameras.h.
#include "cpw_cameras.h"
#include "cpw_connection.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <spa/debug/types.h>
#include <spa/param/video/format-utils.h>
#include <spa/param/video/raw-types.h>
#include <spa/param/format-types.h>
#include <spa/pod/iter.h>
#include <spa/pod/parser.h>
#include <spa/param/props.h>
#include <stdbool.h>
#include <spa/utils/result.h>

struct cpw_camera {
    uint32_t id;
    struct pw_proxy *proxy;
    struct spa_hook listener;
    struct pw_properties *props;
    cpw_format_entry *formats;
    size_t format_count, format_capacity;
    cpw_control *controls;
    size_t control_count, control_capacity;
    int failed; // out of memory while collecting
};

struct cpw_cameras {
    struct cpw_connection connection;
    struct pw_registry *registry;
    struct spa_hook registry_listener;
    struct spa_hook core_listener;
    struct cpw_camera **cameras;
    size_t count, capacity;
    int pending_seq; // the core sync awaited
    int done;        // the awaited sync's done arrived
    char error[256];
    char server_version[32]; // the server's version (its core info), "" until it came
};

#define FOURCC(a, b, c, d) ((uint32_t)(a) | ((uint32_t)(b) << 8) | ((uint32_t)(c) << 16) | ((uint32_t)(d) << 24))

const char *cpw_cameras_server_version(const cpw_cameras *cameras) { return cameras->server_version; }

uint32_t cpw_spa_format_byte_reversed(uint32_t spa_format) {
    switch (spa_format) {
    case SPA_VIDEO_FORMAT_RGB: return SPA_VIDEO_FORMAT_BGR;
    case SPA_VIDEO_FORMAT_BGR: return SPA_VIDEO_FORMAT_RGB;
    case SPA_VIDEO_FORMAT_xRGB: return SPA_VIDEO_FORMAT_BGRx;
    case SPA_VIDEO_FORMAT_BGRx: return SPA_VIDEO_FORMAT_xRGB;
    case SPA_VIDEO_FORMAT_xBGR: return SPA_VIDEO_FORMAT_RGBx;
    case SPA_VIDEO_FORMAT_RGBx: return SPA_VIDEO_FORMAT_xBGR;
    case SPA_VIDEO_FORMAT_ARGB: return SPA_VIDEO_FORMAT_BGRA;
    case SPA_VIDEO_FORMAT_BGRA: return SPA_VIDEO_FORMAT_ARGB;
    case SPA_VIDEO_FORMAT_ABGR: return SPA_VIDEO_FORMAT_RGBA;
    case SPA_VIDEO_FORMAT_RGBA: return SPA_VIDEO_FORMAT_ABGR;
    default: return spa_format;
    }
}

uint32_t cpw_fourcc_of_spa_format(uint32_t spa_format) {
    switch (spa_format) {
    case SPA_VIDEO_FORMAT_I420: return FOURCC('Y', 'U', '1', '2');
    case SPA_VIDEO_FORMAT_YV12: return FOURCC('Y', 'V', '1', '2');
    case SPA_VIDEO_FORMAT_YUY2: return FOURCC('Y', 'U', 'Y', 'V');
    case SPA_VIDEO_FORMAT_UYVY: return FOURCC('U', 'Y', 'V', 'Y');
    case SPA_VIDEO_FORMAT_YVYU: return FOURCC('Y', 'V', 'Y', 'U');
    case SPA_VIDEO_FORMAT_VYUY: return FOURCC('V', 'Y', 'U', 'Y');
    case SPA_VIDEO_FORMAT_Y42B: return FOURCC('4', '2', '2', 'P');
    case SPA_VIDEO_FORMAT_Y41B: return FOURCC('4', '1', '1', 'P');
    case SPA_VIDEO_FORMAT_NV12: return FOURCC('N', 'V', '1', '2');
    case SPA_VIDEO_FORMAT_NV21: return FOURCC('N', 'V', '2', '1');
    case SPA_VIDEO_FORMAT_NV16: return FOURCC('N', 'V', '1', '6');
    case SPA_VIDEO_FORMAT_NV61: return FOURCC('N', 'V', '6', '1');
    case SPA_VIDEO_FORMAT_NV24: return FOURCC('N', 'V', '2', '4');
    case SPA_VIDEO_FORMAT_GRAY8: return FOURCC('G', 'R', 'E', 'Y');
    case SPA_VIDEO_FORMAT_GRAY16_LE: return FOURCC('Y', '1', '6', ' ');
    case SPA_VIDEO_FORMAT_GRAY16_BE: return FOURCC('Y', '1', '6', ' ') | (1u << 31); // V4L2's big-endian flag
    case SPA_VIDEO_FORMAT_RGB: return FOURCC('R', 'G', 'B', '3');
    case SPA_VIDEO_FORMAT_BGR: return FOURCC('B', 'G', 'R', '3');
    // SPA names 32-bit layouts by byte order, V4L2 by the little-endian word.
    case SPA_VIDEO_FORMAT_BGRx: return FOURCC('X', 'R', '2', '4');
    case SPA_VIDEO_FORMAT_RGBx: return FOURCC('X', 'B', '2', '4');
    case SPA_VIDEO_FORMAT_xRGB: return FOURCC('B', 'X', '2', '4');
    case SPA_VIDEO_FORMAT_xBGR: return FOURCC('R', 'X', '2', '4');
    case SPA_VIDEO_FORMAT_BGRA: return FOURCC('A', 'R', '2', '4');
    case SPA_VIDEO_FORMAT_RGBA: return FOURCC('A', 'B', '2', '4');
    case SPA_VIDEO_FORMAT_ARGB: return FOURCC('B', 'A', '2', '4');
    case SPA_VIDEO_FORMAT_ABGR: return FOURCC('R', 'A', '2', '4');
    case SPA_VIDEO_FORMAT_RGB16: return FOURCC('R', 'G', 'B', 'P');
    case SPA_VIDEO_FORMAT_RGB15: return FOURCC('R', 'G', 'B', 'O');
    default: return 0;
    }
}

uint32_t cpw_spa_format_of_fourcc(uint32_t fourcc) {
    for (const struct spa_type_info *info = spa_type_video_format; fourcc != 0 && info->name != NULL; info++) {
        if (cpw_fourcc_of_spa_format(info->type) == fourcc) return info->type;
    }
    return SPA_VIDEO_FORMAT_UNKNOWN;
}

uint32_t cpw_spa_format_named(const char *name) {
    uint32_t format = spa_debug_type_find_type_short(spa_type_video_format, name);
    return format == SPA_ID_INVALID ? SPA_VIDEO_FORMAT_UNKNOWN : format;
}

// The values of a property's pod (a plain value or a choice) as an array of `size`-byte
// items; `*choice` is the choice type (SPA_CHOICE_None for a plain value). NULL when the pod
// does not hold items of `type`.
static const void *values_of(const struct spa_pod *pod, uint32_t type, uint32_t size, uint32_t *count, uint32_t *choice) {
    const struct spa_pod *first = spa_pod_get_values(pod, count, choice);
    if (first == NULL || first->type != type || first->size < size || *count == 0) return NULL;
    return SPA_POD_BODY_CONST(first);
}

// The alternatives of an Enum choice (after its default), or the one value of anything else.
static void alternatives(uint32_t count, uint32_t choice, uint32_t *from, uint32_t *to) {
    if (choice == SPA_CHOICE_Enum && count > 1) {
        *from = 1;
        *to = count;
    } else {
        *from = 0;
        *to = 1;
    }
}

static int append(struct cpw_camera *camera, const cpw_format_entry *entry) {
    if (camera->format_count == camera->format_capacity) {
        size_t capacity = camera->format_capacity ? camera->format_capacity * 2 : 16;
        cpw_format_entry *grown = realloc(camera->formats, capacity * sizeof *grown);
        if (grown == NULL) return -1;
        camera->formats = grown;
        camera->format_capacity = capacity;
    }
    camera->formats[camera->format_count++] = *entry;
    return 0;
}

// One EnumFormat param into entries: one per format and size alternative, sharing the rates.
static void add_enum_format(struct cpw_camera *camera, const struct spa_pod *param) {
    uint32_t media_type, media_subtype;
    if (spa_format_parse(param, &media_type, &media_subtype) < 0 || media_type != SPA_MEDIA_TYPE_video) return;
    cpw_format_entry base = {0};
    switch (media_subtype) {
    case SPA_MEDIA_SUBTYPE_raw: base.subtype = CPW_SUBTYPE_RAW; break;
    case SPA_MEDIA_SUBTYPE_mjpg: base.subtype = CPW_SUBTYPE_MJPG; snprintf(base.format_name, sizeof base.format_name, "mjpg"); break;
    case SPA_MEDIA_SUBTYPE_h264: base.subtype = CPW_SUBTYPE_H264; snprintf(base.format_name, sizeof base.format_name, "h264"); break;
    default: {
        base.subtype = CPW_SUBTYPE_OTHER;
        const char *name = spa_debug_type_find_short_name(spa_type_media_subtype, media_subtype);
        snprintf(base.format_name, sizeof base.format_name, "%s", name ? name : "unknown");
        break;
    }
    }
    const struct spa_pod_object *object = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *format_prop = spa_pod_object_find_prop(object, NULL, SPA_FORMAT_VIDEO_format);
    const struct spa_pod_prop *size_prop = spa_pod_object_find_prop(object, NULL, SPA_FORMAT_VIDEO_size);
    const struct spa_pod_prop *rate_prop = spa_pod_object_find_prop(object, NULL, SPA_FORMAT_VIDEO_framerate);

    // Rates, shared by every entry of this param.
    if (rate_prop != NULL) {
        uint32_t count, choice;
        const struct spa_fraction *rates = values_of(&rate_prop->value, SPA_TYPE_Fraction, sizeof *rates, &count, &choice);
        if (rates != NULL && (choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && count >= 3) {
            base.rate_kind = CPW_RATES_RANGE;
            base.rate_count = 2;
            base.rates[0] = (cpw_rate){rates[1].num, rates[1].denom};
            base.rates[1] = (cpw_rate){rates[2].num, rates[2].denom};
        } else if (rates != NULL) {
            uint32_t from, to;
            alternatives(count, choice, &from, &to);
            base.rate_kind = CPW_RATES_LIST;
            for (uint32_t i = from; i < to; i++) {
                if (base.rate_count == CPW_MAX_RATES) { base.rates_cut = 1; break; }
                base.rates[base.rate_count++] = (cpw_rate){rates[i].num, rates[i].denom};
            }
        }
    }

    // Formats: raw video names one (or an Enum of them); encoded video has none.
    uint32_t format_count = 1, format_choice = SPA_CHOICE_None;
    const uint32_t *formats = NULL;
    if (base.subtype == CPW_SUBTYPE_RAW) {
        if (format_prop == NULL) return;
        formats = values_of(&format_prop->value, SPA_TYPE_Id, sizeof(uint32_t), &format_count, &format_choice);
        if (formats == NULL) return;
    }
    uint32_t format_from, format_to;
    alternatives(format_count, format_choice, &format_from, &format_to);

    uint32_t size_count = 0, size_choice = SPA_CHOICE_None;
    const struct spa_rectangle *sizes = size_prop == NULL ? NULL
        : values_of(&size_prop->value, SPA_TYPE_Rectangle, sizeof *sizes, &size_count, &size_choice);
    if (sizes == NULL) return;
    uint32_t size_from = 0, size_to = 1;
    if (size_choice == SPA_CHOICE_Range && size_count >= 3) {
        base.size_kind = CPW_SIZE_RANGE;
    } else if (size_choice == SPA_CHOICE_Step && size_count >= 4) {
        base.size_kind = CPW_SIZE_STEP;
    } else {
        alternatives(size_count, size_choice, &size_from, &size_to);
    }

    for (uint32_t f = format_from; f < format_to; f++) {
        cpw_format_entry entry = base;
        if (formats != NULL) {
            entry.spa_format = formats[f];
            entry.fourcc = cpw_fourcc_of_spa_format(formats[f]);
            const char *name = spa_debug_type_find_short_name(spa_type_video_format, formats[f]);
            snprintf(entry.format_name, sizeof entry.format_name, "%s", name ? name : "unknown");
        } else if (entry.subtype == CPW_SUBTYPE_MJPG) {
            entry.fourcc = FOURCC('M', 'J', 'P', 'G');
        } else if (entry.subtype == CPW_SUBTYPE_H264) {
            entry.fourcc = FOURCC('H', '2', '6', '4');
        }
        if (entry.size_kind != CPW_SIZE_FIXED) {
            entry.width = sizes[1].width; entry.height = sizes[1].height;
            entry.max_width = sizes[2].width; entry.max_height = sizes[2].height;
            if (entry.size_kind == CPW_SIZE_STEP) { entry.step_width = sizes[3].width; entry.step_height = sizes[3].height; }
            if (append(camera, &entry) < 0) camera->failed = 1;
            continue;
        }
        for (uint32_t s = size_from; s < size_to; s++) {
            entry.width = sizes[s].width;
            entry.height = sizes[s].height;
            if (append(camera, &entry) < 0) camera->failed = 1;
        }
    }
}

int cpw_format_entries_of_pod(const struct spa_pod *param, cpw_format_entry *entries, size_t capacity) {
    struct cpw_camera camera = {0};
    if (param == NULL || !spa_pod_is_object(param)) return 0;
    add_enum_format(&camera, param);
    size_t count = camera.format_count < capacity ? camera.format_count : capacity;
    if (count > 0) memcpy(entries, camera.formats, count * sizeof *entries);
    free(camera.formats);
    return camera.failed ? -1 : (int)count;
}

static cpw_control *control_with_id(struct cpw_camera *camera, uint32_t id) {
    for (size_t i = 0; i < camera->control_count; i++)
        if (camera->controls[i].id == id) return &camera->controls[i];
    return NULL;
}

// One PropInfo param into a control, if its type is one MediaDevices reads.
static void add_prop_info(struct cpw_camera *camera, const struct spa_pod *param) {
    const struct spa_pod_object *object = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *id_prop = spa_pod_object_find_prop(object, NULL, SPA_PROP_INFO_id);
    const struct spa_pod_prop *type_prop = spa_pod_object_find_prop(object, NULL, SPA_PROP_INFO_type);
    const struct spa_pod_prop *name_prop = spa_pod_object_find_prop(object, NULL, SPA_PROP_INFO_description);
    const struct spa_pod_prop *labels_prop = spa_pod_object_find_prop(object, NULL, SPA_PROP_INFO_labels);
    uint32_t id;
    if (id_prop == NULL || type_prop == NULL || spa_pod_get_id(&id_prop->value, &id) < 0) return;
    if (control_with_id(camera, id) != NULL) return;
    cpw_control control = {.id = id};
    const char *name = NULL;
    if (name_prop != NULL && spa_pod_get_string(&name_prop->value, &name) == 0 && name != NULL)
        snprintf(control.name, sizeof control.name, "%s", name);
    else
        snprintf(control.name, sizeof control.name, "control %u", id);
    uint32_t count, choice;
    const struct spa_pod *first = spa_pod_get_values(&type_prop->value, &count, &choice);
    if (first == NULL || count == 0) return;
    const void *values = SPA_POD_BODY_CONST(first);
    if (first->type == SPA_TYPE_Bool) {
        control.type = CPW_CONTROL_BOOL;
        control.minimum = 0; control.maximum = 1; control.step = 1;
        control.default_value = ((const int32_t *)values)[0] != 0;
    } else if (first->type == SPA_TYPE_Int && (choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && count >= 3) {
        const int32_t *v = values;
        control.type = CPW_CONTROL_INT;
        control.default_value = v[0]; control.minimum = v[1]; control.maximum = v[2];
        control.step = choice == SPA_CHOICE_Step && count >= 4 ? v[3] : 1;
    } else if (first->type == SPA_TYPE_Int && choice == SPA_CHOICE_Enum && count >= 2) {
        const int32_t *v = values;
        control.type = CPW_CONTROL_ENUM;
        control.default_value = v[0];
        control.minimum = v[1]; control.maximum = v[1]; control.step = 1;
        for (uint32_t i = 1; i < count && control.label_count < CPW_MAX_LABELS; i++) {
            if (v[i] < control.minimum) control.minimum = v[i];
            if (v[i] > control.maximum) control.maximum = v[i];
            control.labels[control.label_count].value = v[i];
            snprintf(control.labels[control.label_count].name, sizeof control.labels[0].name, "%d", v[i]);
            control.label_count++;
        }
        // Labels: a Struct of (Int value, String label) pairs.
        if (labels_prop != NULL && spa_pod_is_struct(&labels_prop->value)) {
            struct spa_pod_parser parser;
            struct spa_pod_frame frame;
            spa_pod_parser_pod(&parser, &labels_prop->value);
            if (spa_pod_parser_push_struct(&parser, &frame) == 0) {
                int32_t value;
                const char *label;
                while (spa_pod_parser_get_int(&parser, &value) == 0 && spa_pod_parser_get_string(&parser, &label) == 0) {
                    for (uint32_t i = 0; i < control.label_count; i++)
                        if (control.labels[i].value == value)
                            snprintf(control.labels[i].name, sizeof control.labels[i].name, "%s", label);
                }
            }
        }
    } else if (first->type == SPA_TYPE_Float && (choice == SPA_CHOICE_Range || choice == SPA_CHOICE_Step) && count >= 3) {
        const float *v = values;
        control.type = CPW_CONTROL_FLOAT;
        control.fdefault = v[0]; control.fminimum = v[1]; control.fmaximum = v[2];
    } else {
        return; // strings, plain values (the device path, its fd) and the rest: not controls
    }
    if (camera->control_count == camera->control_capacity) {
        size_t capacity = camera->control_capacity ? camera->control_capacity * 2 : 16;
        cpw_control *grown = realloc(camera->controls, capacity * sizeof *grown);
        if (grown == NULL) { camera->failed = 1; return; }
        camera->controls = grown;
        camera->control_capacity = capacity;
    }
    camera->controls[camera->control_count++] = control;
}

// The node's Props: the current value of each control (asked for after PropInfo, so it
// arrives after the controls are known).
static void add_props(struct cpw_camera *camera, const struct spa_pod *param) {
    const struct spa_pod_object *object = (const struct spa_pod_object *)param;
    const struct spa_pod_prop *prop;
    SPA_POD_OBJECT_FOREACH(object, prop) {
        cpw_control *control = control_with_id(camera, prop->key);
        if (control == NULL) continue;
        int32_t i;
        bool b;
        float f;
        if (control->type == CPW_CONTROL_BOOL && spa_pod_get_bool(&prop->value, &b) == 0) {
            control->value = b; control->has_value = 1;
        } else if (control->type == CPW_CONTROL_FLOAT && spa_pod_get_float(&prop->value, &f) == 0) {
            control->fvalue = f; control->has_value = 1;
        } else if (spa_pod_get_int(&prop->value, &i) == 0) {
            control->value = i; control->has_value = 1;
        }
    }
}

static void on_node_info(void *data, const struct pw_node_info *info) {
    struct cpw_camera *camera = data;
    if ((info->change_mask & PW_NODE_CHANGE_MASK_PROPS) && info->props != NULL) {
        if (camera->props == NULL) camera->props = pw_properties_new(NULL, NULL);
        if (camera->props == NULL) camera->failed = 1;
        else pw_properties_update(camera->props, info->props);
    }
}

static void on_node_param(void *data, int seq, uint32_t id, uint32_t index, uint32_t next, const struct spa_pod *param) {
    (void)seq; (void)index; (void)next;
    struct cpw_camera *camera = data;
    if (param == NULL || !spa_pod_is_object(param)) return;
    if (id == SPA_PARAM_EnumFormat) add_enum_format(camera, param);
    else if (id == SPA_PARAM_PropInfo) add_prop_info(camera, param);
    else if (id == SPA_PARAM_Props) add_props(camera, param);
}

static const struct pw_node_events cpw_camera_node_events = {
    PW_VERSION_NODE_EVENTS,
    .info = on_node_info,
    .param = on_node_param,
};

static void on_global(void *data, uint32_t id, uint32_t permissions, const char *type, uint32_t version,
                      const struct spa_dict *props) {
    (void)permissions; (void)version;
    struct cpw_cameras *cameras = data;
    if (strcmp(type, PW_TYPE_INTERFACE_Node) != 0 || props == NULL) return;
    const char *media_class = spa_dict_lookup(props, PW_KEY_MEDIA_CLASS);
    if (media_class == NULL || strcmp(media_class, "Video/Source") != 0) return;
    if (cameras->count == cameras->capacity) {
        size_t capacity = cameras->capacity ? cameras->capacity * 2 : 8;
        struct cpw_camera **grown = realloc(cameras->cameras, capacity * sizeof *grown);
        if (grown == NULL) { snprintf(cameras->error, sizeof cameras->error, "out of memory"); return; }
        cameras->cameras = grown;
        cameras->capacity = capacity;
    }
    struct cpw_camera *camera = calloc(1, sizeof *camera);
    if (camera == NULL) { snprintf(cameras->error, sizeof cameras->error, "out of memory"); return; }
    camera->id = id;
    camera->props = pw_properties_new_dict(props);
    camera->proxy = pw_registry_bind(cameras->registry, id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    cameras->cameras[cameras->count++] = camera;
    if (camera->proxy == NULL) { camera->failed = 1; return; }
    pw_node_add_listener((struct pw_node *)camera->proxy, &camera->listener, &cpw_camera_node_events, camera);
    pw_node_enum_params((struct pw_node *)camera->proxy, 0, SPA_PARAM_EnumFormat, 0, UINT32_MAX, NULL);
    pw_node_enum_params((struct pw_node *)camera->proxy, 0, SPA_PARAM_PropInfo, 0, UINT32_MAX, NULL);
    pw_node_enum_params((struct pw_node *)camera->proxy, 0, SPA_PARAM_Props, 0, UINT32_MAX, NULL);
}

static const struct pw_registry_events cpw_cameras_registry_events = {
    PW_VERSION_REGISTRY_EVENTS,
    .global = on_global,
};

static void on_core_done(void *data, uint32_t id, int seq) {
    struct cpw_cameras *cameras = data;
    if (id == PW_ID_CORE && seq == cameras->pending_seq) cameras->done = 1;
}

static void on_core_error(void *data, uint32_t id, int seq, int res, const char *message) {
    (void)seq;
    struct cpw_cameras *cameras = data;
    // A node that refuses its params (a camera another process holds) is not the session failing.
    if (id != PW_ID_CORE) return;
    snprintf(cameras->error, sizeof cameras->error, "PipeWire: %s (%s)", message ? message : "error", spa_strerror(res));
}

static void on_core_info(void *data, const struct pw_core_info *info) {
    struct cpw_cameras *cameras = data;
    if (info != NULL && info->version != NULL)
        snprintf(cameras->server_version, sizeof cameras->server_version, "%s", info->version);
}

static const struct pw_core_events cpw_cameras_core_events = {
    PW_VERSION_CORE_EVENTS,
    .info = on_core_info,
    .done = on_core_done,
    .error = on_core_error,
};

static int64_t now_ms(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000 + t.tv_nsec / 1000000;
}

// Asks the server for a round trip and runs the loop until it is done, the connection fails or
// `deadline` (ms, CLOCK_MONOTONIC) passes. 0 when done.
static int round_trip(struct cpw_cameras *cameras, int64_t deadline) {
    cameras->done = 0;
    cameras->pending_seq = pw_core_sync(cameras->connection.core, PW_ID_CORE, cameras->pending_seq);
    while (!cameras->done && cameras->error[0] == 0) {
        int64_t left = deadline - now_ms();
        if (left <= 0) {
            snprintf(cameras->error, sizeof cameras->error, "PipeWire did not answer within the time given");
            return -1;
        }
        int result = cpw_connection_iterate(&cameras->connection, (int)(left < 100 ? left : 100));
        if (result < 0 && result != -EINTR) {
            snprintf(cameras->error, sizeof cameras->error, "pw_loop_iterate failed: %s", spa_strerror(result));
            return -1;
        }
    }
    return cameras->error[0] == 0 ? 0 : -1;
}

// Drops the proxies and the connection; keeps what was collected.
static void disconnect(struct cpw_cameras *cameras) {
    for (size_t i = 0; i < cameras->count; i++) {
        struct cpw_camera *camera = cameras->cameras[i];
        if (camera->proxy != NULL) {
            spa_hook_remove(&camera->listener);
            pw_proxy_destroy(camera->proxy);
            camera->proxy = NULL;
        }
    }
    if (cameras->registry != NULL) {
        spa_hook_remove(&cameras->registry_listener);
        pw_proxy_destroy((struct pw_proxy *)cameras->registry);
        cameras->registry = NULL;
    }
    if (cameras->connection.core != NULL) spa_hook_remove(&cameras->core_listener);
    cpw_connection_close(&cameras->connection);
}

// Keeps only the nodes whose full properties say media.role "Camera" (portal screen casts and
// other video sources are not cameras).
static void keep_cameras(struct cpw_cameras *cameras) {
    size_t kept = 0;
    for (size_t i = 0; i < cameras->count; i++) {
        struct cpw_camera *camera = cameras->cameras[i];
        const char *role = camera->props ? pw_properties_get(camera->props, PW_KEY_MEDIA_ROLE) : NULL;
        if (role != NULL && strcmp(role, "Camera") == 0) {
            cameras->cameras[kept++] = camera;
        } else {
            pw_properties_free(camera->props);
            free(camera->formats);
            free(camera->controls);
            free(camera);
        }
    }
    cameras->count = kept;
}

cpw_cameras *cpw_cameras_read(int fd, int timeout_ms, char *error, size_t error_size) {
    struct cpw_cameras *cameras = calloc(1, sizeof *cameras);
    if (cameras == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "out of memory");
        return NULL;
    }
    if (cpw_connection_open(&cameras->connection, fd, 0, error, error_size) < 0) {
        free(cameras);
        return NULL;
    }
    int64_t deadline = now_ms() + timeout_ms;
    pw_core_add_listener(cameras->connection.core, &cameras->core_listener, &cpw_cameras_core_events, cameras);
    cameras->registry = pw_core_get_registry(cameras->connection.core, PW_VERSION_REGISTRY, 0);
    if (cameras->registry != NULL)
        pw_registry_add_listener(cameras->registry, &cameras->registry_listener, &cpw_cameras_registry_events, cameras);
    // First round trip: every global announced (and each node bound, its params asked for);
    // the second: every node's info and params delivered.
    int result = cameras->registry == NULL ? -1 : round_trip(cameras, deadline);
    if (result == 0) result = round_trip(cameras, deadline);
    if (cameras->registry == NULL) snprintf(cameras->error, sizeof cameras->error, "pw_core_get_registry failed");
    for (size_t i = 0; result == 0 && i < cameras->count; i++) {
        if (cameras->cameras[i]->failed) {
            snprintf(cameras->error, sizeof cameras->error, "out of memory reading node %u", cameras->cameras[i]->id);
            result = -1;
        }
    }
    disconnect(cameras);
    if (result < 0) {
        snprintf(error, error_size, "%s", cameras->error);
        cpw_cameras_free(cameras);
        return NULL;
    }
    keep_cameras(cameras);
    return cameras;
}

size_t cpw_cameras_count(const cpw_cameras *cameras) { return cameras->count; }

uint32_t cpw_cameras_id(const cpw_cameras *cameras, size_t index) { return cameras->cameras[index]->id; }

size_t cpw_cameras_property_count(const cpw_cameras *cameras, size_t index) {
    const struct pw_properties *props = cameras->cameras[index]->props;
    return props ? props->dict.n_items : 0;
}

void cpw_cameras_property(const cpw_cameras *cameras, size_t index, size_t property, const char **key, const char **value) {
    const struct spa_dict_item *item = &cameras->cameras[index]->props->dict.items[property];
    *key = item->key;
    *value = item->value;
}

size_t cpw_cameras_format_count(const cpw_cameras *cameras, size_t index) { return cameras->cameras[index]->format_count; }

const cpw_format_entry *cpw_cameras_format(const cpw_cameras *cameras, size_t index, size_t format) {
    return &cameras->cameras[index]->formats[format];
}

size_t cpw_cameras_control_count(const cpw_cameras *cameras, size_t index) { return cameras->cameras[index]->control_count; }

const cpw_control *cpw_cameras_control(const cpw_cameras *cameras, size_t index, size_t control) {
    return &cameras->cameras[index]->controls[control];
}

int cpw_node_set_control(int fd, uint32_t node_id, uint32_t control_id, uint32_t type, int64_t value, double fvalue,
                         int timeout_ms, char *error, size_t error_size) {
    struct cpw_cameras *session = calloc(1, sizeof *session);
    if (session == NULL) {
        if (fd >= 0) close(fd);
        snprintf(error, error_size, "out of memory");
        return -1;
    }
    if (cpw_connection_open(&session->connection, fd, 0, error, error_size) < 0) {
        free(session);
        return -1;
    }
    int64_t deadline = now_ms() + timeout_ms;
    pw_core_add_listener(session->connection.core, &session->core_listener, &cpw_cameras_core_events, session);
    session->registry = pw_core_get_registry(session->connection.core, PW_VERSION_REGISTRY, 0);
    struct pw_proxy *node = session->registry == NULL ? NULL
        : pw_registry_bind(session->registry, node_id, PW_TYPE_INTERFACE_Node, PW_VERSION_NODE, 0);
    int result = -1;
    if (node == NULL) {
        snprintf(session->error, sizeof session->error, "binding node %u failed: %s", node_id, strerror(errno));
    } else {
        uint8_t storage[256];
        struct spa_pod_builder b = SPA_POD_BUILDER_INIT(storage, sizeof storage);
        struct spa_pod_frame frame;
        spa_pod_builder_push_object(&b, &frame, SPA_TYPE_OBJECT_Props, SPA_PARAM_Props);
        spa_pod_builder_prop(&b, control_id, 0);
        if (type == CPW_CONTROL_BOOL) spa_pod_builder_bool(&b, value != 0);
        else if (type == CPW_CONTROL_FLOAT) spa_pod_builder_float(&b, (float)fvalue);
        else spa_pod_builder_int(&b, (int32_t)value);
        const struct spa_pod *props = spa_pod_builder_pop(&b, &frame);
        pw_node_set_param((struct pw_node *)node, SPA_PARAM_Props, 0, props);
        result = round_trip(session, deadline);
        pw_proxy_destroy(node);
    }
    if (result < 0) snprintf(error, error_size, "%s", session->error);
    if (session->registry != NULL) {
        pw_proxy_destroy((struct pw_proxy *)session->registry);
        session->registry = NULL;
    }
    disconnect(session);
    free(session);
    return result;
}

void cpw_cameras_free(cpw_cameras *cameras) {
    if (cameras == NULL) return;
    disconnect(cameras);
    for (size_t i = 0; i < cameras->count; i++) {
        pw_properties_free(cameras->cameras[i]->props);
        free(cameras->cameras[i]->formats);
        free(cameras->cameras[i]->controls);
        free(cameras->cameras[i]);
    }
    free(cameras->cameras);
    free(cameras);
}
