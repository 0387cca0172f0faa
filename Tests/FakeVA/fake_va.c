// A fake VA-API driver for tests on machines without a GPU: a libva 2.17 backend
// (fake_drv_video.so, exporting __vaDriverInit_1_17) that offers H.264 encoding the way Intel's
// iHD or Mesa's radeonsi do, and decoding of what it encodes, so real clients (ffmpeg's
// h264_vaapi encoder and its VA-API hwaccel decoder, vainfo, vtrecord) can be run against it
// unchanged. With libfakedrm.so (drm/fake_drm.c) preloaded, any descriptor, such as
// one of /dev/null, passes for a DRM render node:
//
//   LD_PRELOAD=…/libfakedrm.so LIBVA_DRIVERS_PATH=…/.build/fake-va LIBVA_DRIVER_NAME=fake
//
// It encodes for real: each coded picture carries the client's packed headers in the order
// received, then per slice the client's packed slice header (or one the driver writes from the
// slice parameters), then slice data made only of I_PCM macroblocks copied from the input
// surface (CAVLC or CABAC, as the picture parameters say). I_PCM is lossless, so decoding the
// output with any H.264 decoder gives back the input bit for bit. Without packed sequence
// headers the driver writes SPS and PPS itself at IDR pictures.
//
// It is strict: it models what a decoder would see (frame_num, POC, the sliding-window
// reference set, reference lists in the default order or as the packed slice header modifies
// it, idr_pic_id) and checks every parameter buffer against that and against the packed headers
// (SPS, PPS and slice header are parsed and compared field by field), plus rate-control and
// packed-header declarations. A broken rule prints one line to stderr,
//
//   fake-va: violation: <what>, expected X, got Y
//
// is recorded in the report, and fails the call (vaRenderPicture or vaEndPicture returns
// VA_STATUS_ERROR_INVALID_PARAMETER). Apart from violations (and the trace when asked for) the
// driver prints nothing.
//
// It decodes (VAEntrypointVLD, for the same three profiles) exactly what its encoder writes:
// slices made only of I_PCM macroblocks, CAVLC or CABAC, in I, P and B slices — CAVLC mb_type
// 25 / mb_skip_run 0 + 30 / mb_skip_run 0 + 48; CABAC with mb_skip_flag 0, the mb_type bins of
// I_PCM and the arithmetic decoding engine restarted after the samples (9.3.1.2) — writing the
// samples into the render target (NV12), where vaDeriveImage, vaGetImage and vaMapBuffer find
// them. It takes the buffers as libavcodec's vaapi_h264.c renders them: a
// VAPictureParameterBufferH264 and a VAIQMatrixBufferH264, then per slice a
// VASliceParameterBufferH264 and a VASliceDataBufferType buffer holding the NAL unit from its
// header byte with its emulation prevention bytes (removed when reading; slice_data_bit_offset
// counts the bits of NAL and slice header without them, as libavcodec's get_bits_count does).
// Each slice header is parsed and compared with the slice parameters (slice_data_bit_offset,
// first_mb_in_slice, slice_type, slice_qp_delta, frame_num, …); CurrPic must be the render
// target, the picture must fit the context and the surface, references must be live surfaces
// and RefPicList entries among ReferenceFrames. What it cannot decode exactly it refuses, with
//
//   fake-va: violation: decode: picture N [slice S]: <what>, expected X, got Y
//
// in the report too, and vaEndPicture fails: VA_STATUS_ERROR_DECODING_ERROR for slice data
// that is not I_PCM (a skipped macroblock, any other mb_type), that ends early or that leaves
// macroblocks of the picture undecoded; VA_STATUS_ERROR_INVALID_PARAMETER for parameter
// buffers that are wrong or disagree with the slice headers. (libavcodec takes either as a
// failed picture: "Failed to end picture decode issue", AVERROR(EIO).) Interlaced and MBAFF
// pictures, POC type 1, SP/SI slices, 10-bit and 4:2:2 are refused the same way.
//
// Files: config.c reads the knobs below, configs.c answers profile/entrypoint/attribute
// queries, surfaces.c and images.c hold pictures, buffers.c the buffers and coded segments,
// picture.c contexts and Begin/Render/EndPicture, checks.c, slices.c and references.c the
// rules, headers.c and h264_syntax.c the parameter sets and slice headers, slice_data.c the
// I_PCM slice data, encode.c the coded picture, decode.c the decode side of a picture and its
// checks, slice_decode.c reading I_PCM slice data back, cabac.c the CABAC tables both share,
// report.c the report, bits.c bit reading and writing, cost.c the modelled engine of
// FAKE_VA_LEVEL_MS; drm/fake_drm.c is libfakedrm.so.
//
// Knobs (environment variables, read when the driver initialises):
//
//   FAKE_VA_ENTRYPOINTS=slice,lp,vld
//                                  Entrypoints offered: "slice" (VAEntrypointEncSlice), "lp"
//                                  (VAEntrypointEncSliceLP), "vld" (VAEntrypointVLD, decoding),
//                                  any of them; the default is all three, so `ffmpeg -hwaccel
//                                  vaapi` finds decoding as on real hardware (vaQueryConfig-
//                                  Entrypoints lists VLD first, as iHD does). "lp" alone is like
//                                  Intel Arc's encoder without decoding; "slice,lp" an
//                                  encode-only driver.
//   FAKE_VA_DECODE_MAX=WxH         VAConfigAttribMaxPictureWidth/Height of decoding, and the
//                                  MaxWidth/MaxHeight surface attributes of a decode config (each
//                                  16…4096, default 4096x4096); vaCreateContext refuses a larger
//                                  decode context with VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED.
//   FAKE_VA_PROFILES=baseline,main,high
//                                  Profiles offered: VAProfileH264ConstrainedBaseline, Main,
//                                  High (default all three).
//   FAKE_VA_NO_DERIVE=1            vaDeriveImage fails with VA_STATUS_ERROR_OPERATION_FAILED, as
//                                  on many AMD drivers; clients must use vaCreateImage and
//                                  vaPutImage.
//   FAKE_VA_PACKED_HEADERS=sequence,picture,slice,raw
//                                  VAConfigAttribEncPackedHeaders: any of sequence, picture,
//                                  slice, raw (raw = VA_ENC_PACKED_HEADER_MISC|RAW_DATA), or
//                                  "none". Default all four. With "none" the driver writes SPS,
//                                  PPS (with VUI timing, aspect ratio and bitstream restriction
//                                  from the sequence parameters) and slice headers itself;
//                                  "sequence" alone is like Mesa: slice headers are the driver's.
//   FAKE_VA_MAX_REFS=4,1           VAConfigAttribEncMaxRefFrames as L0,L1 (default 4,1); "1,0"
//                                  means no B-frames, like radeonsi.
//   FAKE_VA_RC_MODES=cqp,cbr,vbr   Rate-control modes offered: any of cqp, cbr, vbr, icq
//                                  (default cqp,cbr,vbr).
//   FAKE_VA_VENDOR=text            vaQueryVendorString (default "vtrecord test driver 1.0").
//   FAKE_VA_SEGMENTS=N             Each coded buffer's output is split over N (1…16)
//                                  VACodedBufferSegments; clients must walk the list.
//   FAKE_VA_QUALITY_RANGE=7        VAConfigAttribEncQualityRange (1…100).
//   FAKE_VA_MAX_SLICES=8           VAConfigAttribEncMaxSlices (1…64).
//   FAKE_VA_CODED_LIMIT=BYTES      The driver writes at most this many bytes into any coded
//                                  buffer (default: the buffer's size). Output beyond it is cut
//                                  off and the segment's status has
//                                  VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK, as when a coded
//                                  buffer is too small.
//   FAKE_VA_REPORT=path            A JSON report, written at vaTerminate and also after every
//                                  vaEndPicture (replaced whole, so a killed client leaves the
//                                  last one): the encoding config (profile, entrypoint, rate
//                                  control, the attributes the client passed to vaCreateConfig),
//                                  frames encoded, pictures encoded at each quality level
//                                  ("pictures_by_quality_level": {"0": 2, "4": 28}, levels with
//                                  none left out; "0" is the driver's default, also before any
//                                  level was sent), IDR pictures and I/P/B slices, packed headers
//                                  by type, the last value and count of each misc parameter
//                                  (rate control, HRD, frame rate, quality level), the last
//                                  sequence parameters, images derived/created/put/got, coded
//                                  buffer overflows, decoding ("decode": the profile, pictures
//                                  decoded and refused, I/P/B, CAVLC and CABAC slices decoded,
//                                  macroblocks), every config created ("configs": profile and
//                                  entrypoint, "vld" for decoding), objects still alive at
//                                  vaTerminate, and the violations. "%p" in the path becomes the
//                                  process id.
//   FAKE_VA_TRACE=1                Log each call to stderr.
//   FAKE_VA_SYNC_MS=N              vaSyncSurface takes N milliseconds (0…10000), as hardware
//                                  that codes slower than the client feeds it: an encoder that
//                                  falls behind a live camera. Only vaSyncSurface: ffmpeg's
//                                  h264_vaapi waits in vaSyncBuffer, so ffmpeg is slowed by the
//                                  vaSyncSurface before each upload (hwupload) instead.
//   FAKE_VA_LEVEL_MS=m1,m2,…,mn    An engine whose cost per picture follows the quality level:
//                                  a picture encoded at VAEncMiscParameterBufferQualityLevel
//                                  quality_level L takes mL milliseconds (each 0…10000, up to
//                                  100 of them), a level beyond the list the last entry, level
//                                  0 (the driver's default, also before the client sent any)
//                                  m1. The level in force is the last one rendered on the
//                                  context (clients send it with some pictures only, ffmpeg with
//                                  each IDR). Each encode context has one engine, which takes
//                                  its pictures one after another: a picture submitted at
//                                  vaEndPicture starts then, or when the engine is done with the
//                                  picture before it, and is done its cost later. Until then
//                                  vaSyncSurface and vaSyncSurface2 (of its input or
//                                  reconstructed surface), vaSyncBuffer and vaMapBuffer (of its
//                                  coded buffer) wait, vaQuerySurfaceStatus says
//                                  VASurfaceRendering, and vaSyncSurface2 or vaSyncBuffer with
//                                  a shorter timeout return VA_STATUS_ERROR_TIMEDOUT after it.
//                                  So a client that keeps pictures in flight is not charged
//                                  twice, and one that falls behind sees its wait grow. Not with
//                                  FAKE_VA_SYNC_MS (a fixed sleep in every vaSyncSurface, which
//                                  keeps its meaning): setting both stops the process.
//   FAKE_VA_BUSY=FROM-TO[xF]       With FAKE_VA_LEVEL_MS: pictures submitted from FROM until
//                                  TO milliseconds after the context's first encoded picture
//                                  (its vaEndPicture; 0 ≤ FROM < TO ≤ 3600000) cost F times as
//                                  much (1…100, default 3), as an engine shared with another
//                                  job for a while; e.g. 2000-5000x4. Pictures already queued
//                                  when the window ends still take what they were charged.
//                                  Without FAKE_VA_LEVEL_MS it stops the process.
//   FAKE_VA_FAIL=call,…            These calls fail every time with VA_STATUS_ERROR_OPERATION_FAILED,
//                                  as when the hardware refuses (a size, a busy engine): any of
//                                  vaCreateContext, vaPutImage, vaEndPicture (decode contexts'
//                                  too).
//
// Not emulated: interlaced and MBAFF coding, POC type 1, long-term references and memory
// management control operations, weighted prediction, slice groups, 10-bit and 4:2:2, external
// (DMA-BUF) surfaces, VPP, decoding of anything but I_PCM macroblocks, and more than one thread
// inside the driver at a time (every entry point takes one lock).
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-va"
#include "fake_va.h"
#include "double_support.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct fva_knobs fva_knobs;
struct fva_stats fva_stats;
static pthread_mutex_t fva_mutex = PTHREAD_MUTEX_INITIALIZER;

