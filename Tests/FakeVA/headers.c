// The SPS, PPS and slice headers the parameter buffers describe; the ones a client packed,
// parsed; and the comparison of the two, field by field, each difference a violation.
#include "fake_va.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint32_t profile_idc(VAProfile profile) {
    switch (profile) {
    case VAProfileH264ConstrainedBaseline: return 66;
    case VAProfileH264Main: return 77;
    default: return 100;
    }
}

void fva_sps_from_params(const struct fva_context *context, struct h264_sps *sps) {
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    *sps = (struct h264_sps){0};
    sps->profile_idc = profile_idc(context->config.profile);
    sps->constraint_set1_flag = context->config.profile == VAProfileH264ConstrainedBaseline;
    sps->level_idc = seq->level_idc;
    sps->seq_parameter_set_id = seq->seq_parameter_set_id;
    sps->chroma_format_idc = seq->seq_fields.bits.chroma_format_idc;
    sps->bit_depth_luma_minus8 = seq->bit_depth_luma_minus8;
    sps->bit_depth_chroma_minus8 = seq->bit_depth_chroma_minus8;
    sps->seq_scaling_matrix_present_flag = seq->seq_fields.bits.seq_scaling_matrix_present_flag;
    sps->log2_max_frame_num_minus4 = seq->seq_fields.bits.log2_max_frame_num_minus4;
    sps->pic_order_cnt_type = seq->seq_fields.bits.pic_order_cnt_type;
    if (sps->pic_order_cnt_type == 0) {
        sps->log2_max_pic_order_cnt_lsb_minus4 = seq->seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4;
    }
    sps->max_num_ref_frames = seq->max_num_ref_frames;
    sps->pic_width_in_mbs_minus1 = seq->picture_width_in_mbs - 1u;
    sps->pic_height_in_map_units_minus1 = seq->picture_height_in_mbs - 1u;
    sps->frame_mbs_only_flag = seq->seq_fields.bits.frame_mbs_only_flag;
    sps->direct_8x8_inference_flag = seq->seq_fields.bits.direct_8x8_inference_flag;
    sps->frame_cropping_flag = seq->frame_cropping_flag;
    if (seq->frame_cropping_flag) {
        sps->frame_crop_left_offset = seq->frame_crop_left_offset;
        sps->frame_crop_right_offset = seq->frame_crop_right_offset;
        sps->frame_crop_top_offset = seq->frame_crop_top_offset;
        sps->frame_crop_bottom_offset = seq->frame_crop_bottom_offset;
    }
    sps->vui_parameters_present_flag = seq->vui_parameters_present_flag;
    if (seq->vui_parameters_present_flag) {
        sps->aspect_ratio_info_present_flag = seq->vui_fields.bits.aspect_ratio_info_present_flag;
        if (sps->aspect_ratio_info_present_flag) {
            sps->aspect_ratio_idc = seq->aspect_ratio_idc;
            if (seq->aspect_ratio_idc == 255) {
                sps->sar_width = seq->sar_width;
                sps->sar_height = seq->sar_height;
            }
        }
        sps->timing_info_present_flag = seq->vui_fields.bits.timing_info_present_flag;
        if (sps->timing_info_present_flag) {
            sps->num_units_in_tick = seq->num_units_in_tick;
            sps->time_scale = seq->time_scale;
            sps->fixed_frame_rate_flag = seq->vui_fields.bits.fixed_frame_rate_flag;
        }
        sps->bitstream_restriction_flag = seq->vui_fields.bits.bitstream_restriction_flag;
        sps->motion_vectors_over_pic_boundaries_flag = seq->vui_fields.bits.motion_vectors_over_pic_boundaries_flag;
        sps->log2_max_mv_length_horizontal = seq->vui_fields.bits.log2_max_mv_length_horizontal;
        sps->log2_max_mv_length_vertical = seq->vui_fields.bits.log2_max_mv_length_vertical;
        // The buffer has no reorder depth; as many as the DPB holds is always enough.
        sps->max_dec_frame_buffering = seq->max_num_ref_frames;
        sps->max_num_reorder_frames = seq->ip_period > 1 ? seq->max_num_ref_frames : 0;
    }
}

