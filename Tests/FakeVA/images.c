// Images: derived (the surface's own memory, NV12) or created (NV12, I420 or YV12 in a buffer of
// their own) and copied to and from surfaces with vaPutImage and vaGetImage. Pitches and plane
// offsets are padded as on real hardware.
#include "fake_va.h"

#include <stdlib.h>
#include <string.h>

static const VAImageFormat formats[] = {
    {.fourcc = VA_FOURCC_NV12, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 12},
    {.fourcc = VA_FOURCC_I420, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 12},
    {.fourcc = VA_FOURCC_YV12, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 12},
};

static uint32_t align(uint32_t value, uint32_t alignment) {
    return (value + alignment - 1) / alignment * alignment;
}

VAStatus fva_QueryImageFormats(VADriverContextP ctx, VAImageFormat *list, int *count) {
    (void)ctx;
    fva_lock();
    fva_trace("vaQueryImageFormats");
    memcpy(list, formats, sizeof formats);
    *count = (int)(sizeof formats / sizeof formats[0]);
    fva_unlock();
    return VA_STATUS_SUCCESS;
}

static VAStatus add_image(struct fva_driver *driver, struct fva_image *image, struct fva_buffer *buffer,
                          VAImage *out) {
    image->image.buf = fva_table_insert(&driver->buffers, buffer);
    image->image.image_id = fva_table_insert(&driver->images, image);
    if (image->image.buf == VA_INVALID_ID || image->image.image_id == VA_INVALID_ID) {
        fva_out_of_memory();
    }
    *out = image->image;
    return VA_STATUS_SUCCESS;
}

VAStatus fva_CreateImage(VADriverContextP ctx, VAImageFormat *format, int width, int height, VAImage *out) {
    fva_lock();
    fva_trace("vaCreateImage(%.4s, %dx%d)", (const char *)&format->fourcc, width, height);
    if (width <= 0 || height <= 0 || width > 4096 || height > 4096) {
        fva_unlock();
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    }
    if (format->fourcc != VA_FOURCC_NV12 && format->fourcc != VA_FOURCC_I420 && format->fourcc != VA_FOURCC_YV12) {
        fva_unlock();
        return VA_STATUS_ERROR_INVALID_IMAGE_FORMAT;
    }
    struct fva_image *image = calloc(1, sizeof *image);
    if (image == NULL) fva_out_of_memory();
    image->derived_from = VA_INVALID_SURFACE;
    VAImage *va = &image->image;
    va->format = *format;
    va->format.byte_order = VA_LSB_FIRST;
    va->format.bits_per_pixel = 12;
    va->width = (uint16_t)width;
    va->height = (uint16_t)height;
    uint32_t rows = align((uint32_t)height, 16);
    va->pitches[0] = align((uint32_t)width, 128);
    if (format->fourcc == VA_FOURCC_NV12) {
        va->num_planes = 2;
        va->pitches[1] = va->pitches[0];
        va->offsets[1] = va->pitches[0] * rows;
        va->data_size = va->offsets[1] + va->pitches[1] * rows / 2;
    } else {
        va->num_planes = 3;
        va->pitches[1] = va->pitches[2] = align(((uint32_t)width + 1) / 2, 64);
        uint32_t first = va->pitches[0] * rows, second = first + va->pitches[1] * rows / 2;
        // I420 is Y U V; YV12 is Y V U: offsets[1] is the second plane in memory either way.
        va->offsets[1] = first;
        va->offsets[2] = second;
        va->data_size = second + va->pitches[2] * rows / 2;
    }
    struct fva_buffer *buffer = fva_new_buffer(VAImageBufferType, VA_INVALID_ID, va->data_size, 1);
    memset(buffer->data, 0, va->data_size);
    VAStatus status = add_image(fva_driver(ctx), image, buffer, out);
    fva_stats.images_created++;
    fva_unlock();
    return status;
}