void fva_lock(void) {
    double_lock(&fva_mutex);
}

void fva_unlock(void) {
    double_unlock(&fva_mutex);
}

_Noreturn void fva_out_of_memory(void) {
    dprintf(2, "fake-va: out of memory\n");
    abort();
}

void fva_trace(const char *format, ...) {
    if (!fva_knobs.trace) return;
    va_list arguments;
    va_start(arguments, format);
    double_vprint(format, arguments);
    va_end(arguments);
}

char fva_picture_label[64];

void fva_violation(const char *format, ...) {
    char line[1024];
    size_t label = strlen(fva_picture_label);
    memcpy(line, fva_picture_label, label + 1);
    va_list arguments;
    va_start(arguments, format);
    int length = vsnprintf(line + label, sizeof line - label, format, arguments);
    va_end(arguments);
    if (length < 0) return;
    dprintf(2, "fake-va: violation: %s\n", line);
    if (fva_stats.violation_count < FVA_MAX_VIOLATIONS) {
        char *copy = strdup(line);
        if (copy == NULL) fva_out_of_memory();
        fva_stats.violations[fva_stats.violation_count] = copy;
    }
    fva_stats.violation_count++;
}

const char *fva_profile_name(VAProfile profile) {
    switch (profile) {
    case VAProfileH264ConstrainedBaseline: return "constrained_baseline";
    case VAProfileH264Main: return "main";
    case VAProfileH264High: return "high";
    default: return "other";
    }
}

