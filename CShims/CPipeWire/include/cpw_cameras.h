// CPipeWire: the camera nodes a PipeWire session offers (registry globals of type Node with
// media.class "Video/Source" and media.role "Camera"), with their properties and the formats
// their EnumFormat params list, read once over a connection of their own.
#ifndef CPW_CAMERAS_H
#define CPW_CAMERAS_H
#include <stddef.h>
#include <stdint.h>

/// A snapshot of the session's camera nodes.
typedef struct cpw_cameras cpw_cameras;

/// How a format's media is coded.
enum cpw_subtype {
    CPW_SUBTYPE_OTHER = 0, ///< a subtype MediaDevices does not read
    CPW_SUBTYPE_RAW = 1,   ///< raw video in `spa_format`
    CPW_SUBTYPE_MJPG = 2,  ///< Motion-JPEG
    CPW_SUBTYPE_H264 = 3,  ///< H.264
};

/// How a format entry gives its sizes.
enum cpw_size_kind {
    CPW_SIZE_FIXED = 0, ///< one size: width x height
    CPW_SIZE_RANGE = 1, ///< any size from width x height to max_width x max_height
    CPW_SIZE_STEP = 2,  ///< as RANGE, in steps of step_width x step_height
};

/// How a format entry gives its frame rates.
enum cpw_rate_kind {
    CPW_RATES_NONE = 0,  ///< the node gives no rate (libcamera nodes in PipeWire 0.3.65)
    CPW_RATES_LIST = 1,  ///< the rates in `rates` (one for a fixed rate)
    CPW_RATES_RANGE = 2, ///< any rate from rates[0] to rates[1]
};

/// The most rates one entry keeps (an Enum with more is cut, and `rates_cut` says so).
#define CPW_MAX_RATES 32

/// One frame rate, frames per second as num/denom.
typedef struct cpw_rate {
    uint32_t num;
    uint32_t denom;
} cpw_rate;

/// One format a node offers: a media subtype and pixel format, sizes and rates. An EnumFormat
/// param whose format or size is an Enum choice becomes one entry per value.
typedef struct cpw_format_entry {
    uint32_t subtype;          ///< an enum cpw_subtype
    uint32_t spa_format;       ///< raw: the SPA video format (SPA_VIDEO_FORMAT_*); else 0
    uint32_t fourcc;           ///< the V4L2 fourcc of the same layout, 0 if none is known
    char format_name[24];      ///< SPA's short name ("YUY2", "NV12"; "mjpg" or "h264" when encoded)
    uint32_t size_kind;        ///< an enum cpw_size_kind
    uint32_t width, height;    ///< the size, or the smallest of a range
    uint32_t max_width, max_height;   ///< RANGE/STEP: the largest size
    uint32_t step_width, step_height; ///< STEP: the step
    uint32_t rate_kind;        ///< an enum cpw_rate_kind
    uint32_t rate_count;       ///< entries used in `rates`
    uint32_t rates_cut;        ///< 1 when the node listed more than CPW_MAX_RATES rates
    cpw_rate rates[CPW_MAX_RATES];
} cpw_format_entry;

/// What kind of value a control takes.
enum cpw_control_type {
    CPW_CONTROL_INT = 1,   ///< an integer from minimum to maximum in steps
    CPW_CONTROL_BOOL = 2,  ///< 0 or 1
    CPW_CONTROL_FLOAT = 3, ///< a float from fminimum to fmaximum (libcamera nodes)
    CPW_CONTROL_ENUM = 4,  ///< one of the labelled integers in `labels`
};

/// The most labels one control keeps.
#define CPW_MAX_LABELS 32

/// One labelled value of an enumerated control.
typedef struct cpw_control_label {
    int64_t value;
    char name[48];
} cpw_control_label;

