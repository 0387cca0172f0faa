// NV12 surfaces in system memory, laid out as a GPU driver lays them out: rows padded to a
// 128-byte pitch, and the chroma plane starting at a luma height rounded up to 32 rows, so a
// client that ignores pitches and offsets gets a wrong picture.
#define _GNU_SOURCE
#include "fake_va.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint32_t align(uint32_t value, uint32_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

static VAStatus create_surfaces(struct fva_driver *driver, unsigned format, unsigned width, unsigned height,
                                VASurfaceID *surfaces, unsigned count) {
    if (format != VA_RT_FORMAT_YUV420) return VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
    if (width == 0 || height == 0 || width > 4096 || height > 4096) return VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    for (unsigned i = 0; i < count; i++) {
        struct fva_surface *surface = calloc(1, sizeof *surface);
        if (surface == NULL) fva_out_of_memory();
        surface->width = width;
        surface->height = height;
        surface->pitch = align(width, 128);
        surface->luma_rows = align(height, 32);
        surface->chroma_offset = (size_t)surface->pitch * surface->luma_rows;
        surface->size = surface->chroma_offset + (size_t)surface->pitch * surface->luma_rows / 2;
        surface->data = malloc(surface->size);
        if (surface->data == NULL) fva_out_of_memory();
        // Black, so padding a decoder may show is the same in every run.
        memset(surface->data, 16, surface->chroma_offset);
        memset(surface->data + surface->chroma_offset, 128, surface->size - surface->chroma_offset);
        surface->derived = VA_INVALID_ID;
        surfaces[i] = fva_table_insert(&driver->surfaces, surface);
        if (surfaces[i] == VA_INVALID_ID) {
            free(surface->data);
            free(surface);
            return VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
        }
        fva_trace("  surface %#x %ux%u pitch %u", surfaces[i], width, height, surface->pitch);
    }
    return VA_STATUS_SUCCESS;
}

VAStatus fva_CreateSurfaces(VADriverContextP ctx, int width, int height, int format, int count, VASurfaceID *surfaces) {
    fva_lock();
    fva_trace("vaCreateSurfaces(%dx%d, format %#x, %d)", width, height, format, count);
    VAStatus status = width <= 0 || height <= 0 || count <= 0
        ? VA_STATUS_ERROR_INVALID_PARAMETER
        : create_surfaces(fva_driver(ctx), (unsigned)format, (unsigned)width, (unsigned)height, surfaces,
                          (unsigned)count);
    fva_unlock();
    return status;
}

VAStatus fva_CreateSurfaces2(VADriverContextP ctx, unsigned int format, unsigned int width, unsigned int height,
                             VASurfaceID *surfaces, unsigned int count, VASurfaceAttrib *attributes,
                             unsigned int attribute_count) {
    fva_lock();
    fva_trace("vaCreateSurfaces(%ux%u, format %#x, %u, %u attributes)", width, height, format, count, attribute_count);
    VAStatus status = VA_STATUS_SUCCESS;
    for (unsigned i = 0; i < attribute_count && status == VA_STATUS_SUCCESS; i++) {
        VASurfaceAttrib *attribute = &attributes[i];
        if (!(attribute->flags & VA_SURFACE_ATTRIB_SETTABLE)) continue;
        switch (attribute->type) {
        case VASurfaceAttribPixelFormat:
            if (attribute->value.type != VAGenericValueTypeInteger || attribute->value.value.i != VA_FOURCC_NV12) {
                status = VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
            }
            break;
        case VASurfaceAttribMemoryType:
            if (attribute->value.value.i != VA_SURFACE_ATTRIB_MEM_TYPE_VA) status = VA_STATUS_ERROR_UNSUPPORTED_MEMORY_TYPE;
            break;
        case VASurfaceAttribUsageHint:
            break;
        default:
            status = VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
            break;
        }
    }
    if (status == VA_STATUS_SUCCESS) status = create_surfaces(fva_driver(ctx), format, width, height, surfaces, count);
    fva_unlock();
    return status;
}

VAStatus fva_DestroySurfaces(VADriverContextP ctx, VASurfaceID *surfaces, int count) {
    fva_lock();
    fva_trace("vaDestroySurfaces(%d)", count);
    struct fva_driver *driver = fva_driver(ctx);
    VAStatus status = VA_STATUS_SUCCESS;
    for (int i = 0; i < count; i++) {
        struct fva_surface *surface = fva_table_get(&driver->surfaces, surfaces[i]);
        if (surface == NULL) {
            status = VA_STATUS_ERROR_INVALID_SURFACE;
            continue;
        }
        if (surface->derived != VA_INVALID_ID) {
            // A derived image still shows this memory: the client would read freed memory.
            fva_trace("vaDestroySurfaces: surface %#x still has derived image %#x", surfaces[i], surface->derived);
            status = VA_STATUS_ERROR_SURFACE_BUSY;
            continue;
        }
        fva_table_take(&driver->surfaces, surfaces[i]);
        free(surface->data);
        free(surface);
    }
    fva_unlock();
    return status;
}