const char *fva_entrypoint_name(VAEntrypoint entrypoint) {
    switch (entrypoint) {
    case VAEntrypointEncSlice: return "slice";
    case VAEntrypointEncSliceLP: return "lp";
    case VAEntrypointVLD: return "vld";
    default: return "other";
    }
}

const char *fva_rc_name(uint32_t mode) {
    switch (mode) {
    case VA_RC_CQP: return "cqp";
    case VA_RC_CBR: return "cbr";
    case VA_RC_VBR: return "vbr";
    case VA_RC_ICQ: return "icq";
    default: return "other";
    }
}

// ---- tables of objects ----

uint32_t fva_table_insert(struct fva_table *table, void *item) {
    if (table->count == 0x00ffffff) return VA_INVALID_ID;
    if (table->count == table->capacity) {
        uint32_t capacity = table->capacity ? table->capacity * 2 : 64;
        void **items = realloc(table->items, capacity * sizeof *items);
        if (items == NULL) fva_out_of_memory();
        table->items = items;
        table->capacity = capacity;
    }
    table->items[table->count] = item;
    return table->base + table->count++;
}

void *fva_table_get(const struct fva_table *table, uint32_t id) {
    if (id < table->base || id - table->base >= table->count) return NULL;
    return table->items[id - table->base];
}

