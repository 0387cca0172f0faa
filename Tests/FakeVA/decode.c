// H.264 decoding (VAEntrypointVLD) of what this driver's encoder writes: pictures whose slices
// are made only of I_PCM macroblocks. vaRenderPicture takes the buffers libavcodec's
// vaapi_h264.c sends — VAPictureParameterBufferH264 and VAIQMatrixBufferH264 in one call, then
// per slice a VASliceParameterBufferH264 and the VASliceDataBufferType buffer holding the NAL
// unit from its header byte, emulation prevention bytes still in — and copies them at once.
// vaEndPicture checks them against each other, against the surfaces and against each slice
// header (parsed from the data), then decodes every slice into the render target.
//
// Status of a refused picture: VA_STATUS_ERROR_INVALID_PARAMETER when the parameter buffers are
// wrong or disagree with the slice headers; VA_STATUS_ERROR_DECODING_ERROR when the slice data
// is what the double cannot decode exactly (not I_PCM, cut short, macroblocks missing).
// libavcodec treats both alike: "Failed to end picture decode issue", AVERROR(EIO).
#include "decode.h"

#include "slice_data.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct fva_decode *fva_decode_new(void) {
    struct fva_decode *decode = calloc(1, sizeof *decode);
    if (decode == NULL) fva_out_of_memory();
    return decode;
}

static void clear_slices(struct fva_decode *decode) {
    for (unsigned i = 0; i < decode->slice_count; i++) free(decode->slices[i].data);
    decode->slice_count = 0;
    free(decode->pending);
    decode->pending = NULL;
    decode->pending_count = 0;
}

void fva_decode_free(struct fva_decode *decode) {
    if (decode == NULL) return;
    clear_slices(decode);
    free(decode->slices);
    free(decode);
}

void fva_decode_begin(struct fva_decode *decode) {
    clear_slices(decode);
    decode->have_picture_params = false;
    decode->have_iq_matrix = false;
    decode->pictures++;
}

bool fva_decode_buffer_type(VABufferType type) {
    return type == VAPictureParameterBufferType || type == VAIQMatrixBufferType
        || type == VASliceParameterBufferType || type == VASliceDataBufferType;
}

static void set_label(const struct fva_decode *decode, int slice) {
    if (slice < 0) {
        snprintf(fva_picture_label, sizeof fva_picture_label, "decode: picture %u: ", decode->pictures - 1);
    } else {
        snprintf(fva_picture_label, sizeof fva_picture_label, "decode: picture %u slice %d: ", decode->pictures - 1,
                 slice);
    }
}

// ---- vaRenderPicture ----

static bool add_slices(struct fva_decode *decode, const struct fva_buffer *buffer, VABufferID id) {
    size_t size = (size_t)buffer->element_size * buffer->elements;
    for (unsigned i = 0; i < decode->pending_count; i++) {
        const VASliceParameterBufferH264 *params = &decode->pending[i];
        if (params->slice_data_offset > size || params->slice_data_size > size - params->slice_data_offset) {
            fva_violation("slice parameters %u slice_data_offset %u + slice_data_size %u, expected within slice data "
                          "buffer %#x's %zu bytes, got beyond", i, params->slice_data_offset, params->slice_data_size,
                          id, size);
            return false;
        }
        if (decode->slice_count == decode->slice_capacity) {
            unsigned capacity = decode->slice_capacity ? decode->slice_capacity * 2 : 16;
            struct fva_decode_slice *slices = realloc(decode->slices, capacity * sizeof *slices);
            if (slices == NULL) fva_out_of_memory();
            decode->slices = slices;
            decode->slice_capacity = capacity;
        }
        struct fva_decode_slice *slice = &decode->slices[decode->slice_count++];
        slice->params = *params;
        slice->size = params->slice_data_size;
        slice->data = malloc(slice->size ? slice->size : 1);
        if (slice->data == NULL) fva_out_of_memory();
        memcpy(slice->data, buffer->data + params->slice_data_offset, slice->size);
    }
    free(decode->pending);
    decode->pending = NULL;
    decode->pending_count = 0;
    return true;
}