VAStatus fva_QuerySurfaceAttributes(VADriverContextP ctx, VAConfigID config, VASurfaceAttrib *attributes,
                                    unsigned int *count) {
    fva_lock();
    fva_trace("vaQuerySurfaceAttributes(%#x)", config);
    const struct fva_config *made = fva_table_get(&fva_driver(ctx)->configs, config);
    if (made == NULL) {
        fva_unlock();
        return VA_STATUS_ERROR_INVALID_CONFIG;
    }
    // Decoding: down to one macroblock, up to FAKE_VA_DECODE_MAX.
    bool decode = fva_is_decode(made);
    int min = decode ? 16 : 32;
    int max_width = decode ? (int)fva_knobs.decode_max_width : 4096;
    int max_height = decode ? (int)fva_knobs.decode_max_height : 4096;
    const VASurfaceAttrib all[] = {
        {VASurfaceAttribPixelFormat, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE,
         {VAGenericValueTypeInteger, {.i = VA_FOURCC_NV12}}},
        {VASurfaceAttribMinWidth, VA_SURFACE_ATTRIB_GETTABLE, {VAGenericValueTypeInteger, {.i = min}}},
        {VASurfaceAttribMinHeight, VA_SURFACE_ATTRIB_GETTABLE, {VAGenericValueTypeInteger, {.i = min}}},
        {VASurfaceAttribMaxWidth, VA_SURFACE_ATTRIB_GETTABLE, {VAGenericValueTypeInteger, {.i = max_width}}},
        {VASurfaceAttribMaxHeight, VA_SURFACE_ATTRIB_GETTABLE, {VAGenericValueTypeInteger, {.i = max_height}}},
        {VASurfaceAttribMemoryType, VA_SURFACE_ATTRIB_GETTABLE | VA_SURFACE_ATTRIB_SETTABLE,
         {VAGenericValueTypeInteger, {.i = VA_SURFACE_ATTRIB_MEM_TYPE_VA}}},
    };
    unsigned n = sizeof all / sizeof all[0];
    VAStatus status = VA_STATUS_SUCCESS;
    if (attributes == NULL) {
        *count = n;
    } else if (*count < n) {
        *count = n;
        status = VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    } else {
        memcpy(attributes, all, sizeof all);
        *count = n;
    }
    fva_unlock();
    return status;
}

// Encoding and decoding happen inside vaEndPicture, so a surface is ready by the time anyone
// asks, unless the modelled engine (cost.c, FAKE_VA_LEVEL_MS) is still on its picture, or
// FAKE_VA_SYNC_MS makes every wait as long as slow hardware's. Either wait is outside the
// driver's lock, as a real wait for the engine would be.
static VAStatus sync_surface(VADriverContextP ctx, VASurfaceID id, uint64_t timeout_ns) {
    if (fva_knobs.sync_ms > 0) {
        struct timespec wait = {.tv_sec = fva_knobs.sync_ms / 1000, .tv_nsec = (long)(fva_knobs.sync_ms % 1000) * 1000000L};
        while (nanosleep(&wait, &wait) != 0 && errno == EINTR) {}
    }
    fva_lock();
    fva_trace("vaSyncSurface(%#x)", id);
    const struct fva_surface *surface = fva_table_get(&fva_driver(ctx)->surfaces, id);
    int64_t done_ns = surface != NULL ? surface->done_ns : 0;
    fva_unlock();
    if (surface == NULL) return VA_STATUS_ERROR_INVALID_SURFACE;
    return fva_wait_for_engine(done_ns, timeout_ns);
}

VAStatus fva_SyncSurface(VADriverContextP ctx, VASurfaceID id) {
    return sync_surface(ctx, id, VA_TIMEOUT_INFINITE);
}

VAStatus fva_SyncSurface2(VADriverContextP ctx, VASurfaceID id, uint64_t timeout) {
    return sync_surface(ctx, id, timeout);
}

VAStatus fva_QuerySurfaceStatus(VADriverContextP ctx, VASurfaceID id, VASurfaceStatus *status) {
    fva_lock();
    fva_trace("vaQuerySurfaceStatus(%#x)", id);
    VAStatus result = VA_STATUS_ERROR_INVALID_SURFACE;
    const struct fva_surface *surface = fva_table_get(&fva_driver(ctx)->surfaces, id);
    if (surface != NULL) {
        *status = surface->done_ns > fva_now_ns() ? VASurfaceRendering : VASurfaceReady;
        result = VA_STATUS_SUCCESS;
    }
    fva_unlock();
    return result;
}