void *fva_table_take(struct fva_table *table, uint32_t id) {
    void *item = fva_table_get(table, id);
    if (item != NULL) table->items[id - table->base] = NULL;
    return item;
}

unsigned fva_table_live(const struct fva_table *table) {
    unsigned live = 0;
    for (uint32_t i = 0; i < table->count; i++) live += table->items[i] != NULL;
    return live;
}

// ---- entry points with nothing to do for an encoder or an I_PCM decoder ----

// The stubs take the vtable's parameters only to have its signatures.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-parameter"
#define UNIMPLEMENTED(name, ...) \
    static VAStatus fva_##name(__VA_ARGS__) { \
        fva_trace("%s: unimplemented", #name); \
        return VA_STATUS_ERROR_UNIMPLEMENTED; \
    }

UNIMPLEMENTED(QuerySurfaceError, VADriverContextP c, VASurfaceID s, VAStatus e, void **d)
UNIMPLEMENTED(PutSurface, VADriverContextP c, VASurfaceID s, void *d, short sx, short sy, unsigned short sw,
              unsigned short sh, short dx, short dy, unsigned short dw, unsigned short dh, VARectangle *r,
              unsigned int n, unsigned int f)
UNIMPLEMENTED(SetImagePalette, VADriverContextP c, VAImageID i, unsigned char *p)
UNIMPLEMENTED(CreateSubpicture, VADriverContextP c, VAImageID i, VASubpictureID *s)
UNIMPLEMENTED(DestroySubpicture, VADriverContextP c, VASubpictureID s)
UNIMPLEMENTED(SetSubpictureImage, VADriverContextP c, VASubpictureID s, VAImageID i)
UNIMPLEMENTED(SetSubpictureChromakey, VADriverContextP c, VASubpictureID s, unsigned int a, unsigned int b,
              unsigned int m)
