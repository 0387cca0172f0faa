// The H.264 syntax the double reads from clients' packed headers and writes when a client sends
// none: sequence and picture parameter sets and slice headers (7.3.2.1, 7.3.2.2, 7.3.3), for
// progressive 4:2:0 8-bit streams. Pure functions over RBSP.
#ifndef FAKE_VA_H264_SYNTAX_H
#define FAKE_VA_H264_SYNTAX_H

#include <stdbool.h>
#include <stdint.h>

#include "bits.h"

enum { H264_NAL_SLICE = 1, H264_NAL_IDR = 5, H264_NAL_SEI = 6, H264_NAL_SPS = 7, H264_NAL_PPS = 8 };
enum { H264_SLICE_P = 0, H264_SLICE_B = 1, H264_SLICE_I = 2 };

struct h264_sps {
    uint32_t profile_idc, constraint_set1_flag, level_idc, seq_parameter_set_id;
    uint32_t chroma_format_idc, bit_depth_luma_minus8, bit_depth_chroma_minus8;
    uint32_t seq_scaling_matrix_present_flag;
    uint32_t log2_max_frame_num_minus4, pic_order_cnt_type, log2_max_pic_order_cnt_lsb_minus4;
    uint32_t max_num_ref_frames, gaps_in_frame_num_value_allowed_flag;
    uint32_t pic_width_in_mbs_minus1, pic_height_in_map_units_minus1;
    uint32_t frame_mbs_only_flag, direct_8x8_inference_flag;
    uint32_t frame_cropping_flag, frame_crop_left_offset, frame_crop_right_offset;
    uint32_t frame_crop_top_offset, frame_crop_bottom_offset;
    uint32_t vui_parameters_present_flag;
    uint32_t aspect_ratio_info_present_flag, aspect_ratio_idc, sar_width, sar_height;
    uint32_t timing_info_present_flag, num_units_in_tick, time_scale, fixed_frame_rate_flag;
    // Written only (the reader stops after the timing information).
    uint32_t bitstream_restriction_flag, motion_vectors_over_pic_boundaries_flag;
    uint32_t log2_max_mv_length_horizontal, log2_max_mv_length_vertical;
    uint32_t max_num_reorder_frames, max_dec_frame_buffering;
};

struct h264_pps {
    uint32_t pic_parameter_set_id, seq_parameter_set_id;
    uint32_t entropy_coding_mode_flag, bottom_field_pic_order_in_frame_present_flag;
    uint32_t num_slice_groups_minus1;
    uint32_t num_ref_idx_l0_default_active_minus1, num_ref_idx_l1_default_active_minus1;
    uint32_t weighted_pred_flag, weighted_bipred_idc;
    int32_t pic_init_qp_minus26, pic_init_qs_minus26, chroma_qp_index_offset;
    uint32_t deblocking_filter_control_present_flag, constrained_intra_pred_flag;
    uint32_t redundant_pic_cnt_present_flag;
    uint32_t transform_8x8_mode_flag, pic_scaling_matrix_present_flag;
    int32_t second_chroma_qp_index_offset;
};

enum { H264_MAX_MODIFICATIONS = 33 };

struct h264_modification {
    uint32_t idc;           // modification_of_pic_nums_idc: 0, 1 (short-term), 2 (long-term)
    uint32_t value;         // abs_diff_pic_num_minus1 or long_term_pic_num
};

enum { H264_MAX_MMCOS = 66 };

// One memory_management_control_operation (7.3.3.3) with the values it carries.
struct h264_mmco {
    uint32_t operation;
    uint32_t difference_of_pic_nums_minus1, long_term_pic_num, long_term_frame_idx;
    uint32_t max_long_term_frame_idx_plus1;
};

struct h264_slice_header {
    uint32_t nal_ref_idc, nal_unit_type;
    uint32_t first_mb_in_slice, slice_type, pic_parameter_set_id, frame_num;
    uint32_t idr_pic_id, pic_order_cnt_lsb;
    int32_t delta_pic_order_cnt_bottom;
    uint32_t redundant_pic_cnt;
    uint32_t direct_spatial_mv_pred_flag;
    uint32_t num_ref_idx_active_override_flag;
    uint32_t num_ref_idx_l0_active_minus1, num_ref_idx_l1_active_minus1;
    uint32_t modification_count[2];
    struct h264_modification modifications[2][H264_MAX_MODIFICATIONS];
    uint32_t no_output_of_prior_pics_flag, long_term_reference_flag;
    uint32_t adaptive_ref_pic_marking_mode_flag;
    uint32_t mmco_count;
    struct h264_mmco mmcos[H264_MAX_MMCOS];
    uint32_t cabac_init_idc;
    int32_t slice_qp_delta;
    uint32_t disable_deblocking_filter_idc;
    int32_t slice_alpha_c0_offset_div2, slice_beta_offset_div2;
};

// Readers return false on syntax the double does not take (and say why in *why).
bool h264_read_sps(struct bit_reader *reader, struct h264_sps *sps, const char **why);
bool h264_read_pps(struct bit_reader *reader, const struct h264_sps *sps, struct h264_pps *pps,
                   const char **why);
// Reads the NAL header byte and the slice header.
bool h264_read_slice_header(struct bit_reader *reader, const struct h264_sps *sps,
                            const struct h264_pps *pps, struct h264_slice_header *header, const char **why);

// Writers produce the RBSP with its NAL header byte, SPS and PPS with trailing bits.
void h264_write_sps(struct bit_writer *writer, const struct h264_sps *sps);
void h264_write_pps(struct bit_writer *writer, const struct h264_pps *pps);
void h264_write_slice_header(struct bit_writer *writer, const struct h264_sps *sps,
                             const struct h264_pps *pps, const struct h264_slice_header *header);

#endif
