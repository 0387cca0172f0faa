// Shared declarations of the fake VA-API H.264 driver (see fake_va.c for what it is and
// its knobs). Everything here is internal to fake_drv_video.so; the only exported symbol is
// __vaDriverInit_1_17.
#ifndef FAKE_VA_H
#define FAKE_VA_H

#include <linux/limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <va/va.h>
#include <va/va_backend.h>
#include <va/va_enc_h264.h>

#include "bits.h"
#include "h264_syntax.h"

enum {
    FVA_MAX_SLICES = 64,
    FVA_MAX_PACKED = 32,
    FVA_MAX_REQUESTED = 32,     // attributes recorded per vaCreateConfig
    FVA_MAX_VIOLATIONS = 64,    // kept for the report (all are printed)
    FVA_MAX_DPB = 16,
    FVA_MAX_SEGMENTS = 16,
    FVA_MAX_CONFIGS_KEPT = 32,  // vaCreateConfig calls kept for the report
    FVA_MAX_QUALITY = 100,      // the largest EncQualityRange offered
};

// ---- knobs (config.c) ----

struct fva_knobs {
    bool entry_slice, entry_lp, entry_vld;
    unsigned decode_max_width, decode_max_height;   // VLD: MaxPictureWidth/Height, surfaces, contexts
    bool profile_baseline, profile_main, profile_high;
    bool no_derive;
    uint32_t packed_headers;        // VA_ENC_PACKED_HEADER_* bits offered
    unsigned max_ref_l0, max_ref_l1;
    uint32_t rc_modes;              // VA_RC_* bits offered
    char vendor[128];
    unsigned segments;              // VACodedBufferSegments per coded buffer
    unsigned quality_range;
    unsigned max_slices;
    size_t coded_limit;             // 0: the coded buffer's own size
    char report[PATH_MAX];
    bool trace;
    unsigned sync_ms;               // vaSyncSurface waits this long: a slow encoder
    unsigned level_ms[FVA_MAX_QUALITY];     // an encoded picture's cost by quality level 1, 2, …
    unsigned level_ms_count;        // 0: pictures cost nothing (FAKE_VA_LEVEL_MS unset)
    unsigned busy_from_ms, busy_to_ms, busy_factor;     // busy_factor 0: no busy window
    uint32_t fail;                  // FVA_FAIL_* bits: calls that fail every time
};

enum { FVA_FAIL_CREATE_CONTEXT = 1, FVA_FAIL_PUT_IMAGE = 2, FVA_FAIL_END_PICTURE = 4 };

void fva_read_knobs(struct fva_knobs *knobs);

// ---- objects ----

// Ids are never reused, and each kind has its own range, so a stale or mixed-up id is refused.
struct fva_table {
    void **items;
    uint32_t count, capacity;
    uint32_t base;
    const char *kind;
};

uint32_t fva_table_insert(struct fva_table *table, void *item);   // VA_INVALID_ID when full
void *fva_table_get(const struct fva_table *table, uint32_t id);
void *fva_table_take(struct fva_table *table, uint32_t id);
unsigned fva_table_live(const struct fva_table *table);

struct fva_config {
    VAProfile profile;
    VAEntrypoint entrypoint;
    uint32_t rt_format;
    uint32_t rc_mode;
    uint32_t packed_headers;        // what the client declared (0 when it declared nothing)
    VAConfigAttrib requested[FVA_MAX_REQUESTED];
    unsigned requested_count;
};

struct fva_surface {
    uint32_t width, height;
    uint32_t pitch, luma_rows;      // luma_rows: allocated rows, aligned beyond the height
    size_t chroma_offset, size;
    uint8_t *data;
    VAImageID derived;              // VA_INVALID_ID unless a derived image is alive
    int64_t done_ns;                // CLOCK_MONOTONIC: the engine is done with the surface (cost.c)
};

struct fva_coded {
    size_t capacity;                // bytes the client asked for
    uint8_t *data;
    size_t used;
    uint32_t status;                // VACodedBufferSegment status bits
    int64_t done_ns;                // CLOCK_MONOTONIC: the engine has written the picture (cost.c)
    VACodedBufferSegment segments[FVA_MAX_SEGMENTS];
};