VAStatus fva_DeriveImage(VADriverContextP ctx, VASurfaceID surface_id, VAImage *out) {
    fva_lock();
    fva_trace("vaDeriveImage(%#x)", surface_id);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_surface *surface = fva_table_get(&driver->surfaces, surface_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (surface == NULL) {
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    } else if (fva_knobs.no_derive) {
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    } else if (surface->derived != VA_INVALID_ID) {
        status = VA_STATUS_ERROR_SURFACE_BUSY;
    }
    if (status != VA_STATUS_SUCCESS) {
        fva_unlock();
        return status;
    }
    struct fva_image *image = calloc(1, sizeof *image);
    struct fva_buffer *buffer = calloc(1, sizeof *buffer);
    if (image == NULL || buffer == NULL) fva_out_of_memory();
    image->derived_from = surface_id;
    VAImage *va = &image->image;
    va->format = formats[0];
    va->width = (uint16_t)surface->width;
    va->height = (uint16_t)surface->height;
    va->num_planes = 2;
    va->pitches[0] = va->pitches[1] = surface->pitch;
    va->offsets[1] = (uint32_t)surface->chroma_offset;
    va->data_size = (uint32_t)surface->size;
    *buffer = (struct fva_buffer){
        .type = VAImageBufferType, .context = VA_INVALID_ID, .element_size = va->data_size, .elements = 1,
        .data = surface->data, .owns_data = false, .surface = surface_id,
    };
    status = add_image(driver, image, buffer, out);
    surface->derived = image->image.image_id;
    fva_stats.images_derived++;
    fva_unlock();
    return status;
}

void fva_destroy_image(struct fva_driver *driver, VAImageID id) {
    struct fva_image *image = fva_table_take(&driver->images, id);
    if (image == NULL) return;
    if (image->derived_from != VA_INVALID_SURFACE) {
        struct fva_surface *surface = fva_table_get(&driver->surfaces, image->derived_from);
        if (surface != NULL) surface->derived = VA_INVALID_ID;
    }
    fva_free_buffer(fva_table_take(&driver->buffers, image->image.buf));
    free(image);
}

VAStatus fva_DestroyImage(VADriverContextP ctx, VAImageID id) {
    fva_lock();
    fva_trace("vaDestroyImage(%#x)", id);
    struct fva_driver *driver = fva_driver(ctx);
    VAStatus status = fva_table_get(&driver->images, id) ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_IMAGE;
    fva_destroy_image(driver, id);
    fva_unlock();
    return status;
}

// Plane pointers of an image, as Y, U, V (U and V interleaved for NV12: V = U + 1, step 2).
struct planes {
    uint8_t *y, *u, *v;
    uint32_t y_pitch, uv_pitch, uv_step;
};

static struct planes image_planes(const VAImage *image, uint8_t *data) {
    struct planes p = {.y = data + image->offsets[0], .y_pitch = image->pitches[0]};
    if (image->format.fourcc == VA_FOURCC_NV12) {
        p.u = data + image->offsets[1];
        p.v = p.u + 1;
        p.uv_pitch = image->pitches[1];
        p.uv_step = 2;
    } else {
        bool yv12 = image->format.fourcc == VA_FOURCC_YV12;
        p.u = data + image->offsets[yv12 ? 2 : 1];
        p.v = data + image->offsets[yv12 ? 1 : 2];
        p.uv_pitch = image->pitches[1];
        p.uv_step = 1;
    }
    return p;
}

static struct planes surface_planes(const struct fva_surface *surface) {
    uint8_t *chroma = surface->data + surface->chroma_offset;
    return (struct planes){.y = surface->data, .u = chroma, .v = chroma + 1, .y_pitch = surface->pitch,
                           .uv_pitch = surface->pitch, .uv_step = 2};
}

// Copies a w×h rectangle (even position and size) between two pictures.
static void copy_rectangle(const struct planes *from, unsigned from_x, unsigned from_y, const struct planes *to,
                           unsigned to_x, unsigned to_y, unsigned w, unsigned h) {
    for (unsigned row = 0; row < h; row++) {
        memcpy(to->y + (size_t)(to_y + row) * to->y_pitch + to_x,
               from->y + (size_t)(from_y + row) * from->y_pitch + from_x, w);
    }
    for (unsigned row = 0; row < h / 2; row++) {
        const uint8_t *u = from->u + (size_t)(from_y / 2 + row) * from->uv_pitch + from_x / 2 * from->uv_step;
        const uint8_t *v = from->v + (size_t)(from_y / 2 + row) * from->uv_pitch + from_x / 2 * from->uv_step;
        uint8_t *tu = to->u + (size_t)(to_y / 2 + row) * to->uv_pitch + to_x / 2 * to->uv_step;
        uint8_t *tv = to->v + (size_t)(to_y / 2 + row) * to->uv_pitch + to_x / 2 * to->uv_step;
        for (unsigned column = 0; column < w / 2; column++) {
            tu[column * to->uv_step] = u[column * from->uv_step];
            tv[column * to->uv_step] = v[column * from->uv_step];
        }
    }
}

static bool fits(int x, int y, unsigned w, unsigned h, unsigned width, unsigned height) {
    return x >= 0 && y >= 0 && (unsigned)x + w <= width && (unsigned)y + h <= height && x % 2 == 0 && y % 2 == 0
        && w % 2 == 0 && h % 2 == 0;
}

VAStatus fva_GetImage(VADriverContextP ctx, VASurfaceID surface_id, int x, int y, unsigned int width,
                      unsigned int height, VAImageID image_id) {
    fva_lock();
    fva_trace("vaGetImage(%#x, %d,%d %ux%u, %#x)", surface_id, x, y, width, height, image_id);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_surface *surface = fva_table_get(&driver->surfaces, surface_id);
    struct fva_image *image = fva_table_get(&driver->images, image_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (surface == NULL) {
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    } else if (image == NULL) {
        status = VA_STATUS_ERROR_INVALID_IMAGE;
    } else if (!fits(x, y, width, height, surface->width, surface->height)
               || width > image->image.width || height > image->image.height) {
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        struct fva_buffer *buffer = fva_table_get(&driver->buffers, image->image.buf);
        struct planes from = surface_planes(surface), to = image_planes(&image->image, buffer->data);
        copy_rectangle(&from, (unsigned)x, (unsigned)y, &to, 0, 0, width, height);
        fva_stats.images_got++;
    }
    fva_unlock();
    return status;
}

VAStatus fva_PutImage(VADriverContextP ctx, VASurfaceID surface_id, VAImageID image_id, int src_x, int src_y,
                      unsigned int src_width, unsigned int src_height, int dest_x, int dest_y,
                      unsigned int dest_width, unsigned int dest_height) {
    fva_lock();
    fva_trace("vaPutImage(%#x, %#x, %d,%d %ux%u → %d,%d %ux%u)", surface_id, image_id, src_x, src_y, src_width,
              src_height, dest_x, dest_y, dest_width, dest_height);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_surface *surface = fva_table_get(&driver->surfaces, surface_id);
    struct fva_image *image = fva_table_get(&driver->images, image_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (fva_knobs.fail & FVA_FAIL_PUT_IMAGE) {
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    } else if (surface == NULL) {
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    } else if (image == NULL) {
        status = VA_STATUS_ERROR_INVALID_IMAGE;
    } else if (src_width != dest_width || src_height != dest_height) {
        status = VA_STATUS_ERROR_UNIMPLEMENTED;     // no scaling
    } else if (!fits(src_x, src_y, src_width, src_height, image->image.width, image->image.height)
               || !fits(dest_x, dest_y, dest_width, dest_height, surface->width, surface->height)) {
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        struct fva_buffer *buffer = fva_table_get(&driver->buffers, image->image.buf);
        struct planes from = image_planes(&image->image, buffer->data), to = surface_planes(surface);
        copy_rectangle(&from, (unsigned)src_x, (unsigned)src_y, &to, (unsigned)dest_x, (unsigned)dest_y, src_width,
                       src_height);
        fva_stats.images_put++;
    }
    fva_unlock();
    return status;
}