/// One control a node's PropInfo params describe (only the Int, Bool and Float ones with a
/// range, a step, a list or a plain Bool), with its value from the node's Props.
typedef struct cpw_control {
    uint32_t id;          ///< the Props key (SPA_PROP_brightness…, or the SPA's own id space)
    uint32_t type;        ///< an enum cpw_control_type
    char name[64];        ///< PropInfo's description ("Brightness")
    int64_t minimum, maximum, step, default_value, value; ///< INT, BOOL, ENUM
    double fminimum, fmaximum, fdefault, fvalue;          ///< FLOAT
    uint32_t has_value;   ///< 1 when the node's Props gave the current value
    uint32_t label_count;
    cpw_control_label labels[CPW_MAX_LABELS];
} cpw_control;

/// Connects over `fd` (taken), or to the default remote when `fd` is -1 (PIPEWIRE_REMOTE, else
/// $XDG_RUNTIME_DIR/pipewire-0), and reads every camera node with its properties and formats,
/// waiting at most `timeout_ms` for the server. Disconnects before returning. NULL on failure,
/// with a sentence in `error`.
cpw_cameras *cpw_cameras_read(int fd, int timeout_ms, char *error, size_t error_size);

/// How many camera nodes there are.
size_t cpw_cameras_count(const cpw_cameras *cameras);

/// Camera `index`'s global id (what pw-cli and pw_stream_connect take).
uint32_t cpw_cameras_id(const cpw_cameras *cameras, size_t index);

/// How many properties camera `index` has.
size_t cpw_cameras_property_count(const cpw_cameras *cameras, size_t index);

/// Camera `index`'s property `property` (0 ..< cpw_cameras_property_count): its key and value.
void cpw_cameras_property(const cpw_cameras *cameras, size_t index, size_t property,
                          const char **key, const char **value);

/// How many format entries camera `index` has.
size_t cpw_cameras_format_count(const cpw_cameras *cameras, size_t index);

/// Camera `index`'s format entry `format`.
const cpw_format_entry *cpw_cameras_format(const cpw_cameras *cameras, size_t index, size_t format);

/// How many controls camera `index` has.
size_t cpw_cameras_control_count(const cpw_cameras *cameras, size_t index);

/// Camera `index`'s control `control`.
const cpw_control *cpw_cameras_control(const cpw_cameras *cameras, size_t index, size_t control);

/// Sets control `control_id` of node `node_id` (pw_node_set_param with a Props object holding
/// the one value: `value` for INT, BOOL and ENUM, `fvalue` for FLOAT), over `fd` (taken) or the
/// default remote, and waits at most `timeout_ms` for the server to have handled it. 0, or -1
/// with a sentence in `error`.
int cpw_node_set_control(int fd, uint32_t node_id, uint32_t control_id, uint32_t type, int64_t value, double fvalue,
                         int timeout_ms, char *error, size_t error_size);

/// Frees the snapshot.
void cpw_cameras_free(cpw_cameras *cameras);

/// The version the server gave in its core info ("0.3.65"), "" when it gave none.
const char *cpw_cameras_server_version(const cpw_cameras *cameras);

/// The SPA video format of the same bytes in reverse order within a pixel (RGB and BGR, xRGB
/// and BGRx, ARGB and BGRA, and so on); any other format unchanged.
uint32_t cpw_spa_format_byte_reversed(uint32_t spa_format);

/// The V4L2 fourcc of SPA video format `spa_format`, 0 when there is none.
uint32_t cpw_fourcc_of_spa_format(uint32_t spa_format);

/// The SPA video format whose bytes V4L2 fourcc `fourcc` describes, 0 when there is none.
uint32_t cpw_spa_format_of_fourcc(uint32_t fourcc);

/// The SPA video format SPA calls `name` ("YUY2", as pw-cli prints after "VideoFormat:"),
/// SPA_VIDEO_FORMAT_UNKNOWN (0) when there is none.
uint32_t cpw_spa_format_named(const char *name);
#endif