struct fva_buffer {
    VABufferType type;
    VAContextID context;
    unsigned element_size, elements;
    uint8_t *data;                  // element_size × elements; a derived image's is the surface's
    bool owns_data;
    unsigned mapped;
    VASurfaceID surface;            // derived image buffers: the surface they show
    struct fva_coded *coded;        // VAEncCodedBufferType only
};

struct fva_image {
    VAImage image;
    VASurfaceID derived_from;       // VA_INVALID_SURFACE for vaCreateImage images
};

// One packed header (parameter + data buffers) as rendered.
struct fva_packed {
    uint32_t type;
    uint32_t bit_length;
    bool emulation_bytes;
    uint8_t *data;
    size_t size;
};

struct fva_decode;                  // decode.h

// A short-term reference picture of the decoded picture buffer the double models.
struct fva_ref {
    VASurfaceID surface;
    uint32_t frame_num;
    int32_t poc;
};

// What one vaBeginPicture … vaEndPicture gathered.
struct fva_picture {
    VASurfaceID render_target;
    bool have_picture_params;
    VAEncPictureParameterBufferH264 params;
    VAEncSliceParameterBufferH264 slices[FVA_MAX_SLICES];
    unsigned slice_count;
    struct fva_packed packed[FVA_MAX_PACKED];       // all but slice headers, in order
    unsigned packed_count;
    struct fva_packed slice_headers[FVA_MAX_SLICES];
    unsigned slice_header_count;
    // Each slice's header as the stream will carry it: the client's packed one, parsed, or the
    // one the driver writes from the slice parameters.
    struct h264_slice_header headers[FVA_MAX_SLICES];
    bool awaiting_packed_data;      // a packed header parameter buffer wants its data buffer
    VAEncPackedHeaderParameterBuffer pending;
    bool sequence_params_here;
};

// Rate-control state a context keeps between pictures: misc parameters apply until replaced.
struct fva_rate_control {
    bool have_rc, have_hrd, have_frame_rate, have_quality;
    VAEncMiscParameterRateControl rc;
    VAEncMiscParameterHRD hrd;
    VAEncMiscParameterFrameRate frame_rate;
    VAEncMiscParameterBufferQualityLevel quality;
};

struct fva_context {
    struct fva_config config;       // a copy: the config may be destroyed first
    int width, height;
    bool in_picture;
    struct fva_picture picture;
    bool have_sequence;
    VAEncSequenceParameterBufferH264 sequence;
    bool have_sps, have_pps;        // parsed from the client's packed sequence headers
    struct h264_sps sps;
    struct h264_pps pps;
    struct fva_rate_control rate;
    // The decoding state of the stream so far, as a decoder would see it.
    bool started;
    struct fva_ref dpb[FVA_MAX_DPB];
    unsigned dpb_count;
    uint32_t prev_ref_frame_num;
    int32_t prev_poc_msb, prev_poc_lsb;     // of the previous reference picture (type 0)
    uint32_t prev_frame_num, prev_frame_num_offset;   // type 2
    int prev_idr_pic_id;            // -1 before the first IDR
    int32_t *pocs;                  // POCs used in this IDR period
    unsigned poc_count, poc_capacity;
    // Worked out by the checks of the current picture, kept if it is encoded.
    int32_t pending_poc_msb;
    uint32_t pending_frame_num_offset;
    struct fva_ref next_dpb[FVA_MAX_DPB + 1];
    unsigned next_dpb_count;
    // A decode context's state (decode.h); NULL in encode contexts.
    struct fva_decode *decode;
    // The modelled engine (cost.c): when the first picture was submitted, when the engine is
    // done with every picture submitted so far.
    bool submitted;
    int64_t first_submit_ns, engine_free_ns;
};

struct fva_driver {
    struct fva_table configs, contexts, surfaces, buffers, images;
};

// ---- what the report says (report.c) ----

struct fva_decode_stats {
    bool have_profile;
    VAProfile profile;              // of the context that decoded last
    unsigned pictures, failed_pictures;
    unsigned i_slices, p_slices, b_slices, cavlc_slices, cabac_slices;
    unsigned long long macroblocks;
};

struct fva_config_made {
    VAProfile profile;
    VAEntrypoint entrypoint;
};