static bool render(struct fva_decode *decode, const struct fva_buffer *buffer, VABufferID id) {
    size_t size = (size_t)buffer->element_size * buffer->elements;
    if (decode->pending_count > 0 && buffer->type != VASliceDataBufferType) {
        fva_violation("buffer after slice parameters, expected their slice data buffer, got type %d", buffer->type);
        return false;
    }
    switch (buffer->type) {
    case VAPictureParameterBufferType:
        if (size != sizeof decode->params) {
            fva_violation("picture parameter buffer size, expected %zu (VAPictureParameterBufferH264), got %zu",
                          sizeof decode->params, size);
            return false;
        }
        if (decode->have_picture_params) {
            fva_violation("picture parameter buffers in one picture, expected 1, got 2");
            return false;
        }
        memcpy(&decode->params, buffer->data, sizeof decode->params);
        decode->have_picture_params = true;
        return true;
    case VAIQMatrixBufferType:
        if (size != sizeof decode->iq_matrix) {
            fva_violation("IQ matrix buffer size, expected %zu (VAIQMatrixBufferH264), got %zu",
                          sizeof decode->iq_matrix, size);
            return false;
        }
        memcpy(&decode->iq_matrix, buffer->data, sizeof decode->iq_matrix);
        decode->have_iq_matrix = true;
        return true;
    case VASliceParameterBufferType:
        if (buffer->element_size != sizeof(VASliceParameterBufferH264)) {
            fva_violation("slice parameter buffer element size, expected %zu (VASliceParameterBufferH264), got %u",
                          sizeof(VASliceParameterBufferH264), buffer->element_size);
            return false;
        }
        decode->pending = malloc(size);
        if (decode->pending == NULL) fva_out_of_memory();
        memcpy(decode->pending, buffer->data, size);
        decode->pending_count = buffer->elements;
        return true;
    case VASliceDataBufferType:
        if (decode->pending_count == 0) {
            fva_violation("slice data buffer %#x, expected slice parameters before it, got none", id);
            return false;
        }
        return add_slices(decode, buffer, id);
    default:
        fva_violation("buffer %#x type in vaRenderPicture of a decode context, expected picture parameters, IQ matrix, "
                      "slice parameters or slice data, got %d", id, buffer->type);
        return false;
    }
}

bool fva_decode_render(struct fva_decode *decode, const struct fva_buffer *buffer, VABufferID id) {
    set_label(decode, -1);
    bool good = render(decode, buffer, id);
    fva_picture_label[0] = '\0';
    return good;
}

// ---- the checks at vaEndPicture ----

static bool picture_valid(const VAPictureH264 *picture) {
    return !(picture->flags & VA_PICTURE_H264_INVALID) && picture->picture_id != VA_INVALID_SURFACE;
}

static bool in_reference_frames(const VAPictureParameterBufferH264 *params, VASurfaceID surface) {
    for (unsigned i = 0; i < 16; i++) {
        if (picture_valid(&params->ReferenceFrames[i]) && params->ReferenceFrames[i].picture_id == surface) return true;
    }
    return false;
}

static void check_references(struct fva_driver *driver, const VAPictureParameterBufferH264 *params) {
    for (unsigned i = 0; i < 16; i++) {
        const VAPictureH264 *reference = &params->ReferenceFrames[i];
        if (!picture_valid(reference)) continue;
        if (fva_table_get(&driver->surfaces, reference->picture_id) == NULL) {
            fva_violation("ReferenceFrames[%u], expected a live surface, got %#x", i, reference->picture_id);
        } else if (reference->picture_id == params->CurrPic.picture_id) {
            fva_violation("ReferenceFrames[%u], expected a surface other than CurrPic's, got %#x", i,
                          reference->picture_id);
        }
        for (unsigned j = 0; j < i; j++) {
            const VAPictureH264 *earlier = &params->ReferenceFrames[j];
            if (picture_valid(earlier) && earlier->picture_id == reference->picture_id) {
                fva_violation("ReferenceFrames[%u], expected each surface once, got %#x again (ReferenceFrames[%u])", i,
                              reference->picture_id, j);
            }
        }
    }
}

