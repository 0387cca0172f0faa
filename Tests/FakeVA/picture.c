// Contexts and the picture cycle: vaBeginPicture names the input surface, vaRenderPicture hands
// over parameter buffers (copied at once, as drivers read them then), vaEndPicture checks the
// lot (checks.c) and encodes (encode.c), synchronously. Decode contexts (VAEntrypointVLD) share
// the cycle and hand their buffers to decode.c, which decodes into the render target.
#include "decode.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

VAStatus fva_CreateContext(VADriverContextP ctx, VAConfigID config_id, int width, int height, int flag,
                           VASurfaceID *targets, int target_count, VAContextID *id) {
    (void)flag;
    fva_lock();
    fva_trace("vaCreateContext(%#x, %dx%d, %d render targets)", config_id, width, height, target_count);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_config *config = fva_table_get(&driver->configs, config_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (fva_knobs.fail & FVA_FAIL_CREATE_CONTEXT) {
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    } else if (config == NULL) {
        status = VA_STATUS_ERROR_INVALID_CONFIG;
    } else if (width <= 0 || height <= 0 || width > 4096 || height > 4096) {
        status = VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    } else if (fva_is_decode(config)
               && ((unsigned)width > fva_knobs.decode_max_width || (unsigned)height > fva_knobs.decode_max_height)) {
        status = VA_STATUS_ERROR_RESOLUTION_NOT_SUPPORTED;
    }
    for (int i = 0; status == VA_STATUS_SUCCESS && i < target_count; i++) {
        if (fva_table_get(&driver->surfaces, targets[i]) == NULL) status = VA_STATUS_ERROR_INVALID_SURFACE;
    }
    if (status != VA_STATUS_SUCCESS) {
        fva_unlock();
        return status;
    }
    struct fva_context *context = calloc(1, sizeof *context);
    if (context == NULL) fva_out_of_memory();
    context->config = *config;
    context->width = width;
    context->height = height;
    context->prev_idr_pic_id = -1;
    if (fva_is_decode(config)) context->decode = fva_decode_new();
    *id = fva_table_insert(&driver->contexts, context);
    if (*id == VA_INVALID_ID) {
        fva_free_context(context);
        status = VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    }
    fva_unlock();
    return status;
}

static void clear_picture(struct fva_picture *picture) {
    for (unsigned i = 0; i < picture->packed_count; i++) free(picture->packed[i].data);
    for (unsigned i = 0; i < picture->slice_header_count; i++) free(picture->slice_headers[i].data);
    memset(picture, 0, sizeof *picture);
    picture->render_target = VA_INVALID_SURFACE;
}

void fva_free_context(struct fva_context *context) {
    clear_picture(&context->picture);
    fva_decode_free(context->decode);
    free(context->pocs);
    free(context);
}

VAStatus fva_DestroyContext(VADriverContextP ctx, VAContextID id) {
    fva_lock();
    fva_trace("vaDestroyContext(%#x)", id);
    struct fva_context *context = fva_table_take(&fva_driver(ctx)->contexts, id);
    if (context != NULL) fva_free_context(context);
    fva_unlock();
    return context != NULL ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_CONTEXT;
}

VAStatus fva_BeginPicture(VADriverContextP ctx, VAContextID context_id, VASurfaceID target) {
    fva_lock();
    fva_trace("vaBeginPicture(%#x, %#x)", context_id, target);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_context *context = fva_table_get(&driver->contexts, context_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (context == NULL) {
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    } else if (fva_table_get(&driver->surfaces, target) == NULL) {
        status = VA_STATUS_ERROR_INVALID_SURFACE;
    } else if (context->in_picture) {
        fva_violation("vaBeginPicture while a picture is open, expected vaEndPicture first, got vaBeginPicture");
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        clear_picture(&context->picture);
        context->picture.render_target = target;
        context->in_picture = true;
        if (context->decode != NULL) fva_decode_begin(context->decode);
    }
    fva_unlock();
    return status;
}

static uint32_t packed_bit(uint32_t type) {
    switch (type) {
    case VAEncPackedHeaderSequence: return VA_ENC_PACKED_HEADER_SEQUENCE;
    case VAEncPackedHeaderPicture: return VA_ENC_PACKED_HEADER_PICTURE;
    case VAEncPackedHeaderSlice: return VA_ENC_PACKED_HEADER_SLICE;
    case VAEncPackedHeaderRawData: return VA_ENC_PACKED_HEADER_MISC | VA_ENC_PACKED_HEADER_RAW_DATA;
    default: return 0;
    }
}

static bool size_is(const struct fva_buffer *buffer, size_t expected, const char *what) {
    size_t got = (size_t)buffer->element_size * buffer->elements;
    if (got == expected) return true;
    fva_violation("%s buffer size, expected %zu, got %zu", what, expected, got);
    return false;
}

static bool render_packed_data(struct fva_context *context, const struct fva_buffer *buffer) {
    struct fva_picture *picture = &context->picture;
    if (!picture->awaiting_packed_data) {
        fva_violation("packed header data buffer order, expected a packed header parameter buffer before it, "
                      "got the data buffer alone");
        return false;
    }
    picture->awaiting_packed_data = false;
    VAEncPackedHeaderParameterBuffer *parameters = &picture->pending;
    size_t bytes = (parameters->bit_length + 7) / 8;
    size_t got = (size_t)buffer->element_size * buffer->elements;
    if (got < bytes) {
        fva_violation("packed header data size, expected at least %zu bytes for bit_length %u, got %zu", bytes,
                      parameters->bit_length, got);
        return false;
    }
    uint32_t bit = packed_bit(parameters->type);
    if (bit == 0) {
        fva_violation("packed header type, expected 1…4, got %u", parameters->type);
        return false;
    }
    if ((bit & context->config.packed_headers) == 0) {
        fva_violation("packed header type %u not declared at vaCreateConfig, expected EncPackedHeaders to include "
                      "%#x, got %#x", parameters->type, bit, context->config.packed_headers);
        return false;
    }
    if (parameters->type != VAEncPackedHeaderSlice && parameters->bit_length % 8 != 0) {
        fva_violation("packed header type %u bit_length, expected whole bytes, got %u bits", parameters->type,
                      parameters->bit_length);
        return false;
    }
    bool slice = parameters->type == VAEncPackedHeaderSlice;
    unsigned *count = slice ? &picture->slice_header_count : &picture->packed_count;
    if (*count == (slice ? (unsigned)FVA_MAX_SLICES : (unsigned)FVA_MAX_PACKED)) {
        fva_violation("packed headers in one picture, expected at most %u, got more", (unsigned)FVA_MAX_PACKED);
        return false;
    }
    struct fva_packed *packed = slice ? &picture->slice_headers[*count] : &picture->packed[*count];
    packed->type = parameters->type;
    packed->bit_length = parameters->bit_length;
    packed->emulation_bytes = parameters->has_emulation_bytes != 0;
    packed->size = bytes;
    packed->data = malloc(bytes ? bytes : 1);
    if (packed->data == NULL) fva_out_of_memory();
    memcpy(packed->data, buffer->data, bytes);
    (*count)++;
    fva_stats.packed[parameters->type]++;
    if (fva_knobs.trace) {
        char hex[3 * 48 + 1] = "";
        for (size_t i = 0; i < bytes && i < 48; i++) snprintf(hex + 3 * i, 4, " %02x", packed->data[i]);
        fva_trace("  packed header type %u, %u bits, emulation bytes %d:%s%s", packed->type, packed->bit_length,
                  packed->emulation_bytes, hex, bytes > 48 ? " …" : "");
    }
    return true;
}

static bool render_misc(struct fva_context *context, const struct fva_buffer *buffer) {
    size_t size = (size_t)buffer->element_size * buffer->elements;
    if (size < sizeof(VAEncMiscParameterBuffer)) {
        fva_violation("misc parameter buffer size, expected at least %zu, got %zu", sizeof(VAEncMiscParameterBuffer),
                      size);
        return false;
    }
    const VAEncMiscParameterBuffer *misc = (const VAEncMiscParameterBuffer *)buffer->data;
    size_t payload = size - sizeof(VAEncMiscParameterBuffer);
    struct fva_rate_control *rate = &context->rate;
    switch (misc->type) {
    case VAEncMiscParameterTypeRateControl:
        if (payload < sizeof rate->rc) break;
        memcpy(&rate->rc, misc->data, sizeof rate->rc);
        rate->have_rc = true;
        fva_stats.rc = rate->rc;
        fva_stats.rc_count++;
        return true;
    case VAEncMiscParameterTypeHRD:
        if (payload < sizeof rate->hrd) break;
        memcpy(&rate->hrd, misc->data, sizeof rate->hrd);
        rate->have_hrd = true;
        fva_stats.hrd = rate->hrd;
        fva_stats.hrd_count++;
        return true;
    case VAEncMiscParameterTypeFrameRate:
        if (payload < sizeof rate->frame_rate) break;
        memcpy(&rate->frame_rate, misc->data, sizeof rate->frame_rate);
        rate->have_frame_rate = true;
        fva_stats.frame_rate = rate->frame_rate;
        fva_stats.frame_rate_count++;
        return true;
    case VAEncMiscParameterTypeQualityLevel:
        if (payload < sizeof rate->quality) break;
        memcpy(&rate->quality, misc->data, sizeof rate->quality);
        rate->have_quality = true;
        fva_stats.quality = rate->quality;
        fva_stats.quality_count++;
        return true;
    default:
        // Other tuning (max frame size, ROI, …) changes nothing in I_PCM output.
        fva_trace("  misc parameter type %u ignored", misc->type);
        return true;
    }
    fva_violation("misc parameter type %u payload size, expected at least the structure's, got %zu", misc->type,
                  payload);
    return false;
}

static bool render_buffer(struct fva_driver *driver, VAContextID context_id, struct fva_context *context,
                          VABufferID id) {
    struct fva_buffer *buffer = fva_table_get(&driver->buffers, id);
    if (buffer == NULL) {
        fva_violation("vaRenderPicture buffer, expected a live buffer id, got %#x", id);
        return false;
    }
    if (buffer->context != context_id) {
        fva_violation("buffer %#x context, expected %#x, got %#x", id, context_id, buffer->context);
        return false;
    }
    if (buffer->mapped) {
        fva_violation("buffer %#x rendered while mapped, expected vaUnmapBuffer first, got %u mappings", id,
                      buffer->mapped);
        return false;
    }
    if (context->decode != NULL) return fva_decode_render(context->decode, buffer, id);
    struct fva_picture *picture = &context->picture;
    if (picture->awaiting_packed_data && buffer->type != VAEncPackedHeaderDataBufferType) {
        fva_violation("buffer after a packed header parameter buffer, expected its data buffer, got type %d",
                      buffer->type);
        return false;
    }
    fva_trace("  render buffer %#x type %d", id, buffer->type);
    switch (buffer->type) {
    case VAEncSequenceParameterBufferType:
        if (!size_is(buffer, sizeof context->sequence, "sequence parameter")) return false;
        memcpy(&context->sequence, buffer->data, sizeof context->sequence);
        context->have_sequence = true;
        picture->sequence_params_here = true;
        fva_stats.sequence = context->sequence;
        fva_stats.have_sequence = true;
        return true;
    case VAEncPictureParameterBufferType:
        if (!size_is(buffer, sizeof picture->params, "picture parameter")) return false;
        if (picture->have_picture_params) {
            fva_violation("picture parameter buffers in one picture, expected 1, got 2");
            return false;
        }
        memcpy(&picture->params, buffer->data, sizeof picture->params);
        picture->have_picture_params = true;
        return true;
    case VAEncSliceParameterBufferType:
        if (buffer->element_size != sizeof(VAEncSliceParameterBufferH264)) {
            fva_violation("slice parameter buffer element size, expected %zu, got %u",
                          sizeof(VAEncSliceParameterBufferH264), buffer->element_size);
            return false;
        }
        for (unsigned i = 0; i < buffer->elements; i++) {
            if (picture->slice_count >= fva_knobs.max_slices) {
                fva_violation("slices in one picture, expected at most EncMaxSlices %u, got more", fva_knobs.max_slices);
                return false;
            }
            memcpy(&picture->slices[picture->slice_count++], buffer->data + (size_t)i * buffer->element_size,
                   sizeof picture->slices[0]);
        }
        return true;
    case VAEncPackedHeaderParameterBufferType:
        if (!size_is(buffer, sizeof picture->pending, "packed header parameter")) return false;
        memcpy(&picture->pending, buffer->data, sizeof picture->pending);
        picture->awaiting_packed_data = true;
        return true;
    case VAEncPackedHeaderDataBufferType:
        return render_packed_data(context, buffer);
    case VAEncMiscParameterBufferType:
        return render_misc(context, buffer);
    default:
        fva_violation("buffer %#x type in vaRenderPicture, expected a parameter or packed header buffer, got %d", id,
                      buffer->type);
        return false;
    }
}

VAStatus fva_RenderPicture(VADriverContextP ctx, VAContextID context_id, VABufferID *buffers, int count) {
    fva_lock();
    fva_trace("vaRenderPicture(%#x, %d buffers)", context_id, count);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_context *context = fva_table_get(&driver->contexts, context_id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (context == NULL) {
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    } else if (!context->in_picture) {
        fva_violation("vaRenderPicture outside a picture, expected vaBeginPicture first, got none");
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        for (int i = 0; i < count; i++) {
            if (!render_buffer(driver, context_id, context, buffers[i])) {
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
                break;
            }
        }
    }
    if (status == VA_STATUS_ERROR_INVALID_PARAMETER) fva_write_report();
    fva_unlock();
    return status;
}

unsigned fva_quality_level(const struct fva_context *context) {
    return context->rate.have_quality ? context->rate.quality.quality_level : 0;
}

static void count_picture(const struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    fva_stats.frames++;
    unsigned level = fva_quality_level(context);
    if (level <= FVA_MAX_QUALITY) fva_stats.pictures_by_quality[level]++;
    if (picture->params.pic_fields.bits.idr_pic_flag) fva_stats.idr++;
    for (unsigned i = 0; i < picture->slice_count; i++) {
        unsigned type = picture->slices[i].slice_type % 5;
        fva_stats.last_qp[type] = picture->params.pic_init_qp + picture->slices[i].slice_qp_delta;
        switch (type) {
        case H264_SLICE_P: fva_stats.p_slices++; break;
        case H264_SLICE_B: fva_stats.b_slices++; break;
        default: fva_stats.i_slices++; break;
        }
    }
}

VAStatus fva_EndPicture(VADriverContextP ctx, VAContextID context_id) {
    fva_lock();
    fva_trace("vaEndPicture(%#x)", context_id);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_context *context = fva_table_get(&driver->contexts, context_id);
    if (context == NULL || (fva_knobs.fail & FVA_FAIL_END_PICTURE)) {
        fva_unlock();
        return context == NULL ? VA_STATUS_ERROR_INVALID_CONTEXT : VA_STATUS_ERROR_OPERATION_FAILED;
    }
    VAStatus status = VA_STATUS_SUCCESS;
    if (context->decode != NULL) {
        if (!context->in_picture) {
            fva_violation("decode: vaEndPicture outside a picture, expected vaBeginPicture first, got none");
            status = VA_STATUS_ERROR_INVALID_PARAMETER;
        } else {
            context->in_picture = false;
            status = fva_decode_end(driver, context, context->picture.render_target);
        }
        fva_write_report();
        fva_unlock();
        return status;
    }
    fva_stats.config = context->config;
    fva_stats.have_config = true;
    if (!context->in_picture) {
        fva_violation("vaEndPicture outside a picture, expected vaBeginPicture first, got none");
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        context->in_picture = false;
        if (fva_check_picture(driver, context)) {
            struct fva_buffer *coded = fva_table_get(&driver->buffers, context->picture.params.coded_buf);
            if (!fva_encode_picture(driver, context, coded->coded)) {
                status = VA_STATUS_ERROR_INVALID_PARAMETER;
            } else {
                fva_update_dpb(context);
                count_picture(context);
                struct fva_surface *surfaces[] = {
                    fva_table_get(&driver->surfaces, context->picture.render_target),
                    fva_table_get(&driver->surfaces, context->picture.params.CurrPic.picture_id),
                };
                fva_schedule_picture(context, surfaces, 2, coded->coded);
            }
        } else {
            status = VA_STATUS_ERROR_INVALID_PARAMETER;
        }
        clear_picture(&context->picture);
    }
    fva_write_report();
    fva_unlock();
    return status;
}
