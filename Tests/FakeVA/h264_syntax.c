// Sequence and picture parameter sets and slice headers, read and written (H.264 7.3.2.1.1,
// 7.3.2.2, 7.3.3, E.1.1). Only what a progressive 4:2:0 8-bit encoder produces is taken.
#include "h264_syntax.h"

#include <string.h>

static bool is_high_profile(uint32_t profile_idc) {
    switch (profile_idc) {
    case 100: case 110: case 122: case 244: case 44: case 83: case 86: case 118: case 128:
    case 138: case 139: case 134: case 135:
        return true;
    default:
        return false;
    }
}

static bool skip_scaling_list(struct bit_reader *reader, unsigned size) {
    int32_t last = 8, next = 8;
    for (unsigned j = 0; j < size; j++) {
        if (next != 0) {
            int32_t delta = br_se(reader);
            if (delta < -128 || delta > 127) return false;
            next = (last + delta + 256) % 256;
        }
        last = next == 0 ? last : next;
    }
    return true;
}

bool h264_read_sps(struct bit_reader *reader, struct h264_sps *sps, const char **why) {
    *sps = (struct h264_sps){0};
    sps->profile_idc = br_bits(reader, 8);
    br_bits(reader, 1);     // constraint_set0_flag
    sps->constraint_set1_flag = br_bits(reader, 1);
    br_bits(reader, 6);     // constraint_set2…5 and reserved_zero_2bits
    sps->level_idc = br_bits(reader, 8);
    sps->seq_parameter_set_id = br_ue(reader);
    sps->chroma_format_idc = 1;
    if (is_high_profile(sps->profile_idc)) {
        sps->chroma_format_idc = br_ue(reader);
        if (sps->chroma_format_idc == 3) br_bits(reader, 1);
        sps->bit_depth_luma_minus8 = br_ue(reader);
        sps->bit_depth_chroma_minus8 = br_ue(reader);
        br_bits(reader, 1);     // qpprime_y_zero_transform_bypass_flag
        sps->seq_scaling_matrix_present_flag = br_bits(reader, 1);
        if (sps->seq_scaling_matrix_present_flag) {
            unsigned lists = sps->chroma_format_idc != 3 ? 8 : 12;
            for (unsigned i = 0; i < lists; i++) {
                if (br_bits(reader, 1) && !skip_scaling_list(reader, i < 6 ? 16 : 64)) {
                    *why = "bad scaling list";
                    return false;
                }
            }
        }
    }
    sps->log2_max_frame_num_minus4 = br_ue(reader);
    sps->pic_order_cnt_type = br_ue(reader);
    if (sps->pic_order_cnt_type == 0) {
        sps->log2_max_pic_order_cnt_lsb_minus4 = br_ue(reader);
    } else if (sps->pic_order_cnt_type == 1) {
        *why = "pic_order_cnt_type 1 is not supported by the double";
        return false;
    }
    sps->max_num_ref_frames = br_ue(reader);
    sps->gaps_in_frame_num_value_allowed_flag = br_bits(reader, 1);
    sps->pic_width_in_mbs_minus1 = br_ue(reader);
    sps->pic_height_in_map_units_minus1 = br_ue(reader);
    sps->frame_mbs_only_flag = br_bits(reader, 1);
    if (!sps->frame_mbs_only_flag) {
        *why = "field coding (frame_mbs_only_flag 0) is not supported by the double";
        return false;
    }
    sps->direct_8x8_inference_flag = br_bits(reader, 1);
    sps->frame_cropping_flag = br_bits(reader, 1);
    if (sps->frame_cropping_flag) {
        sps->frame_crop_left_offset = br_ue(reader);
        sps->frame_crop_right_offset = br_ue(reader);
        sps->frame_crop_top_offset = br_ue(reader);
        sps->frame_crop_bottom_offset = br_ue(reader);
    }
    sps->vui_parameters_present_flag = br_bits(reader, 1);
    if (sps->vui_parameters_present_flag) {
        sps->aspect_ratio_info_present_flag = br_bits(reader, 1);
        if (sps->aspect_ratio_info_present_flag) {
            sps->aspect_ratio_idc = br_bits(reader, 8);
            if (sps->aspect_ratio_idc == 255) {
                sps->sar_width = br_bits(reader, 16);
                sps->sar_height = br_bits(reader, 16);
            }
        }
        if (br_bits(reader, 1)) br_bits(reader, 1);     // overscan
        if (br_bits(reader, 1)) {                       // video_signal_type_present_flag
            br_bits(reader, 4);
            if (br_bits(reader, 1)) br_bits(reader, 24);
        }
        if (br_bits(reader, 1)) {                       // chroma_loc_info_present_flag
            br_ue(reader);
            br_ue(reader);
        }
        sps->timing_info_present_flag = br_bits(reader, 1);
        if (sps->timing_info_present_flag) {
            sps->num_units_in_tick = br_bits(reader, 32);
            sps->time_scale = br_bits(reader, 32);
            sps->fixed_frame_rate_flag = br_bits(reader, 1);
        }
    }
    if (reader->overrun) {
        *why = "it ends early";
        return false;
    }
    return true;
}