void fva_pps_from_params(const struct fva_context *context, struct h264_pps *pps) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    *pps = (struct h264_pps){0};
    pps->pic_parameter_set_id = pic->pic_parameter_set_id;
    pps->seq_parameter_set_id = pic->seq_parameter_set_id;
    pps->entropy_coding_mode_flag = pic->pic_fields.bits.entropy_coding_mode_flag;
    pps->bottom_field_pic_order_in_frame_present_flag = pic->pic_fields.bits.pic_order_present_flag;
    pps->num_ref_idx_l0_default_active_minus1 = pic->num_ref_idx_l0_active_minus1;
    pps->num_ref_idx_l1_default_active_minus1 = pic->num_ref_idx_l1_active_minus1;
    pps->weighted_pred_flag = pic->pic_fields.bits.weighted_pred_flag;
    pps->weighted_bipred_idc = pic->pic_fields.bits.weighted_bipred_idc;
    pps->pic_init_qp_minus26 = (int32_t)pic->pic_init_qp - 26;
    pps->chroma_qp_index_offset = pic->chroma_qp_index_offset;
    pps->deblocking_filter_control_present_flag = pic->pic_fields.bits.deblocking_filter_control_present_flag;
    pps->constrained_intra_pred_flag = pic->pic_fields.bits.constrained_intra_pred_flag;
    pps->redundant_pic_cnt_present_flag = pic->pic_fields.bits.redundant_pic_cnt_present_flag;
    pps->transform_8x8_mode_flag = pic->pic_fields.bits.transform_8x8_mode_flag;
    pps->pic_scaling_matrix_present_flag = pic->pic_fields.bits.pic_scaling_matrix_present_flag;
    pps->second_chroma_qp_index_offset = pic->second_chroma_qp_index_offset;
}

void fva_slice_header_from_params(const struct fva_context *context, const VAEncSliceParameterBufferH264 *slice,
                                  struct h264_slice_header *header) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    bool idr = pic->pic_fields.bits.idr_pic_flag;
    *header = (struct h264_slice_header){0};
    header->nal_ref_idc = pic->pic_fields.bits.reference_pic_flag ? (idr ? 3 : 2) : 0;
    header->nal_unit_type = idr ? H264_NAL_IDR : H264_NAL_SLICE;
    header->first_mb_in_slice = slice->macroblock_address;
    header->slice_type = slice->slice_type;
    header->pic_parameter_set_id = slice->pic_parameter_set_id;
    header->frame_num = pic->frame_num;
    header->idr_pic_id = slice->idr_pic_id;
    // Only POC type 0 carries it in the slice header.
    header->pic_order_cnt_lsb = context->sequence.seq_fields.bits.pic_order_cnt_type == 0 ? slice->pic_order_cnt_lsb : 0;
    header->delta_pic_order_cnt_bottom = slice->delta_pic_order_cnt_bottom;
    header->direct_spatial_mv_pred_flag = slice->direct_spatial_mv_pred_flag;
    header->num_ref_idx_active_override_flag = slice->num_ref_idx_active_override_flag;
    header->num_ref_idx_l0_active_minus1 = slice->num_ref_idx_active_override_flag
        ? slice->num_ref_idx_l0_active_minus1 : pic->num_ref_idx_l0_active_minus1;
    header->num_ref_idx_l1_active_minus1 = slice->num_ref_idx_active_override_flag
        ? slice->num_ref_idx_l1_active_minus1 : pic->num_ref_idx_l1_active_minus1;
    header->cabac_init_idc = slice->cabac_init_idc;
    header->slice_qp_delta = slice->slice_qp_delta;
    header->disable_deblocking_filter_idc = slice->disable_deblocking_filter_idc;
    header->slice_alpha_c0_offset_div2 = slice->slice_alpha_c0_offset_div2;
    header->slice_beta_offset_div2 = slice->slice_beta_offset_div2;
}

// ---- comparison ----

struct field {
    const char *name;
    int64_t expected, got;
};

static bool compare(const char *what, const struct field *fields, size_t count) {
    bool same = true;
    for (size_t i = 0; i < count; i++) {
        if (fields[i].expected != fields[i].got) {
            fva_violation("%s %s, expected %lld, got %lld", what, fields[i].name, (long long)fields[i].expected,
                          (long long)fields[i].got);
            same = false;
        }
    }
    return same;
}