UNIMPLEMENTED(SetSubpictureGlobalAlpha, VADriverContextP c, VASubpictureID s, float a)
UNIMPLEMENTED(AssociateSubpicture, VADriverContextP c, VASubpictureID p, VASurfaceID *s, int n, short a,
              short b, unsigned short e, unsigned short f, short g, short h, unsigned short i,
              unsigned short j, unsigned int k)
UNIMPLEMENTED(DeassociateSubpicture, VADriverContextP c, VASubpictureID p, VASurfaceID *s, int n)
UNIMPLEMENTED(GetDisplayAttributes, VADriverContextP c, VADisplayAttribute *a, int n)
UNIMPLEMENTED(SetDisplayAttributes, VADriverContextP c, VADisplayAttribute *a, int n)
UNIMPLEMENTED(LockSurface, VADriverContextP c, VASurfaceID s, unsigned int *a, unsigned int *b,
              unsigned int *d, unsigned int *e, unsigned int *f, unsigned int *g, unsigned int *h,
              unsigned int *i, void **l)
UNIMPLEMENTED(UnlockSurface, VADriverContextP c, VASurfaceID s)
UNIMPLEMENTED(AcquireBufferHandle, VADriverContextP c, VABufferID b, VABufferInfo *i)
UNIMPLEMENTED(ReleaseBufferHandle, VADriverContextP c, VABufferID b)
UNIMPLEMENTED(ExportSurfaceHandle, VADriverContextP c, VASurfaceID s, uint32_t t, uint32_t f, void *d)
UNIMPLEMENTED(CreateMFContext, VADriverContextP c, VAMFContextID *m)
UNIMPLEMENTED(MFAddContext, VADriverContextP c, VAMFContextID m, VAContextID x)
UNIMPLEMENTED(MFReleaseContext, VADriverContextP c, VAMFContextID m, VAContextID x)
UNIMPLEMENTED(MFSubmit, VADriverContextP c, VAMFContextID m, VAContextID *x, int n)
UNIMPLEMENTED(CreateBuffer2, VADriverContextP c, VAContextID x, VABufferType t, unsigned int w,
              unsigned int h, unsigned int *u, unsigned int *p, VABufferID *b)
UNIMPLEMENTED(QueryProcessingRate, VADriverContextP c, VAConfigID i, VAProcessingRateParameter *p,
              unsigned int *r)
UNIMPLEMENTED(Copy, VADriverContextP c, VACopyObject *d, VACopyObject *s, VACopyOption o)
#pragma GCC diagnostic pop

static VAStatus fva_QuerySubpictureFormats(VADriverContextP ctx, VAImageFormat *formats, unsigned int *flags,
                                           unsigned int *count) {
    (void)ctx;
    (void)formats;
    (void)flags;
    *count = 0;
    return VA_STATUS_SUCCESS;
}