struct fva_stats {
    bool have_config;
    struct fva_config config;       // of the context that encoded last
    unsigned frames, idr, i_slices, p_slices, b_slices;
    unsigned pictures_by_quality[FVA_MAX_QUALITY + 1];  // by the quality level in force; 0: the default
    int last_qp[3];                 // SliceQPY of the last slice of each type (P, B, I); -1: none
    unsigned packed[5];             // by VAEncPackedHeaderType 1…4
    unsigned rc_count, hrd_count, frame_rate_count, quality_count;
    VAEncMiscParameterRateControl rc;
    VAEncMiscParameterHRD hrd;
    VAEncMiscParameterFrameRate frame_rate;
    VAEncMiscParameterBufferQualityLevel quality;
    bool have_sequence;
    VAEncSequenceParameterBufferH264 sequence;
    unsigned images_derived, images_created, images_put, images_got;
    unsigned overflows;
    struct fva_decode_stats decode;
    struct fva_config_made configs_made[FVA_MAX_CONFIGS_KEPT];
    unsigned configs_made_count;    // all vaCreateConfig successes, also those not kept
    bool terminated;
    unsigned live_configs, live_contexts, live_surfaces, live_buffers, live_images;
    char *violations[FVA_MAX_VIOLATIONS];
    unsigned violation_count;
};

extern struct fva_knobs fva_knobs;
extern struct fva_stats fva_stats;
extern char fva_picture_label[64];

void fva_lock(void);
void fva_unlock(void);
void fva_trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
// Prints "fake-va: violation: …" and records it; the caller fails the call. While a picture is
// checked, fva_picture_label names it ("picture 3 (P, frame_num 2, POC 6): ") at the start.
void fva_violation(const char *format, ...) __attribute__((format(printf, 1, 2)));
void fva_write_report(void);
_Noreturn void fva_out_of_memory(void);

static inline struct fva_driver *fva_driver(VADriverContextP ctx) {
    return ctx->pDriverData;
}

const char *fva_profile_name(VAProfile profile);
const char *fva_entrypoint_name(VAEntrypoint entrypoint);
const char *fva_rc_name(uint32_t mode);

// ---- entry points, by file ----

// configs.c
VAStatus fva_QueryConfigProfiles(VADriverContextP, VAProfile *, int *);
VAStatus fva_QueryConfigEntrypoints(VADriverContextP, VAProfile, VAEntrypoint *, int *);
VAStatus fva_GetConfigAttributes(VADriverContextP, VAProfile, VAEntrypoint, VAConfigAttrib *, int);
VAStatus fva_CreateConfig(VADriverContextP, VAProfile, VAEntrypoint, VAConfigAttrib *, int, VAConfigID *);
VAStatus fva_DestroyConfig(VADriverContextP, VAConfigID);
VAStatus fva_QueryConfigAttributes(VADriverContextP, VAConfigID, VAProfile *, VAEntrypoint *,
                                   VAConfigAttrib *, int *);
bool fva_profile_offered(VAProfile profile);
bool fva_is_decode(const struct fva_config *config);

// surfaces.c
VAStatus fva_CreateSurfaces(VADriverContextP, int, int, int, int, VASurfaceID *);
VAStatus fva_CreateSurfaces2(VADriverContextP, unsigned int, unsigned int, unsigned int, VASurfaceID *,
                             unsigned int, VASurfaceAttrib *, unsigned int);
VAStatus fva_DestroySurfaces(VADriverContextP, VASurfaceID *, int);
VAStatus fva_QuerySurfaceAttributes(VADriverContextP, VAConfigID, VASurfaceAttrib *, unsigned int *);
VAStatus fva_SyncSurface(VADriverContextP, VASurfaceID);
VAStatus fva_SyncSurface2(VADriverContextP, VASurfaceID, uint64_t);
VAStatus fva_QuerySurfaceStatus(VADriverContextP, VASurfaceID, VASurfaceStatus *);

// images.c
VAStatus fva_QueryImageFormats(VADriverContextP, VAImageFormat *, int *);
VAStatus fva_CreateImage(VADriverContextP, VAImageFormat *, int, int, VAImage *);
VAStatus fva_DeriveImage(VADriverContextP, VASurfaceID, VAImage *);
VAStatus fva_DestroyImage(VADriverContextP, VAImageID);
VAStatus fva_GetImage(VADriverContextP, VASurfaceID, int, int, unsigned int, unsigned int, VAImageID);
VAStatus fva_PutImage(VADriverContextP, VASurfaceID, VAImageID, int, int, unsigned int, unsigned int,
                      int, int, unsigned int, unsigned int);