#define FIELD(name) {#name, (int64_t)expected->name, (int64_t)got->name}

bool fva_compare_sps(const struct h264_sps *expected, const struct h264_sps *got) {
    struct field fields[32];
    size_t n = 0;
    const struct field always[] = {
        FIELD(profile_idc), FIELD(level_idc), FIELD(seq_parameter_set_id),
        FIELD(chroma_format_idc), FIELD(bit_depth_luma_minus8), FIELD(bit_depth_chroma_minus8),
        FIELD(seq_scaling_matrix_present_flag), FIELD(log2_max_frame_num_minus4), FIELD(pic_order_cnt_type),
        FIELD(log2_max_pic_order_cnt_lsb_minus4), FIELD(max_num_ref_frames), FIELD(pic_width_in_mbs_minus1),
        FIELD(pic_height_in_map_units_minus1), FIELD(frame_mbs_only_flag), FIELD(direct_8x8_inference_flag),
        FIELD(frame_cropping_flag), FIELD(frame_crop_left_offset), FIELD(frame_crop_right_offset),
        FIELD(frame_crop_top_offset), FIELD(frame_crop_bottom_offset), FIELD(vui_parameters_present_flag),
    };
    memcpy(fields, always, sizeof always);
    n = sizeof always / sizeof always[0];
    // Constrained Baseline is Baseline with constraint_set1_flag; elsewhere the flag only claims
    // Main-profile conformance, which Main and High streams may or may not claim.
    if (expected->profile_idc == 66) fields[n++] = (struct field)FIELD(constraint_set1_flag);
    if (expected->vui_parameters_present_flag && got->vui_parameters_present_flag) {
        const struct field vui[] = {
            FIELD(aspect_ratio_info_present_flag), FIELD(aspect_ratio_idc), FIELD(sar_width), FIELD(sar_height),
            FIELD(timing_info_present_flag), FIELD(num_units_in_tick), FIELD(time_scale),
        };
        // Not fixed_frame_rate_flag: ffmpeg 5.1 leaves it 0 in the buffer while its SPS says 1, and
        // drivers given a packed SPS never read it.
        memcpy(fields + n, vui, sizeof vui);
        n += sizeof vui / sizeof vui[0];
    }
    if (got->gaps_in_frame_num_value_allowed_flag) {
        fva_violation("SPS gaps_in_frame_num_value_allowed_flag, expected 0 (not supported by the double), got 1");
        compare("SPS (packed) vs sequence parameters:", fields, n);
        return false;
    }
    return compare("SPS (packed) vs sequence parameters:", fields, n);
}

bool fva_compare_pps(const struct h264_pps *expected, const struct h264_pps *got) {
    const struct field fields[] = {
        FIELD(pic_parameter_set_id), FIELD(seq_parameter_set_id), FIELD(entropy_coding_mode_flag),
        FIELD(bottom_field_pic_order_in_frame_present_flag), FIELD(num_ref_idx_l0_default_active_minus1),
        FIELD(num_ref_idx_l1_default_active_minus1), FIELD(weighted_pred_flag), FIELD(weighted_bipred_idc),
        FIELD(pic_init_qp_minus26), FIELD(chroma_qp_index_offset), FIELD(deblocking_filter_control_present_flag),
        FIELD(constrained_intra_pred_flag), FIELD(redundant_pic_cnt_present_flag), FIELD(transform_8x8_mode_flag),
        FIELD(pic_scaling_matrix_present_flag), FIELD(second_chroma_qp_index_offset),
    };
    return compare("PPS (packed) vs picture parameters:", fields, sizeof fields / sizeof fields[0]);
}