static VAStatus fva_QueryDisplayAttributes(VADriverContextP ctx, VADisplayAttribute *attributes, int *count) {
    (void)ctx;
    (void)attributes;
    *count = 0;
    return VA_STATUS_SUCCESS;
}

static VAStatus fva_Terminate(VADriverContextP ctx) {
    fva_lock();
    fva_trace("vaTerminate");
    struct fva_driver *driver = fva_driver(ctx);
    fva_stats.terminated = true;
    fva_stats.live_configs = fva_table_live(&driver->configs);
    fva_stats.live_contexts = fva_table_live(&driver->contexts);
    fva_stats.live_surfaces = fva_table_live(&driver->surfaces);
    fva_stats.live_buffers = fva_table_live(&driver->buffers);
    fva_stats.live_images = fva_table_live(&driver->images);
    fva_write_report();
    // What the client left behind goes with the display, as libva promises.
    for (uint32_t i = 0; i < driver->images.count; i++) {
        if (driver->images.items[i] != NULL) fva_destroy_image(driver, driver->images.base + i);
    }
    for (uint32_t i = 0; i < driver->buffers.count; i++) fva_free_buffer(driver->buffers.items[i]);
    for (uint32_t i = 0; i < driver->surfaces.count; i++) {
        struct fva_surface *surface = driver->surfaces.items[i];
        if (surface != NULL) free(surface->data);
        free(surface);
    }
    for (uint32_t i = 0; i < driver->contexts.count; i++) {
        if (driver->contexts.items[i] != NULL) fva_free_context(driver->contexts.items[i]);
    }
    for (uint32_t i = 0; i < driver->configs.count; i++) free(driver->configs.items[i]);
    free(driver->images.items);
    free(driver->buffers.items);
    free(driver->surfaces.items);
    free(driver->contexts.items);
    free(driver->configs.items);
    free(driver);
    ctx->pDriverData = NULL;
    fva_unlock();
    return VA_STATUS_SUCCESS;
}

__attribute__((visibility("default"))) VAStatus __vaDriverInit_1_17(VADriverContextP ctx);