static void check_sequence(struct fva_driver *driver, const struct fva_context *context, VASurfaceID target) {
    const VAPictureParameterBufferH264 *p = &context->decode->params;
    if (p->CurrPic.picture_id != target) {
        fva_violation("CurrPic.picture_id, expected the render target %#x, got %#x", target, p->CurrPic.picture_id);
    }
    if (p->CurrPic.flags & (VA_PICTURE_H264_INVALID | VA_PICTURE_H264_TOP_FIELD | VA_PICTURE_H264_BOTTOM_FIELD)) {
        fva_violation("CurrPic.flags, expected a frame (no INVALID or field flags), got %#x", p->CurrPic.flags);
    }
    if (p->seq_fields.bits.chroma_format_idc != 1) {
        fva_violation("chroma_format_idc, expected 1 (4:2:0), got %u", p->seq_fields.bits.chroma_format_idc);
    }
    if (p->bit_depth_luma_minus8 != 0 || p->bit_depth_chroma_minus8 != 0) {
        fva_violation("bit depth, expected 8, got luma %u chroma %u", p->bit_depth_luma_minus8 + 8u,
                      p->bit_depth_chroma_minus8 + 8u);
    }
    if (!p->seq_fields.bits.frame_mbs_only_flag || p->seq_fields.bits.mb_adaptive_frame_field_flag
        || p->pic_fields.bits.field_pic_flag) {
        fva_violation("frame_mbs_only_flag %u, mb_adaptive_frame_field_flag %u, field_pic_flag %u, expected frames only "
                      "(1, 0, 0: the double decodes no field or MBAFF coding), got these",
                      p->seq_fields.bits.frame_mbs_only_flag, p->seq_fields.bits.mb_adaptive_frame_field_flag,
                      p->pic_fields.bits.field_pic_flag);
    }
    if (p->seq_fields.bits.pic_order_cnt_type == 1) {
        fva_violation("pic_order_cnt_type, expected 0 or 2 (type 1 is not decoded by the double), got 1");
    }
    VAProfile profile = context->config.profile;
    if (profile == VAProfileH264ConstrainedBaseline && p->pic_fields.bits.entropy_coding_mode_flag) {
        fva_violation("entropy_coding_mode_flag in Constrained Baseline, expected 0 (CAVLC), got 1");
    }
    if (profile != VAProfileH264High && p->pic_fields.bits.transform_8x8_mode_flag) {
        fva_violation("transform_8x8_mode_flag in %s profile, expected 0, got 1", fva_profile_name(profile));
    }
    unsigned width_mbs = p->picture_width_in_mbs_minus1 + 1u, height_mbs = p->picture_height_in_mbs_minus1 + 1u;
    unsigned context_width_mbs = ((unsigned)context->width + 15) / 16;
    unsigned context_height_mbs = ((unsigned)context->height + 15) / 16;
    if (width_mbs > context_width_mbs || height_mbs > context_height_mbs) {
        fva_violation("picture size in macroblocks, expected at most %ux%u (the context's %dx%d), got %ux%u",
                      context_width_mbs, context_height_mbs, context->width, context->height, width_mbs, height_mbs);
    }
    const struct fva_surface *surface = fva_table_get(&driver->surfaces, target);
    if (surface != NULL && ((surface->width + 15) / 16 < width_mbs || (surface->height + 15) / 16 < height_mbs)) {
        fva_violation("render target %#x, expected room for %ux%u macroblocks, got %ux%u pixels", target, width_mbs,
                      height_mbs, surface->width, surface->height);
    }
    check_references(driver, p);
}

static void check_list(const VAPictureParameterBufferH264 *params, const VAPictureH264 *list, unsigned active,
                       unsigned which) {
    for (unsigned i = 0; i < active && i < 32; i++) {
        if (picture_valid(&list[i]) && !in_reference_frames(params, list[i].picture_id)) {
            fva_violation("RefPicList%u[%u], expected a surface of ReferenceFrames, got %#x", which, i,
                          list[i].picture_id);
        }
    }
}