void fva_destroy_image(struct fva_driver *driver, VAImageID id);

// buffers.c
VAStatus fva_CreateBuffer(VADriverContextP, VAContextID, VABufferType, unsigned int, unsigned int,
                          void *, VABufferID *);
VAStatus fva_BufferSetNumElements(VADriverContextP, VABufferID, unsigned int);
VAStatus fva_MapBuffer(VADriverContextP, VABufferID, void **);
VAStatus fva_UnmapBuffer(VADriverContextP, VABufferID);
VAStatus fva_DestroyBuffer(VADriverContextP, VABufferID);
VAStatus fva_BufferInfo(VADriverContextP, VABufferID, VABufferType *, unsigned int *, unsigned int *);
VAStatus fva_SyncBuffer(VADriverContextP, VABufferID, uint64_t);
struct fva_buffer *fva_new_buffer(VABufferType type, VAContextID context, unsigned element_size,
                                  unsigned elements);
void fva_free_buffer(struct fva_buffer *buffer);

// picture.c
VAStatus fva_CreateContext(VADriverContextP, VAConfigID, int, int, int, VASurfaceID *, int, VAContextID *);
VAStatus fva_DestroyContext(VADriverContextP, VAContextID);
VAStatus fva_BeginPicture(VADriverContextP, VAContextID, VASurfaceID);
VAStatus fva_RenderPicture(VADriverContextP, VAContextID, VABufferID *, int);
VAStatus fva_EndPicture(VADriverContextP, VAContextID);
void fva_free_context(struct fva_context *context);
// The quality level in force on an encode context: the last one rendered, 0 (the driver's
// default) before any.
unsigned fva_quality_level(const struct fva_context *context);

// checks.c: every rule on the client's bookkeeping; false when one was broken.
bool fva_check_picture(struct fva_driver *driver, struct fva_context *context);

// slices.c: slice parameters, and the client's packed slice headers against them.
void fva_check_slices(struct fva_context *context);

// references.c: the rules on reference pictures, and the DPB moving on after a picture.
uint32_t fva_max_frame_num(const struct fva_context *context);
void fva_check_marking(struct fva_context *context);
void fva_check_reference_frames(struct fva_context *context);
void fva_check_reference_lists(struct fva_context *context);
void fva_update_dpb(struct fva_context *context);

// encode.c: the coded picture, made of I_PCM macroblocks.
bool fva_encode_picture(struct fva_driver *driver, struct fva_context *context, struct fva_coded *coded);

// cost.c: what an encoded picture costs the modelled engine (FAKE_VA_LEVEL_MS, FAKE_VA_BUSY),
// and waiting for the engine. Times are CLOCK_MONOTONIC nanoseconds.
void fva_schedule_picture(struct fva_context *context, struct fva_surface *const *surfaces, unsigned surface_count,
                          struct fva_coded *coded);
int64_t fva_now_ns(void);
void fva_sleep_until(int64_t deadline_ns);
// Waits, outside the driver's lock, until `done_ns`, or for `timeout_ns` at most
// (VA_TIMEOUT_INFINITE: no limit): VA_STATUS_SUCCESS, or VA_STATUS_ERROR_TIMEDOUT.
VAStatus fva_wait_for_engine(int64_t done_ns, uint64_t timeout_ns);

// headers.c: the SPS, PPS and slice header the parameter buffers describe.
void fva_sps_from_params(const struct fva_context *context, struct h264_sps *sps);
void fva_pps_from_params(const struct fva_context *context, struct h264_pps *pps);
void fva_slice_header_from_params(const struct fva_context *context,
                                  const VAEncSliceParameterBufferH264 *slice, struct h264_slice_header *header);
bool fva_parse_packed_sequence(struct fva_context *context, const struct fva_packed *packed);
bool fva_compare_sps(const struct h264_sps *expected, const struct h264_sps *got);
bool fva_compare_pps(const struct h264_pps *expected, const struct h264_pps *got);
bool fva_compare_slice_header(const struct h264_slice_header *expected, const struct h264_slice_header *got,
                              unsigned slice_index);

#endif