VAStatus __vaDriverInit_1_17(VADriverContextP ctx) {
    fva_lock();
    fva_read_knobs(&fva_knobs);
    for (unsigned i = 0; i < 3; i++) fva_stats.last_qp[i] = -1;
    fva_trace("vaInitialize");
    struct fva_driver *driver = calloc(1, sizeof *driver);
    if (driver == NULL) fva_out_of_memory();
    driver->configs = (struct fva_table){.base = 0x01000000, .kind = "config"};
    driver->contexts = (struct fva_table){.base = 0x02000000, .kind = "context"};
    driver->surfaces = (struct fva_table){.base = 0x04000000, .kind = "surface"};
    driver->buffers = (struct fva_table){.base = 0x08000000, .kind = "buffer"};
    driver->images = (struct fva_table){.base = 0x0c000000, .kind = "image"};
    ctx->pDriverData = driver;
    ctx->version_major = VA_MAJOR_VERSION;
    ctx->version_minor = VA_MINOR_VERSION;
    ctx->max_profiles = 3;
    ctx->max_entrypoints = 3;
    ctx->max_attributes = 16;
    ctx->max_image_formats = 3;
    ctx->max_subpic_formats = 1;
    ctx->max_display_attributes = 1;
    ctx->str_vendor = fva_knobs.vendor;

    struct VADriverVTable *vtable = ctx->vtable;
    vtable->vaTerminate = fva_Terminate;
    vtable->vaQueryConfigProfiles = fva_QueryConfigProfiles;
    vtable->vaQueryConfigEntrypoints = fva_QueryConfigEntrypoints;
    vtable->vaGetConfigAttributes = fva_GetConfigAttributes;
    vtable->vaCreateConfig = fva_CreateConfig;
    vtable->vaDestroyConfig = fva_DestroyConfig;
    vtable->vaQueryConfigAttributes = fva_QueryConfigAttributes;
    vtable->vaCreateSurfaces = fva_CreateSurfaces;
    vtable->vaDestroySurfaces = fva_DestroySurfaces;
    vtable->vaCreateContext = fva_CreateContext;
    vtable->vaDestroyContext = fva_DestroyContext;
    vtable->vaCreateBuffer = fva_CreateBuffer;
    vtable->vaBufferSetNumElements = fva_BufferSetNumElements;
    vtable->vaMapBuffer = fva_MapBuffer;
    vtable->vaUnmapBuffer = fva_UnmapBuffer;
    vtable->vaDestroyBuffer = fva_DestroyBuffer;
    vtable->vaBeginPicture = fva_BeginPicture;
    vtable->vaRenderPicture = fva_RenderPicture;
    vtable->vaEndPicture = fva_EndPicture;
    vtable->vaSyncSurface = fva_SyncSurface;
    vtable->vaQuerySurfaceStatus = fva_QuerySurfaceStatus;
    vtable->vaQuerySurfaceError = fva_QuerySurfaceError;
    vtable->vaPutSurface = fva_PutSurface;
    vtable->vaQueryImageFormats = fva_QueryImageFormats;
    vtable->vaCreateImage = fva_CreateImage;
    vtable->vaDeriveImage = fva_DeriveImage;
    vtable->vaDestroyImage = fva_DestroyImage;
    vtable->vaSetImagePalette = fva_SetImagePalette;
    vtable->vaGetImage = fva_GetImage;
    vtable->vaPutImage = fva_PutImage;
    vtable->vaQuerySubpictureFormats = fva_QuerySubpictureFormats;
    vtable->vaCreateSubpicture = fva_CreateSubpicture;
    vtable->vaDestroySubpicture = fva_DestroySubpicture;
    vtable->vaSetSubpictureImage = fva_SetSubpictureImage;
    vtable->vaSetSubpictureChromakey = fva_SetSubpictureChromakey;
    vtable->vaSetSubpictureGlobalAlpha = fva_SetSubpictureGlobalAlpha;
    vtable->vaAssociateSubpicture = fva_AssociateSubpicture;
    vtable->vaDeassociateSubpicture = fva_DeassociateSubpicture;
    vtable->vaQueryDisplayAttributes = fva_QueryDisplayAttributes;
    vtable->vaGetDisplayAttributes = fva_GetDisplayAttributes;
    vtable->vaSetDisplayAttributes = fva_SetDisplayAttributes;
    vtable->vaBufferInfo = fva_BufferInfo;
    vtable->vaLockSurface = fva_LockSurface;
    vtable->vaUnlockSurface = fva_UnlockSurface;
    vtable->vaCreateSurfaces2 = fva_CreateSurfaces2;
    vtable->vaQuerySurfaceAttributes = fva_QuerySurfaceAttributes;
    vtable->vaAcquireBufferHandle = fva_AcquireBufferHandle;
    vtable->vaReleaseBufferHandle = fva_ReleaseBufferHandle;
    vtable->vaCreateMFContext = fva_CreateMFContext;
    vtable->vaMFAddContext = fva_MFAddContext;
    vtable->vaMFReleaseContext = fva_MFReleaseContext;
    vtable->vaMFSubmit = fva_MFSubmit;
    vtable->vaCreateBuffer2 = fva_CreateBuffer2;
    vtable->vaQueryProcessingRate = fva_QueryProcessingRate;
    vtable->vaExportSurfaceHandle = fva_ExportSurfaceHandle;
    vtable->vaSyncSurface2 = fva_SyncSurface2;
    vtable->vaSyncBuffer = fva_SyncBuffer;
    vtable->vaCopy = fva_Copy;
    fva_unlock();
    return VA_STATUS_SUCCESS;
}