static void check_slice_params(const struct fva_context *context, const VASliceParameterBufferH264 *slice,
                               unsigned macroblocks) {
    const VAPictureParameterBufferH264 *p = &context->decode->params;
    if (slice->slice_data_flag != VA_SLICE_DATA_FLAG_ALL) {
        fva_violation("slice_data_flag, expected VA_SLICE_DATA_FLAG_ALL (a whole slice per buffer), got %u",
                      slice->slice_data_flag);
    }
    if (slice->slice_type > H264_SLICE_I) {
        fva_violation("slice_type, expected 0…2 (P, B, I: SP and SI are not decoded by the double), got %u",
                      slice->slice_type);
    }
    if (slice->slice_type == H264_SLICE_B && context->config.profile == VAProfileH264ConstrainedBaseline) {
        fva_violation("slice_type in Constrained Baseline, expected I or P, got B");
    }
    if (slice->first_mb_in_slice >= macroblocks) {
        fva_violation("first_mb_in_slice, expected below the picture's %u macroblocks, got %u", macroblocks,
                      slice->first_mb_in_slice);
    }
    int qp = 26 + p->pic_init_qp_minus26 + slice->slice_qp_delta;
    if (qp < 0 || qp > 51) {
        fva_violation("SliceQPY (26 + pic_init_qp_minus26 %d + slice_qp_delta %d), expected 0…51, got %d",
                      p->pic_init_qp_minus26, slice->slice_qp_delta, qp);
    }
    if (p->pic_fields.bits.entropy_coding_mode_flag && slice->cabac_init_idc > 2) {
        fva_violation("cabac_init_idc, expected 0…2, got %u", slice->cabac_init_idc);
    }
    if (slice->slice_type == H264_SLICE_P || slice->slice_type == H264_SLICE_B) {
        check_list(p, slice->RefPicList0, slice->num_ref_idx_l0_active_minus1 + 1u, 0);
    }
    if (slice->slice_type == H264_SLICE_B) check_list(p, slice->RefPicList1, slice->num_ref_idx_l1_active_minus1 + 1u, 1);
}

static bool check_picture(struct fva_driver *driver, const struct fva_context *context, VASurfaceID target) {
    const struct fva_decode *decode = context->decode;
    unsigned before = fva_stats.violation_count;
    if (decode->pending_count > 0) {
        fva_violation("slice parameters, expected a slice data buffer after them, got vaEndPicture");
    }
    if (!decode->have_picture_params) {
        fva_violation("picture parameter buffer, expected one per picture, got none");
        return false;
    }
    if (decode->slice_count == 0) {
        fva_violation("slices, expected at least one, got none");
        return false;
    }
    if (fva_table_get(&driver->surfaces, target) == NULL) {
        fva_violation("render target %#x, expected a live surface, got one destroyed after vaBeginPicture", target);
        return false;
    }
    check_sequence(driver, context, target);
    const VAPictureParameterBufferH264 *p = &decode->params;
    unsigned macroblocks = (p->picture_width_in_mbs_minus1 + 1u) * (p->picture_height_in_mbs_minus1 + 1u);
    for (unsigned i = 0; i < decode->slice_count; i++) {
        set_label(decode, (int)i);
        check_slice_params(context, &decode->slices[i].params, macroblocks);
    }
    set_label(decode, -1);
    return fva_stats.violation_count == before;
}

// ---- the slice header against the slice parameters ----

