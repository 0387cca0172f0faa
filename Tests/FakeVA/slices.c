// Slice parameters: slices in order covering the picture once, types the picture and profile
// allow, QP in range; and each packed slice header parsed and compared with its parameters.
#include "fake_va.h"

#include <stdlib.h>
#include <string.h>

static void check_slice_header(struct fva_context *context, unsigned index) {
    struct fva_picture *picture = &context->picture;
    struct h264_slice_header expected;
    fva_slice_header_from_params(context, &picture->slices[index], &expected);
    picture->headers[index] = expected;
    if (picture->slice_header_count == 0) return;

    struct h264_sps sps;
    struct h264_pps pps;
    if (context->have_sps) {
        sps = context->sps;
    } else {
        fva_sps_from_params(context, &sps);
    }
    if (context->have_pps) {
        pps = context->pps;
    } else {
        fva_pps_from_params(context, &pps);
    }
    const struct fva_packed *packed = &picture->slice_headers[index];
    uint8_t *copy = malloc(packed->size ? packed->size : 1);
    if (copy == NULL) fva_out_of_memory();
    memcpy(copy, packed->data, packed->size);
    size_t bits = packed->bit_length;
    if (packed->emulation_bytes) {
        size_t kept = ep_remove(copy, packed->size);
        bits -= (packed->size - kept) * 8;
    }
    size_t prefix = start_code_length(copy, bits / 8);
    if (prefix == 0) {
        fva_violation("slice %u packed header start, expected an Annex B start code, got %02x %02x %02x", index,
                      copy[0], packed->size > 1 ? copy[1] : 0, packed->size > 2 ? copy[2] : 0);
        free(copy);
        return;
    }
    struct bit_reader reader;
    br_init(&reader, copy + prefix, bits - prefix * 8);
    struct h264_slice_header got;
    const char *why = "";
    if (!h264_read_slice_header(&reader, &sps, &pps, &got, &why)) {
        fva_violation("slice %u packed header, expected a slice header the double can parse, got one where %s", index,
                      why);
        free(copy);
        return;
    }
    size_t header_end = reader.position;
    // With CABAC, clients (ffmpeg, libva-utils) may include the cabac_alignment_one_bits.
    if (pps.entropy_coding_mode_flag) {
        while (reader.position % 8 != 0 && reader.position < reader.bits && br_bits(&reader, 1) == 1) {}
        if (reader.position != reader.bits) reader.position = header_end;
    }
    if (reader.position != reader.bits) {
        fva_violation("slice %u packed header bit_length, expected it to end with the slice header%s (%zu bits after "
                      "the start code), got %zu", index, pps.entropy_coding_mode_flag ? " or its alignment" : "",
                      header_end, reader.bits);
    }
    free(copy);
    fva_compare_slice_header(&expected, &got, index);
    picture->headers[index] = got;
}

void fva_check_slices(struct fva_context *context) {
    struct fva_picture *picture = &context->picture;
    const VAEncPictureParameterBufferH264 *pic = &picture->params;
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    unsigned total = (unsigned)seq->picture_width_in_mbs * seq->picture_height_in_mbs, next = 0;
    if (picture->slice_header_count != 0 && picture->slice_header_count != picture->slice_count) {
        fva_violation("packed slice headers, expected one per slice (%u), got %u", picture->slice_count,
                      picture->slice_header_count);
    }
    for (unsigned i = 0; i < picture->slice_count; i++) {
        const VAEncSliceParameterBufferH264 *slice = &picture->slices[i];
        unsigned type = slice->slice_type % 5;
        if (slice->macroblock_address != next) {
            fva_violation("slice %u macroblock_address, expected %u (where the previous slice ended), got %u", i, next,
                          slice->macroblock_address);
        }
        if (slice->num_macroblocks == 0 || slice->macroblock_address + slice->num_macroblocks > total) {
            fva_violation("slice %u num_macroblocks, expected 1…%u, got %u", i, total - slice->macroblock_address,
                          slice->num_macroblocks);
        }
        next = slice->macroblock_address + slice->num_macroblocks;
        if (slice->slice_type > 9 || type > H264_SLICE_I) {
            fva_violation("slice %u slice_type, expected P, B or I (0…2, 5…7), got %u", i, slice->slice_type);
            continue;
        }
        if (pic->pic_fields.bits.idr_pic_flag && type != H264_SLICE_I) {
            fva_violation("slice %u slice_type in an IDR picture, expected I (2), got %u", i, slice->slice_type);
        }
        if (type == H264_SLICE_B && context->config.profile == VAProfileH264ConstrainedBaseline) {
            fva_violation("slice %u slice_type in Constrained Baseline, expected I or P, got B", i);
        }
        if (slice->pic_parameter_set_id != pic->pic_parameter_set_id) {
            fva_violation("slice %u pic_parameter_set_id, expected %u (the picture's), got %u", i,
                          pic->pic_parameter_set_id, slice->pic_parameter_set_id);
        }
        int qp = pic->pic_init_qp + slice->slice_qp_delta;
        if (qp < 0 || qp > 51) {
            fva_violation("slice %u QP (pic_init_qp %u + slice_qp_delta %d), expected 0…51, got %d", i, pic->pic_init_qp,
                          slice->slice_qp_delta, qp);
        }
        if (pic->pic_fields.bits.entropy_coding_mode_flag && type != H264_SLICE_I && slice->cabac_init_idc > 2) {
            fva_violation("slice %u cabac_init_idc, expected 0…2, got %u", i, slice->cabac_init_idc);
            continue;
        }
        if (slice->disable_deblocking_filter_idc > 2 || slice->slice_alpha_c0_offset_div2 < -6
            || slice->slice_alpha_c0_offset_div2 > 6 || slice->slice_beta_offset_div2 < -6
            || slice->slice_beta_offset_div2 > 6) {
            fva_violation("slice %u deblocking, expected idc 0…2 and offsets −6…6, got idc %u offsets %d %d", i,
                          slice->disable_deblocking_filter_idc, slice->slice_alpha_c0_offset_div2,
                          slice->slice_beta_offset_div2);
        }
        if (type != H264_SLICE_I && !slice->num_ref_idx_active_override_flag
            && (slice->num_ref_idx_l0_active_minus1 != pic->num_ref_idx_l0_active_minus1
                || (type == H264_SLICE_B && slice->num_ref_idx_l1_active_minus1 != pic->num_ref_idx_l1_active_minus1))) {
            fva_violation("slice %u num_ref_idx_l0/l1_active_minus1 without num_ref_idx_active_override_flag, expected "
                          "the picture's %u/%u, got %u/%u", i, pic->num_ref_idx_l0_active_minus1,
                          pic->num_ref_idx_l1_active_minus1, slice->num_ref_idx_l0_active_minus1,
                          slice->num_ref_idx_l1_active_minus1);
        }
        check_slice_header(context, i);
    }
    if (next != total) {
        fva_violation("macroblocks covered by the slices, expected %u, got %u", total, next);
    }
}