bool h264_read_pps(struct bit_reader *reader, const struct h264_sps *sps, struct h264_pps *pps,
                   const char **why) {
    (void)sps;
    *pps = (struct h264_pps){0};
    pps->pic_parameter_set_id = br_ue(reader);
    pps->seq_parameter_set_id = br_ue(reader);
    pps->entropy_coding_mode_flag = br_bits(reader, 1);
    pps->bottom_field_pic_order_in_frame_present_flag = br_bits(reader, 1);
    pps->num_slice_groups_minus1 = br_ue(reader);
    if (pps->num_slice_groups_minus1 != 0) {
        *why = "slice groups (FMO) are not supported by the double";
        return false;
    }
    pps->num_ref_idx_l0_default_active_minus1 = br_ue(reader);
    pps->num_ref_idx_l1_default_active_minus1 = br_ue(reader);
    pps->weighted_pred_flag = br_bits(reader, 1);
    pps->weighted_bipred_idc = br_bits(reader, 2);
    pps->pic_init_qp_minus26 = br_se(reader);
    pps->pic_init_qs_minus26 = br_se(reader);
    pps->chroma_qp_index_offset = br_se(reader);
    pps->deblocking_filter_control_present_flag = br_bits(reader, 1);
    pps->constrained_intra_pred_flag = br_bits(reader, 1);
    pps->redundant_pic_cnt_present_flag = br_bits(reader, 1);
    pps->second_chroma_qp_index_offset = pps->chroma_qp_index_offset;
    if (br_more_rbsp_data(reader)) {
        pps->transform_8x8_mode_flag = br_bits(reader, 1);
        pps->pic_scaling_matrix_present_flag = br_bits(reader, 1);
        if (pps->pic_scaling_matrix_present_flag) {
            *why = "picture scaling matrices are not supported by the double";
            return false;
        }
        pps->second_chroma_qp_index_offset = br_se(reader);
    }
    if (reader->overrun) {
        *why = "it ends early";
        return false;
    }
    return true;
}

static bool read_modifications(struct bit_reader *reader, struct h264_slice_header *header, int list,
                               const char **why) {
    if (!br_bits(reader, 1)) return true;
    for (;;) {
        uint32_t idc = br_ue(reader);
        if (idc == 3) break;
        if (idc > 2 || reader->overrun || header->modification_count[list] == H264_MAX_MODIFICATIONS) {
            *why = "bad ref_pic_list_modification";
            return false;
        }
        struct h264_modification *modification =
            &header->modifications[list][header->modification_count[list]++];
        modification->idc = idc;
        modification->value = br_ue(reader);
    }
    return true;
}

static bool read_mmcos(struct bit_reader *reader, struct h264_slice_header *header, const char **why) {
    for (;;) {
        uint32_t operation = br_ue(reader);
        if (operation == 0) return true;
        if (operation > 6 || reader->overrun || header->mmco_count == H264_MAX_MMCOS) {
            *why = "bad dec_ref_pic_marking";
            return false;
        }
        struct h264_mmco *mmco = &header->mmcos[header->mmco_count++];
        mmco->operation = operation;
        if (operation == 1 || operation == 3) mmco->difference_of_pic_nums_minus1 = br_ue(reader);
        if (operation == 2) mmco->long_term_pic_num = br_ue(reader);
        if (operation == 3 || operation == 6) mmco->long_term_frame_idx = br_ue(reader);
        if (operation == 4) mmco->max_long_term_frame_idx_plus1 = br_ue(reader);
    }
}