bool fva_compare_slice_header(const struct h264_slice_header *expected, const struct h264_slice_header *got,
                              unsigned slice_index) {
    char what[96];
    snprintf(what, sizeof what, "slice %u header (packed) vs slice parameters:", slice_index);
    struct field fields[24];
    size_t n = 0;
    uint32_t type = expected->slice_type % 5;
    fields[n++] = (struct field){"nal_unit_type", expected->nal_unit_type, got->nal_unit_type};
    fields[n++] = (struct field){"nal_ref_idc != 0", expected->nal_ref_idc != 0, got->nal_ref_idc != 0};
    fields[n++] = (struct field)FIELD(first_mb_in_slice);
    fields[n++] = (struct field){"slice_type % 5", type, got->slice_type % 5};
    fields[n++] = (struct field)FIELD(pic_parameter_set_id);
    fields[n++] = (struct field)FIELD(frame_num);
    if (expected->nal_unit_type == H264_NAL_IDR) fields[n++] = (struct field)FIELD(idr_pic_id);
    fields[n++] = (struct field)FIELD(pic_order_cnt_lsb);
    fields[n++] = (struct field)FIELD(delta_pic_order_cnt_bottom);
    if (type == H264_SLICE_B) fields[n++] = (struct field)FIELD(direct_spatial_mv_pred_flag);
    if (type == H264_SLICE_P || type == H264_SLICE_B) {
        fields[n++] = (struct field)FIELD(num_ref_idx_active_override_flag);
        fields[n++] = (struct field)FIELD(num_ref_idx_l0_active_minus1);
    }
    if (type == H264_SLICE_B) fields[n++] = (struct field)FIELD(num_ref_idx_l1_active_minus1);
    fields[n++] = (struct field){"long_term_reference_flag", 0, got->long_term_reference_flag};
    fields[n++] = (struct field)FIELD(cabac_init_idc);
    fields[n++] = (struct field)FIELD(slice_qp_delta);
    fields[n++] = (struct field)FIELD(disable_deblocking_filter_idc);
    if (expected->disable_deblocking_filter_idc != 1) {
        fields[n++] = (struct field)FIELD(slice_alpha_c0_offset_div2);
        fields[n++] = (struct field)FIELD(slice_beta_offset_div2);
    }
    return compare(what, fields, n);
}

// ---- the client's packed sequence header ----

static bool parse_parameter_set(struct fva_context *context, uint8_t *nal, size_t size) {
    if (size == 0) return true;
    unsigned type = nal[0] & 0x1f;
    struct bit_reader reader;
    br_init(&reader, nal + 1, (size - 1) * 8);
    const char *why = "";
    if (type == H264_NAL_SPS) {
        context->have_sps = h264_read_sps(&reader, &context->sps, &why);
        if (!context->have_sps) fva_violation("packed SPS, expected one the double can parse, got one where %s", why);
        return context->have_sps;
    }
    if (type == H264_NAL_PPS) {
        if (!context->have_sps) {
            fva_violation("packed PPS, expected an SPS before it, got none");
            return false;
        }
        context->have_pps = h264_read_pps(&reader, &context->sps, &context->pps, &why);
        if (!context->have_pps) fva_violation("packed PPS, expected one the double can parse, got one where %s", why);
        return context->have_pps;
    }
    return true;    // SEI, AUD and the like pass through unread
}

// Reads the SPS and PPS in a client's packed sequence header. With emulation prevention the
// header is Annex B and may hold several NAL units (ffmpeg sends SPS and PPS together); without,
// it is one NAL unit, since a start code inside it could be payload.
bool fva_parse_packed_sequence(struct fva_context *context, const struct fva_packed *packed) {
    uint8_t *copy = malloc(packed->size ? packed->size : 1);
    if (copy == NULL) fva_out_of_memory();
    memcpy(copy, packed->data, packed->size);
    if (start_code_length(copy, packed->size) == 0) {
        fva_violation("packed sequence header start, expected an Annex B start code, got %02x %02x %02x",
                      packed->size > 0 ? copy[0] : 0, packed->size > 1 ? copy[1] : 0, packed->size > 2 ? copy[2] : 0);
        free(copy);
        return false;
    }
    bool good = true;
    size_t position = 0;
    while (good && position < packed->size) {
        size_t prefix = start_code_length(copy + position, packed->size - position);
        if (prefix == 0) break;
        size_t begin = position + prefix, end = packed->size;
        if (packed->emulation_bytes) {
            end = begin;
            while (end < packed->size && start_code_length(copy + end, packed->size - end) == 0) end++;
        }
        size_t unit_end = end;
        while (unit_end > begin && copy[unit_end - 1] == 0) unit_end--;     // trailing_zero_8bits
        size_t size = unit_end - begin;
        if (packed->emulation_bytes) size = ep_remove(copy + begin, size);
        good = parse_parameter_set(context, copy + begin, size);
        position = end;
    }
    free(copy);
    return good;
}
