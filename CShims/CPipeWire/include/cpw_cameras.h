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

/// Frees the snapshot.
void cpw_cameras_free(cpw_cameras *cameras);

/// The V4L2 fourcc of SPA video format `spa_format`, 0 when there is none.
uint32_t cpw_fourcc_of_spa_format(uint32_t spa_format);

/// The SPA video format whose bytes V4L2 fourcc `fourcc` describes, 0 when there is none.
uint32_t cpw_spa_format_of_fourcc(uint32_t fourcc);

/// The SPA video format SPA calls `name` ("YUY2", as pw-cli prints after "VideoFormat:"),
/// SPA_VIDEO_FORMAT_UNKNOWN (0) when there is none.
uint32_t cpw_spa_format_named(const char *name);
#endif