bool h264_read_slice_header(struct bit_reader *reader, const struct h264_sps *sps,
                            const struct h264_pps *pps, struct h264_slice_header *header, const char **why) {
    *header = (struct h264_slice_header){0};
    if (br_bits(reader, 1) != 0) {
        *why = "forbidden_zero_bit is set";
        return false;
    }
    header->nal_ref_idc = br_bits(reader, 2);
    header->nal_unit_type = br_bits(reader, 5);
    if (header->nal_unit_type != H264_NAL_SLICE && header->nal_unit_type != H264_NAL_IDR) {
        *why = "it is not a slice NAL unit (type 1 or 5)";
        return false;
    }
    header->first_mb_in_slice = br_ue(reader);
    header->slice_type = br_ue(reader);
    header->pic_parameter_set_id = br_ue(reader);
    header->frame_num = br_bits(reader, sps->log2_max_frame_num_minus4 + 4);
    bool idr = header->nal_unit_type == H264_NAL_IDR;
    if (idr) header->idr_pic_id = br_ue(reader);
    if (sps->pic_order_cnt_type == 0) {
        header->pic_order_cnt_lsb = br_bits(reader, sps->log2_max_pic_order_cnt_lsb_minus4 + 4);
        if (pps->bottom_field_pic_order_in_frame_present_flag) header->delta_pic_order_cnt_bottom = br_se(reader);
    }
    if (pps->redundant_pic_cnt_present_flag) header->redundant_pic_cnt = br_ue(reader);
    uint32_t type = header->slice_type % 5;
    if (type == H264_SLICE_B) header->direct_spatial_mv_pred_flag = br_bits(reader, 1);
    if (type == H264_SLICE_P || type == H264_SLICE_B) {
        header->num_ref_idx_l0_active_minus1 = pps->num_ref_idx_l0_default_active_minus1;
        header->num_ref_idx_l1_active_minus1 = pps->num_ref_idx_l1_default_active_minus1;
        header->num_ref_idx_active_override_flag = br_bits(reader, 1);
        if (header->num_ref_idx_active_override_flag) {
            header->num_ref_idx_l0_active_minus1 = br_ue(reader);
            if (type == H264_SLICE_B) header->num_ref_idx_l1_active_minus1 = br_ue(reader);
        }
    }
    if (type != H264_SLICE_I && type != 4) {
        if (!read_modifications(reader, header, 0, why)) return false;
        if (type == H264_SLICE_B && !read_modifications(reader, header, 1, why)) return false;
    }
    if ((pps->weighted_pred_flag && type == H264_SLICE_P) || (pps->weighted_bipred_idc == 1 && type == H264_SLICE_B)) {
        *why = "weighted prediction tables are not supported by the double";
        return false;
    }
    if (header->nal_ref_idc != 0) {
        if (idr) {
            header->no_output_of_prior_pics_flag = br_bits(reader, 1);
            header->long_term_reference_flag = br_bits(reader, 1);
        } else {
            header->adaptive_ref_pic_marking_mode_flag = br_bits(reader, 1);
            if (header->adaptive_ref_pic_marking_mode_flag && !read_mmcos(reader, header, why)) return false;
        }
    }
    if (pps->entropy_coding_mode_flag && type != H264_SLICE_I && type != 4) header->cabac_init_idc = br_ue(reader);
    header->slice_qp_delta = br_se(reader);
    if (type == 3 || type == 4) {
        *why = "SP and SI slices are not supported by the double";
        return false;
    }
    if (pps->deblocking_filter_control_present_flag) {
        header->disable_deblocking_filter_idc = br_ue(reader);
        if (header->disable_deblocking_filter_idc != 1) {
            header->slice_alpha_c0_offset_div2 = br_se(reader);
            header->slice_beta_offset_div2 = br_se(reader);
        }
    }
    if (reader->overrun) {
        *why = "it ends before the slice header does";
        return false;
    }
    return true;
}