// The SPS and PPS fields a slice header's syntax depends on, as the picture parameters give them.
static void parameter_sets(const VAPictureParameterBufferH264 *p, struct h264_sps *sps, struct h264_pps *pps) {
    *sps = (struct h264_sps){
        .log2_max_frame_num_minus4 = p->seq_fields.bits.log2_max_frame_num_minus4,
        .pic_order_cnt_type = p->seq_fields.bits.pic_order_cnt_type,
        .log2_max_pic_order_cnt_lsb_minus4 = p->seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4,
        .frame_mbs_only_flag = p->seq_fields.bits.frame_mbs_only_flag,
        .chroma_format_idc = p->seq_fields.bits.chroma_format_idc,
    };
    *pps = (struct h264_pps){
        .entropy_coding_mode_flag = p->pic_fields.bits.entropy_coding_mode_flag,
        .bottom_field_pic_order_in_frame_present_flag = p->pic_fields.bits.pic_order_present_flag,
        .weighted_pred_flag = p->pic_fields.bits.weighted_pred_flag,
        .weighted_bipred_idc = p->pic_fields.bits.weighted_bipred_idc,
        .pic_init_qp_minus26 = p->pic_init_qp_minus26,
        .deblocking_filter_control_present_flag = p->pic_fields.bits.deblocking_filter_control_present_flag,
        .redundant_pic_cnt_present_flag = p->pic_fields.bits.redundant_pic_cnt_present_flag,
        .transform_8x8_mode_flag = p->pic_fields.bits.transform_8x8_mode_flag,
    };
}

#define SAME(field, expected, got) \
    if ((long long)(expected) != (long long)(got)) { \
        fva_violation("slice header vs slice parameters: " field ", expected %lld (the header's), got %lld", \
                      (long long)(expected), (long long)(got)); \
        same = false; \
    }

static bool compare_header(const VAPictureParameterBufferH264 *p, const VASliceParameterBufferH264 *slice,
                           const struct h264_slice_header *header, size_t header_bits) {
    bool same = true;
    SAME("slice_data_bit_offset (bits of NAL header and slice header, without emulation prevention bytes)",
         header_bits, slice->slice_data_bit_offset)
    SAME("first_mb_in_slice", header->first_mb_in_slice, slice->first_mb_in_slice)
    SAME("slice_type", header->slice_type % 5, slice->slice_type)
    SAME("slice_qp_delta", header->slice_qp_delta, slice->slice_qp_delta)
    SAME("picture parameters frame_num", header->frame_num, p->frame_num)
    SAME("picture parameters reference_pic_flag", header->nal_ref_idc != 0, p->pic_fields.bits.reference_pic_flag)
    if (p->pic_fields.bits.entropy_coding_mode_flag && header->slice_type % 5 != H264_SLICE_I) {
        SAME("cabac_init_idc", header->cabac_init_idc, slice->cabac_init_idc)
    }
    if (header->slice_type % 5 == H264_SLICE_B) {
        SAME("direct_spatial_mv_pred_flag", header->direct_spatial_mv_pred_flag, slice->direct_spatial_mv_pred_flag)
    }
    if (header->num_ref_idx_active_override_flag) {
        SAME("num_ref_idx_l0_active_minus1", header->num_ref_idx_l0_active_minus1, slice->num_ref_idx_l0_active_minus1)
        if (header->slice_type % 5 == H264_SLICE_B) {
            SAME("num_ref_idx_l1_active_minus1", header->num_ref_idx_l1_active_minus1,
                 slice->num_ref_idx_l1_active_minus1)
        }
    }
    SAME("disable_deblocking_filter_idc", header->disable_deblocking_filter_idc, slice->disable_deblocking_filter_idc)
    if (header->nal_unit_type == H264_NAL_IDR) {
        for (unsigned i = 0; i < 16; i++) {
            if (picture_valid(&p->ReferenceFrames[i])) {
                fva_violation("ReferenceFrames of an IDR picture, expected none, got %#x",
                              p->ReferenceFrames[i].picture_id);
                same = false;
                break;
            }
        }
    }
    return same;
}

// ---- decoding ----

static void count_slice(const VASliceParameterBufferH264 *slice, bool cabac, unsigned macroblocks) {
    switch (slice->slice_type) {
    case H264_SLICE_P: fva_stats.decode.p_slices++; break;
    case H264_SLICE_B: fva_stats.decode.b_slices++; break;
    default: fva_stats.decode.i_slices++; break;
    }
    if (cabac) {
        fva_stats.decode.cabac_slices++;
    } else {
        fva_stats.decode.cavlc_slices++;
    }
    fva_stats.decode.macroblocks += macroblocks;
}