void h264_write_sps(struct bit_writer *writer, const struct h264_sps *sps) {
    bw_bits(writer, 0x60 | H264_NAL_SPS, 8);    // nal_ref_idc 3
    bw_bits(writer, sps->profile_idc, 8);
    bool constrained_baseline = sps->profile_idc == 66 && sps->constraint_set1_flag;
    bw_bits(writer, constrained_baseline ? 1 : 0, 1);
    bw_bits(writer, sps->constraint_set1_flag, 1);
    bw_bits(writer, 0, 6);
    bw_bits(writer, sps->level_idc, 8);
    bw_ue(writer, sps->seq_parameter_set_id);
    if (is_high_profile(sps->profile_idc)) {
        bw_ue(writer, sps->chroma_format_idc);
        bw_ue(writer, sps->bit_depth_luma_minus8);
        bw_ue(writer, sps->bit_depth_chroma_minus8);
        bw_bits(writer, 0, 1);
        bw_bits(writer, 0, 1);      // no scaling matrices
    }
    bw_ue(writer, sps->log2_max_frame_num_minus4);
    bw_ue(writer, sps->pic_order_cnt_type);
    if (sps->pic_order_cnt_type == 0) bw_ue(writer, sps->log2_max_pic_order_cnt_lsb_minus4);
    bw_ue(writer, sps->max_num_ref_frames);
    bw_bits(writer, sps->gaps_in_frame_num_value_allowed_flag, 1);
    bw_ue(writer, sps->pic_width_in_mbs_minus1);
    bw_ue(writer, sps->pic_height_in_map_units_minus1);
    bw_bits(writer, 1, 1);          // frame_mbs_only_flag
    bw_bits(writer, sps->direct_8x8_inference_flag, 1);
    bw_bits(writer, sps->frame_cropping_flag, 1);
    if (sps->frame_cropping_flag) {
        bw_ue(writer, sps->frame_crop_left_offset);
        bw_ue(writer, sps->frame_crop_right_offset);
        bw_ue(writer, sps->frame_crop_top_offset);
        bw_ue(writer, sps->frame_crop_bottom_offset);
    }
    bw_bits(writer, sps->vui_parameters_present_flag, 1);
    if (sps->vui_parameters_present_flag) {
        bw_bits(writer, sps->aspect_ratio_info_present_flag, 1);
        if (sps->aspect_ratio_info_present_flag) {
            bw_bits(writer, sps->aspect_ratio_idc, 8);
            if (sps->aspect_ratio_idc == 255) {
                bw_bits(writer, sps->sar_width, 16);
                bw_bits(writer, sps->sar_height, 16);
            }
        }
        bw_bits(writer, 0, 1);      // overscan_info_present_flag
        bw_bits(writer, 0, 1);      // video_signal_type_present_flag
        bw_bits(writer, 0, 1);      // chroma_loc_info_present_flag
        bw_bits(writer, sps->timing_info_present_flag, 1);
        if (sps->timing_info_present_flag) {
            bw_bits(writer, sps->num_units_in_tick, 32);
            bw_bits(writer, sps->time_scale, 32);
            bw_bits(writer, sps->fixed_frame_rate_flag, 1);
        }
        bw_bits(writer, 0, 1);      // nal_hrd_parameters_present_flag
        bw_bits(writer, 0, 1);      // vcl_hrd_parameters_present_flag
        bw_bits(writer, 0, 1);      // pic_struct_present_flag
        bw_bits(writer, sps->bitstream_restriction_flag, 1);
        if (sps->bitstream_restriction_flag) {
            bw_bits(writer, sps->motion_vectors_over_pic_boundaries_flag, 1);
            bw_ue(writer, 0);       // max_bytes_per_pic_denom: no limit
            bw_ue(writer, 0);       // max_bits_per_mb_denom: no limit
            bw_ue(writer, sps->log2_max_mv_length_horizontal);
            bw_ue(writer, sps->log2_max_mv_length_vertical);
            bw_ue(writer, sps->max_num_reorder_frames);
            bw_ue(writer, sps->max_dec_frame_buffering);
        }
    }
    bw_trailing_bits(writer);
}