static VAStatus decode_slice(const struct fva_decode *decode, struct fva_decode_slice *slice, struct fva_surface *surface,
                             uint8_t *decoded, unsigned *count) {
    const VAPictureParameterBufferH264 *p = &decode->params;
    const VASliceParameterBufferH264 *params = &slice->params;
    if (slice->size == 0 || start_code_length(slice->data, slice->size) != 0) {
        fva_violation("slice data, expected a NAL unit from its header byte, got %s",
                      slice->size == 0 ? "nothing" : "a start code first");
        return VA_STATUS_ERROR_INVALID_PARAMETER;
    }
    size_t size = ep_remove(slice->data, slice->size);
    struct bit_reader reader;
    br_init(&reader, slice->data, size * 8);
    struct h264_sps sps;
    struct h264_pps pps;
    parameter_sets(p, &sps, &pps);
    struct h264_slice_header header;
    const char *why = NULL;
    if (!h264_read_slice_header(&reader, &sps, &pps, &header, &why)) {
        fva_violation("slice header, expected one the double reads, got one it does not: %s", why);
        return VA_STATUS_ERROR_DECODING_ERROR;
    }
    if (!compare_header(p, params, &header, reader.position)) return VA_STATUS_ERROR_INVALID_PARAMETER;
    unsigned width_mbs = p->picture_width_in_mbs_minus1 + 1u, height_mbs = p->picture_height_in_mbs_minus1 + 1u;
    struct slice_data_layout layout = {
        .cabac = p->pic_fields.bits.entropy_coding_mode_flag,
        .slice_type = params->slice_type,
        .first_mb = params->first_mb_in_slice,
        .mb_count = width_mbs * height_mbs,
        .width_mbs = width_mbs,
        .cabac_init_idc = params->cabac_init_idc,
        .qp = 26 + p->pic_init_qp_minus26 + params->slice_qp_delta,
    };
    if (!fva_read_slice_data(&reader, surface, &layout, decoded, count)) return VA_STATUS_ERROR_DECODING_ERROR;
    count_slice(params, layout.cabac, *count);
    return VA_STATUS_SUCCESS;
}

static VAStatus decode_picture(struct fva_driver *driver, struct fva_decode *decode, VASurfaceID target) {
    const VAPictureParameterBufferH264 *p = &decode->params;
    struct fva_surface *surface = fva_table_get(&driver->surfaces, target);
    unsigned width_mbs = p->picture_width_in_mbs_minus1 + 1u, height_mbs = p->picture_height_in_mbs_minus1 + 1u;
    unsigned macroblocks = width_mbs * height_mbs, total = 0;
    uint8_t *decoded = calloc(macroblocks, 1);
    if (decoded == NULL) fva_out_of_memory();
    VAStatus status = VA_STATUS_SUCCESS;
    for (unsigned i = 0; i < decode->slice_count && status == VA_STATUS_SUCCESS; i++) {
        set_label(decode, (int)i);
        unsigned count = 0;
        status = decode_slice(decode, &decode->slices[i], surface, decoded, &count);
        total += count;
    }
    set_label(decode, -1);
    if (status == VA_STATUS_SUCCESS && total != macroblocks) {
        fva_violation("macroblocks decoded, expected %u (%ux%u), got %u", macroblocks, width_mbs, height_mbs, total);
        status = VA_STATUS_ERROR_DECODING_ERROR;
    }
    free(decoded);
    return status;
}

VAStatus fva_decode_end(struct fva_driver *driver, struct fva_context *context, VASurfaceID target) {
    struct fva_decode *decode = context->decode;
    set_label(decode, -1);
    fva_stats.decode.have_profile = true;
    fva_stats.decode.profile = context->config.profile;
    VAStatus status = check_picture(driver, context, target) ? decode_picture(driver, decode, target)
                                                              : VA_STATUS_ERROR_INVALID_PARAMETER;
    if (status == VA_STATUS_SUCCESS) {
        fva_stats.decode.pictures++;
    } else {
        fva_stats.decode.failed_pictures++;
    }
    fva_picture_label[0] = '\0';
    clear_slices(decode);
    return status;
}