void h264_write_pps(struct bit_writer *writer, const struct h264_pps *pps) {
    bw_bits(writer, 0x60 | H264_NAL_PPS, 8);
    bw_ue(writer, pps->pic_parameter_set_id);
    bw_ue(writer, pps->seq_parameter_set_id);
    bw_bits(writer, pps->entropy_coding_mode_flag, 1);
    bw_bits(writer, pps->bottom_field_pic_order_in_frame_present_flag, 1);
    bw_ue(writer, 0);               // num_slice_groups_minus1
    bw_ue(writer, pps->num_ref_idx_l0_default_active_minus1);
    bw_ue(writer, pps->num_ref_idx_l1_default_active_minus1);
    bw_bits(writer, pps->weighted_pred_flag, 1);
    bw_bits(writer, pps->weighted_bipred_idc, 2);
    bw_se(writer, pps->pic_init_qp_minus26);
    bw_se(writer, pps->pic_init_qs_minus26);
    bw_se(writer, pps->chroma_qp_index_offset);
    bw_bits(writer, pps->deblocking_filter_control_present_flag, 1);
    bw_bits(writer, pps->constrained_intra_pred_flag, 1);
    bw_bits(writer, pps->redundant_pic_cnt_present_flag, 1);
    if (pps->transform_8x8_mode_flag || pps->second_chroma_qp_index_offset != pps->chroma_qp_index_offset) {
        bw_bits(writer, pps->transform_8x8_mode_flag, 1);
        bw_bits(writer, 0, 1);      // pic_scaling_matrix_present_flag
        bw_se(writer, pps->second_chroma_qp_index_offset);
    }
    bw_trailing_bits(writer);
}

void h264_write_slice_header(struct bit_writer *writer, const struct h264_sps *sps,
                             const struct h264_pps *pps, const struct h264_slice_header *header) {
    bw_bits(writer, header->nal_ref_idc << 5 | header->nal_unit_type, 8);
    bw_ue(writer, header->first_mb_in_slice);
    bw_ue(writer, header->slice_type);
    bw_ue(writer, header->pic_parameter_set_id);
    bw_bits(writer, header->frame_num, sps->log2_max_frame_num_minus4 + 4);
    if (header->nal_unit_type == H264_NAL_IDR) bw_ue(writer, header->idr_pic_id);
    if (sps->pic_order_cnt_type == 0) {
        bw_bits(writer, header->pic_order_cnt_lsb, sps->log2_max_pic_order_cnt_lsb_minus4 + 4);
        if (pps->bottom_field_pic_order_in_frame_present_flag) bw_se(writer, header->delta_pic_order_cnt_bottom);
    }
    uint32_t type = header->slice_type % 5;
    if (type == H264_SLICE_B) bw_bits(writer, header->direct_spatial_mv_pred_flag, 1);
    if (type == H264_SLICE_P || type == H264_SLICE_B) {
        bw_bits(writer, header->num_ref_idx_active_override_flag, 1);
        if (header->num_ref_idx_active_override_flag) {
            bw_ue(writer, header->num_ref_idx_l0_active_minus1);
            if (type == H264_SLICE_B) bw_ue(writer, header->num_ref_idx_l1_active_minus1);
        }
        bw_bits(writer, 0, 1);      // ref_pic_list_modification_flag_l0
        if (type == H264_SLICE_B) bw_bits(writer, 0, 1);
    }
    if (header->nal_ref_idc != 0) {
        if (header->nal_unit_type == H264_NAL_IDR) {
            bw_bits(writer, header->no_output_of_prior_pics_flag, 1);
            bw_bits(writer, header->long_term_reference_flag, 1);
        } else {
            bw_bits(writer, 0, 1);  // adaptive_ref_pic_marking_mode_flag
        }
    }
    if (pps->entropy_coding_mode_flag && type != H264_SLICE_I) bw_ue(writer, header->cabac_init_idc);
    bw_se(writer, header->slice_qp_delta);
    if (pps->deblocking_filter_control_present_flag) {
        bw_ue(writer, header->disable_deblocking_filter_idc);
        if (header->disable_deblocking_filter_idc != 1) {
            bw_se(writer, header->slice_alpha_c0_offset_div2);
            bw_se(writer, header->slice_beta_offset_div2);
        }
    }
}
