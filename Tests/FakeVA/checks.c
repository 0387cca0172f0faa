// The rules a client's bookkeeping must follow, checked at vaEndPicture against the stream so
// far as a decoder would see it (H.264 7.4.3, 8.2.1, 8.2.4, 8.2.5.3). Each broken rule is one
// violation; the picture is encoded only when there are none.
#include "fake_va.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool invalid_picture(const VAPictureH264 *picture) {
    return picture->picture_id == VA_INVALID_SURFACE || (picture->flags & VA_PICTURE_H264_INVALID);
}

static uint32_t max_frame_num(const struct fva_context *context) {
    return 1u << (context->sequence.seq_fields.bits.log2_max_frame_num_minus4 + 4);
}

// FrameNumWrap (8.2.4.1), which for frames is also PicNum.
static int64_t pic_num(const struct fva_context *context, const struct fva_ref *ref) {
    uint32_t current = context->picture.params.frame_num;
    return ref->frame_num > current ? (int64_t)ref->frame_num - max_frame_num(context) : ref->frame_num;
}

unsigned fva_active_refs(const struct fva_context *context, const VAEncSliceParameterBufferH264 *slice, int list) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    if (slice->num_ref_idx_active_override_flag) {
        return 1u + (list == 0 ? slice->num_ref_idx_l0_active_minus1 : slice->num_ref_idx_l1_active_minus1);
    }
    return 1u + (list == 0 ? pic->num_ref_idx_l0_active_minus1 : pic->num_ref_idx_l1_active_minus1);
}

// ---- what must be there ----

static bool check_structure(struct fva_driver *driver, struct fva_context *context) {
    struct fva_picture *picture = &context->picture;
    bool good = true;
    if (picture->awaiting_packed_data) {
        fva_violation("packed header parameter buffer, expected its data buffer after it, got vaEndPicture");
        good = false;
    }
    if (!picture->have_picture_params) {
        fva_violation("picture parameter buffer, expected one per picture, got none");
        return false;
    }
    if (!context->have_sequence) {
        fva_violation("sequence parameter buffer, expected one before the first picture, got none");
        return false;
    }
    if (picture->slice_count == 0) {
        fva_violation("slice parameter buffers, expected at least one, got none");
        return false;
    }
    const struct fva_buffer *coded = fva_table_get(&driver->buffers, picture->params.coded_buf);
    if (coded == NULL || coded->coded == NULL) {
        fva_violation("picture parameters coded_buf, expected a coded buffer (VAEncCodedBufferType), got %#x",
                      picture->params.coded_buf);
        return false;
    }
    if (coded->mapped) {
        fva_violation("coded buffer %#x, expected it unmapped before it is written again, got %u mappings",
                      picture->params.coded_buf, coded->mapped);
        good = false;
    }
    if (fva_table_get(&driver->surfaces, picture->params.CurrPic.picture_id) == NULL) {
        fva_violation("CurrPic.picture_id, expected a surface for the reconstructed picture, got %#x",
                      picture->params.CurrPic.picture_id);
        return false;
    }
    if (fva_table_get(&driver->surfaces, picture->render_target) == NULL) {
        fva_violation("render target %#x, expected a live surface, got one destroyed after vaBeginPicture",
                      picture->render_target);
        return false;
    }
    return good;
}

// ---- sequence, surfaces, profile ----

static bool surface_big_enough(const struct fva_surface *surface, const VAEncSequenceParameterBufferH264 *seq) {
    return (surface->width + 15) / 16 >= seq->picture_width_in_mbs
        && (surface->luma_rows / 16) >= seq->picture_height_in_mbs
        && (surface->height + 15) / 16 >= seq->picture_height_in_mbs;
}

static void check_sequence(struct fva_driver *driver, struct fva_context *context) {
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    unsigned width_mbs = ((unsigned)context->width + 15) / 16, height_mbs = ((unsigned)context->height + 15) / 16;
    if (seq->picture_width_in_mbs != width_mbs || seq->picture_height_in_mbs != height_mbs) {
        fva_violation("picture size in macroblocks, expected %ux%u (the context's %dx%d), got %ux%u", width_mbs,
                      height_mbs, context->width, context->height, seq->picture_width_in_mbs,
                      seq->picture_height_in_mbs);
    }
    if (!seq->seq_fields.bits.frame_mbs_only_flag) {
        fva_violation("frame_mbs_only_flag, expected 1 (field coding is not supported by the double), got 0");
    }
    if (seq->seq_fields.bits.chroma_format_idc != 1) {
        fva_violation("chroma_format_idc, expected 1 (4:2:0), got %u", seq->seq_fields.bits.chroma_format_idc);
    }
    if (seq->bit_depth_luma_minus8 != 0 || seq->bit_depth_chroma_minus8 != 0) {
        fva_violation("bit depth, expected 8, got luma %u chroma %u", seq->bit_depth_luma_minus8 + 8u,
                      seq->bit_depth_chroma_minus8 + 8u);
    }
    if (seq->seq_fields.bits.pic_order_cnt_type == 1) {
        fva_violation("pic_order_cnt_type, expected 0 or 2 (type 1 is not supported by the double), got 1");
    }
    if (seq->max_num_ref_frames > 16) {
        fva_violation("max_num_ref_frames, expected at most 16, got %u", seq->max_num_ref_frames);
    }
    if (seq->seq_parameter_set_id != pic->seq_parameter_set_id) {
        fva_violation("picture parameters seq_parameter_set_id, expected %u (the sequence's), got %u",
                      seq->seq_parameter_set_id, pic->seq_parameter_set_id);
    }
    if (pic->pic_fields.bits.weighted_pred_flag || pic->pic_fields.bits.weighted_bipred_idc) {
        fva_violation("weighted prediction, expected none (not supported by the double), got flag %u idc %u",
                      pic->pic_fields.bits.weighted_pred_flag, pic->pic_fields.bits.weighted_bipred_idc);
    }
    if (pic->pic_fields.bits.pic_scaling_matrix_present_flag || seq->seq_fields.bits.seq_scaling_matrix_present_flag) {
        fva_violation("scaling matrices, expected none (not supported by the double), got some");
    }
    VAProfile profile = context->config.profile;
    if (profile == VAProfileH264ConstrainedBaseline && pic->pic_fields.bits.entropy_coding_mode_flag) {
        fva_violation("entropy_coding_mode_flag in Constrained Baseline, expected 0 (CAVLC), got 1");
    }
    if (profile != VAProfileH264High && pic->pic_fields.bits.transform_8x8_mode_flag) {
        fva_violation("transform_8x8_mode_flag in %s profile, expected 0, got 1", fva_profile_name(profile));
    }

    struct fva_surface *target = fva_table_get(&driver->surfaces, context->picture.render_target);
    struct fva_surface *reconstructed = fva_table_get(&driver->surfaces, pic->CurrPic.picture_id);
    if (!surface_big_enough(target, seq)) {
        fva_violation("input surface %#x, expected at least %ux%u pixels, got %ux%u", context->picture.render_target,
                      seq->picture_width_in_mbs * 16u, seq->picture_height_in_mbs * 16u, target->width, target->height);
    }
    if (!surface_big_enough(reconstructed, seq)) {
        fva_violation("reconstructed surface %#x, expected at least %ux%u pixels, got %ux%u", pic->CurrPic.picture_id,
                      seq->picture_width_in_mbs * 16u, seq->picture_height_in_mbs * 16u, reconstructed->width,
                      reconstructed->height);
    }
    if (target->derived != VA_INVALID_ID) {
        struct fva_image *image = fva_table_get(&driver->images, target->derived);
        struct fva_buffer *buffer = image ? fva_table_get(&driver->buffers, image->image.buf) : NULL;
        if (buffer != NULL && buffer->mapped) {
            fva_violation("input surface %#x, expected it unmapped while it is encoded, got its derived image mapped",
                          context->picture.render_target);
        }
    }
    if (pic->CurrPic.frame_idx != pic->frame_num) {
        fva_violation("CurrPic.frame_idx, expected frame_num %u, got %u", pic->frame_num, pic->CurrPic.frame_idx);
    }
    if (!pic->pic_fields.bits.idr_pic_flag) {
        for (unsigned i = 0; i < context->dpb_count; i++) {
            if (context->dpb[i].surface == pic->CurrPic.picture_id) {
                fva_violation("CurrPic.picture_id %#x, expected a surface no reference picture is in, got the one "
                              "holding frame_num %u (POC %d)", pic->CurrPic.picture_id, context->dpb[i].frame_num,
                              context->dpb[i].poc);
            }
        }
    }
}

// ---- the client's packed SPS and PPS against its parameter buffers ----

static void check_parameter_sets(struct fva_context *context) {
    struct fva_picture *picture = &context->picture;
    bool sequence_header_here = false;
    for (unsigned i = 0; i < picture->packed_count; i++) {
        if (picture->packed[i].type != VAEncPackedHeaderSequence) continue;
        sequence_header_here = true;
        if (!fva_parse_packed_sequence(context, &picture->packed[i])) return;
    }
    if (context->have_sps && (sequence_header_here || picture->sequence_params_here)) {
        struct h264_sps expected;
        fva_sps_from_params(context, &expected);
        fva_compare_sps(&expected, &context->sps);
    }
    if (context->have_pps) {
        struct h264_pps expected;
        fva_pps_from_params(context, &expected);
        fva_compare_pps(&expected, &context->pps);
    }
}

// ---- frame_num, POC, idr_pic_id ----

static void check_frame_num(struct fva_context *context) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    if (pic->pic_fields.bits.idr_pic_flag) {
        if (pic->frame_num != 0) fva_violation("IDR frame_num, expected 0, got %u", pic->frame_num);
        if (!pic->pic_fields.bits.reference_pic_flag) {
            fva_violation("IDR reference_pic_flag, expected nonzero (an IDR picture is a reference), got 0");
        }
        return;
    }
    if (!context->started) {
        fva_violation("first picture, expected an IDR picture (idr_pic_flag 1), got a non-IDR one");
        return;
    }
    uint32_t expected = (context->prev_ref_frame_num + 1) % max_frame_num(context);
    if (pic->frame_num != expected) {
        fva_violation("frame_num, expected %u (previous reference picture's %u + 1, mod MaxFrameNum %u), got %u",
                      expected, context->prev_ref_frame_num, max_frame_num(context), pic->frame_num);
    }
}

static int32_t modulo(int32_t value, int32_t m) {
    int32_t r = value % m;
    return r < 0 ? r + m : r;
}

static void check_poc(struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    const VAEncPictureParameterBufferH264 *pic = &picture->params;
    const VAEncSequenceParameterBufferH264 *seq = &context->sequence;
    bool idr = pic->pic_fields.bits.idr_pic_flag;
    int32_t top = pic->CurrPic.TopFieldOrderCnt;
    if (pic->CurrPic.BottomFieldOrderCnt != top) {
        fva_violation("CurrPic.BottomFieldOrderCnt of a frame, expected TopFieldOrderCnt %d, got %d", top,
                      pic->CurrPic.BottomFieldOrderCnt);
    }
    if (idr && top != 0) fva_violation("IDR TopFieldOrderCnt, expected 0, got %d", top);
    if (seq->seq_fields.bits.pic_order_cnt_type == 0) {
        int32_t max_lsb = 1 << (seq->seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4 + 4);
        bool lsb_good = true;
        for (unsigned i = 0; i < picture->slice_count; i++) {
            const VAEncSliceParameterBufferH264 *slice = &picture->slices[i];
            if (slice->pic_order_cnt_lsb != modulo(top, max_lsb)) {
                fva_violation("slice %u pic_order_cnt_lsb, expected %d (TopFieldOrderCnt %d mod MaxPicOrderCntLsb %d), "
                              "got %u", i, modulo(top, max_lsb), top, max_lsb, slice->pic_order_cnt_lsb);
                lsb_good = false;
            }
            if (slice->delta_pic_order_cnt_bottom != 0) {
                fva_violation("slice %u delta_pic_order_cnt_bottom of a frame, expected 0, got %d", i,
                              slice->delta_pic_order_cnt_bottom);
            }
        }
        // 8.2.1.1: the POC a decoder derives from pic_order_cnt_lsb.
        int32_t prev_msb = idr ? 0 : context->prev_poc_msb, prev_lsb = idr ? 0 : context->prev_poc_lsb;
        int32_t lsb = picture->slices[0].pic_order_cnt_lsb, msb;
        if (lsb < prev_lsb && prev_lsb - lsb >= max_lsb / 2) {
            msb = prev_msb + max_lsb;
        } else if (lsb > prev_lsb && lsb - prev_lsb > max_lsb / 2) {
            msb = prev_msb - max_lsb;
        } else {
            msb = prev_msb;
        }
        context->pending_poc_msb = msb;
        if (lsb_good && (idr || context->started) && top != msb + lsb) {
            fva_violation("TopFieldOrderCnt, expected %d (what a decoder derives from pic_order_cnt_lsb %d after the "
                          "previous reference picture's POC %d), got %d", msb + lsb, lsb, prev_msb + prev_lsb, top);
        }
    } else {
        // 8.2.1.3: POC follows frame_num.
        uint32_t offset = 0;
        if (!idr) {
            offset = context->prev_frame_num > pic->frame_num
                ? context->prev_frame_num_offset + max_frame_num(context) : context->prev_frame_num_offset;
        }
        context->pending_frame_num_offset = offset;
        int32_t expected = idr ? 0 : (int32_t)(2 * (offset + pic->frame_num)) - (pic->pic_fields.bits.reference_pic_flag ? 0 : 1);
        if (top != expected) {
            fva_violation("TopFieldOrderCnt with pic_order_cnt_type 2, expected %d, got %d", expected, top);
        }
    }
    if (!idr) {
        for (unsigned i = 0; i < context->poc_count; i++) {
            if (context->pocs[i] == top) {
                fva_violation("TopFieldOrderCnt, expected a POC not used since the last IDR picture, got %d again", top);
                break;
            }
        }
    }
}

static void check_idr_pic_id(struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    if (!picture->params.pic_fields.bits.idr_pic_flag) return;
    uint32_t id = picture->slices[0].idr_pic_id;
    for (unsigned i = 1; i < picture->slice_count; i++) {
        if (picture->slices[i].idr_pic_id != id) {
            fva_violation("slice %u idr_pic_id, expected %u like slice 0, got %u", i, id, picture->slices[i].idr_pic_id);
        }
    }
    if (context->prev_idr_pic_id >= 0 && (uint32_t)context->prev_idr_pic_id == id) {
        fva_violation("idr_pic_id, expected one different from the previous IDR picture's %d, got %u",
                      context->prev_idr_pic_id, id);
    }
}

// ---- slices and their headers ----

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

static void check_slices(struct fva_context *context) {
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

// ---- marking: the reference pictures after this one (8.2.5) ----

static bool same_marking(const struct h264_slice_header *a, const struct h264_slice_header *b) {
    if (a->adaptive_ref_pic_marking_mode_flag != b->adaptive_ref_pic_marking_mode_flag
        || a->mmco_count != b->mmco_count || a->long_term_reference_flag != b->long_term_reference_flag) {
        return false;
    }
    for (unsigned i = 0; i < a->mmco_count; i++) {
        if (a->mmcos[i].operation != b->mmcos[i].operation
            || a->mmcos[i].difference_of_pic_nums_minus1 != b->mmcos[i].difference_of_pic_nums_minus1) {
            return false;
        }
    }
    return true;
}

static void check_marking(struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    const VAEncPictureParameterBufferH264 *pic = &picture->params;
    const struct h264_slice_header *header = &picture->headers[0];
    for (unsigned i = 1; i < picture->slice_count; i++) {
        if (!same_marking(header, &picture->headers[i])) {
            fva_violation("slice %u dec_ref_pic_marking, expected the same as slice 0's, got a different one", i);
        }
    }
    bool idr = pic->pic_fields.bits.idr_pic_flag;
    struct fva_ref *next = context->next_dpb;
    unsigned count = 0;
    if (!idr) {
        memcpy(next, context->dpb, context->dpb_count * sizeof next[0]);
        count = context->dpb_count;
    }
    context->next_dpb_count = count;
    if (!pic->pic_fields.bits.reference_pic_flag) return;
    unsigned limit = context->sequence.max_num_ref_frames > 0 ? context->sequence.max_num_ref_frames : 1;
    if (header->adaptive_ref_pic_marking_mode_flag) {
        for (unsigned m = 0; m < header->mmco_count; m++) {
            const struct h264_mmco *mmco = &header->mmcos[m];
            if (mmco->operation != 1) {
                fva_violation("memory_management_control_operation, expected 1 (marking a short-term picture unused, "
                              "the only one the double supports), got %u", mmco->operation);
                continue;
            }
            int64_t target = (int64_t)pic->frame_num - (mmco->difference_of_pic_nums_minus1 + 1);
            unsigned found = count;
            for (unsigned i = 0; i < count; i++) {
                if (pic_num(context, &next[i]) == target) found = i;
            }
            if (found == count) {
                fva_violation("memory_management_control_operation 1, expected picNum of a short-term reference "
                              "picture, got %lld", (long long)target);
                continue;
            }
            next[found] = next[--count];
        }
        if (count >= limit) {
            fva_violation("reference pictures after marking, expected at most max_num_ref_frames %u, got %u", limit,
                          count + 1);
            count = limit - 1;
        }
    } else {
        // 8.2.5.3: the sliding window drops the reference with the smallest FrameNumWrap.
        while (count >= limit) {
            unsigned oldest = 0;
            for (unsigned i = 1; i < count; i++) {
                if (pic_num(context, &next[i]) < pic_num(context, &next[oldest])) oldest = i;
            }
            next[oldest] = next[--count];
        }
    }
    next[count++] = (struct fva_ref){pic->CurrPic.picture_id, pic->frame_num, pic->CurrPic.TopFieldOrderCnt};
    context->next_dpb_count = count;
}

// ---- references ----

// A picture this one's marking removes from the DPB and no slice refers to. ffmpeg leaves such
// pictures out of ReferenceFrames (the pictures it marks unused with MMCO 1); a driver loses
// nothing by not hearing of them.
static bool dropped_unused(const struct fva_context *context, const struct fva_ref *ref) {
    for (unsigned i = 0; i < context->next_dpb_count; i++) {
        if (context->next_dpb[i].surface == ref->surface) return false;
    }
    const struct fva_picture *picture = &context->picture;
    for (unsigned s = 0; s < picture->slice_count; s++) {
        for (unsigned i = 0; i < 32; i++) {
            const VAPictureH264 *entries[2] = {&picture->slices[s].RefPicList0[i], &picture->slices[s].RefPicList1[i]};
            for (unsigned l = 0; l < 2; l++) {
                if (!invalid_picture(entries[l]) && entries[l]->picture_id == ref->surface) return false;
            }
        }
    }
    return true;
}

static void check_reference_frames(struct fva_context *context) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    bool idr = pic->pic_fields.bits.idr_pic_flag;
    unsigned expected_count = idr ? 0 : context->dpb_count;
    bool matched[FVA_MAX_DPB] = {false};
    unsigned got = 0;
    for (unsigned i = 0; i < 16; i++) {
        const VAPictureH264 *entry = &pic->ReferenceFrames[i];
        if (invalid_picture(entry)) continue;
        got++;
        const struct fva_ref *ref = NULL;
        unsigned index = 0;
        for (unsigned j = 0; j < expected_count; j++) {
            if (context->dpb[j].surface == entry->picture_id) {
                ref = &context->dpb[j];
                index = j;
            }
        }
        if (ref == NULL) {
            fva_violation("ReferenceFrames[%u], expected one of the %u reference pictures a decoder holds, got surface "
                          "%#x (frame_idx %u, POC %d), which holds none", i, expected_count, entry->picture_id,
                          entry->frame_idx, entry->TopFieldOrderCnt);
            continue;
        }
        if (matched[index]) {
            fva_violation("ReferenceFrames[%u], expected each reference picture once, got surface %#x again", i,
                          entry->picture_id);
        }
        matched[index] = true;
        if (entry->frame_idx != ref->frame_num || entry->TopFieldOrderCnt != ref->poc
            || entry->BottomFieldOrderCnt != ref->poc) {
            fva_violation("ReferenceFrames[%u] surface %#x, expected frame_idx %u and POC %d, got frame_idx %u and POC "
                          "%d/%d", i, entry->picture_id, ref->frame_num, ref->poc, entry->frame_idx,
                          entry->TopFieldOrderCnt, entry->BottomFieldOrderCnt);
        }
        if ((entry->flags & (VA_PICTURE_H264_SHORT_TERM_REFERENCE | VA_PICTURE_H264_LONG_TERM_REFERENCE
                             | VA_PICTURE_H264_TOP_FIELD | VA_PICTURE_H264_BOTTOM_FIELD))
            != VA_PICTURE_H264_SHORT_TERM_REFERENCE) {
            fva_violation("ReferenceFrames[%u] flags, expected VA_PICTURE_H264_SHORT_TERM_REFERENCE (%#x), got %#x", i,
                          VA_PICTURE_H264_SHORT_TERM_REFERENCE, entry->flags);
        }
    }
    for (unsigned j = 0; j < expected_count; j++) {
        if (!matched[j] && !dropped_unused(context, &context->dpb[j])) {
            fva_violation("ReferenceFrames, expected surface %#x (frame_num %u, POC %d), which a decoder still holds "
                          "(sliding window of max_num_ref_frames %u), got it missing (%u entries)",
                          context->dpb[j].surface, context->dpb[j].frame_num, context->dpb[j].poc,
                          context->sequence.max_num_ref_frames, got);
        }
    }
}

static int compare_poc_descending(const void *a, const void *b) {
    const struct fva_ref *x = *(const struct fva_ref *const *)a, *y = *(const struct fva_ref *const *)b;
    return (x->poc < y->poc) - (x->poc > y->poc);
}

static int compare_poc_ascending(const void *a, const void *b) {
    return -compare_poc_descending(a, b);
}

static const struct fva_context *sort_context;

static int compare_pic_num_descending(const void *a, const void *b) {
    int64_t x = pic_num(sort_context, *(const struct fva_ref *const *)a);
    int64_t y = pic_num(sort_context, *(const struct fva_ref *const *)b);
    return (x < y) - (x > y);
}

// The initial lists of 8.2.4.2.1 (P) and 8.2.4.2.3 (B), for frames with short-term references.
static unsigned initial_lists(const struct fva_context *context, unsigned type, const struct fva_ref *lists[2][FVA_MAX_DPB]) {
    unsigned count = context->dpb_count;
    int32_t current = context->picture.params.CurrPic.TopFieldOrderCnt;
    if (type == H264_SLICE_P) {
        for (unsigned i = 0; i < count; i++) lists[0][i] = &context->dpb[i];
        sort_context = context;
        qsort(lists[0], count, sizeof lists[0][0], compare_pic_num_descending);
        return count;
    }
    const struct fva_ref *before[FVA_MAX_DPB], *after[FVA_MAX_DPB];
    unsigned nb = 0, na = 0;
    for (unsigned i = 0; i < count; i++) {
        if (context->dpb[i].poc < current) before[nb++] = &context->dpb[i];
        else after[na++] = &context->dpb[i];
    }
    qsort(before, nb, sizeof before[0], compare_poc_descending);
    qsort(after, na, sizeof after[0], compare_poc_ascending);
    for (unsigned i = 0; i < nb; i++) lists[0][i] = lists[1][na + i] = before[i];
    for (unsigned i = 0; i < na; i++) lists[0][nb + i] = lists[1][i] = after[i];
    if (count > 1 && memcmp(lists[0], lists[1], count * sizeof lists[0][0]) == 0) {
        const struct fva_ref *first = lists[1][0];
        lists[1][0] = lists[1][1];
        lists[1][1] = first;
    }
    return count;
}

// 8.2.4.3.1 on a list of `active` entries (NULL: no reference picture).
static bool apply_modifications(const struct fva_context *context, const struct h264_slice_header *header,
                                unsigned list, unsigned slice_index, const struct fva_ref **entries, unsigned active) {
    int64_t max_pic_num = max_frame_num(context), current = context->picture.params.frame_num;
    int64_t prediction = current;
    unsigned ref_index = 0;
    for (unsigned m = 0; m < header->modification_count[list]; m++) {
        const struct h264_modification *modification = &header->modifications[list][m];
        if (modification->idc == 2) {
            fva_violation("slice %u ref_pic_list_modification of long-term pictures, expected none (not supported by "
                          "the double), got one", slice_index);
            return false;
        }
        if (ref_index >= active) {
            fva_violation("slice %u ref_pic_list_modification_l%u, expected at most %u operations, got more",
                          slice_index, list, active);
            return false;
        }
        int64_t difference = (int64_t)modification->value + 1;
        int64_t no_wrap = modification->idc == 0 ? prediction - difference : prediction + difference;
        if (no_wrap < 0) no_wrap += max_pic_num;
        if (no_wrap >= max_pic_num) no_wrap -= max_pic_num;
        prediction = no_wrap;
        int64_t target = no_wrap > current ? no_wrap - max_pic_num : no_wrap;
        const struct fva_ref *picture = NULL;
        for (unsigned i = 0; i < context->dpb_count; i++) {
            if (pic_num(context, &context->dpb[i]) == target) picture = &context->dpb[i];
        }
        if (picture == NULL) {
            fva_violation("slice %u ref_pic_list_modification_l%u, expected picNum of a reference picture, got %lld",
                          slice_index, list, (long long)target);
            return false;
        }
        for (unsigned c = active; c > ref_index; c--) entries[c] = entries[c - 1];
        entries[ref_index++] = picture;
        unsigned n = ref_index;
        for (unsigned c = ref_index; c <= active; c++) {
            if (entries[c] != picture) entries[n++] = entries[c];
        }
    }
    return true;
}

static void check_list(const struct fva_context *context, unsigned slice_index, unsigned list,
                       const VAPictureH264 *got, const struct fva_ref **expected, unsigned active) {
    for (unsigned i = 0; i < 32; i++) {
        const struct fva_ref *want = i < active ? expected[i] : NULL;
        if (want == NULL) {
            if (!invalid_picture(&got[i])) {
                fva_violation("slice %u RefPicList%u[%u], expected no picture (VA_INVALID_SURFACE) beyond the %u "
                              "active, got surface %#x", slice_index, list, i, active, got[i].picture_id);
            }
            continue;
        }
        if (invalid_picture(&got[i]) || got[i].picture_id != want->surface || got[i].TopFieldOrderCnt != want->poc
            || got[i].frame_idx != want->frame_num) {
            fva_violation("slice %u RefPicList%u[%u], expected surface %#x (frame_num %u, POC %d), got surface %#x "
                          "(frame_idx %u, POC %d)", slice_index, list, i, want->surface, want->frame_num, want->poc,
                          got[i].picture_id, got[i].frame_idx, got[i].TopFieldOrderCnt);
        }
    }
    (void)context;
}

static void check_reference_lists(struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    int32_t current = picture->params.CurrPic.TopFieldOrderCnt;
    for (unsigned s = 0; s < picture->slice_count; s++) {
        const VAEncSliceParameterBufferH264 *slice = &picture->slices[s];
        unsigned type = slice->slice_type % 5;
        if (type == H264_SLICE_I) {
            check_list(context, s, 0, slice->RefPicList0, NULL, 0);
            check_list(context, s, 1, slice->RefPicList1, NULL, 0);
            continue;
        }
        unsigned lists = type == H264_SLICE_B ? 2 : 1;
        unsigned limits[2] = {fva_knobs.max_ref_l0, fva_knobs.max_ref_l1};
        const struct fva_ref *initial[2][FVA_MAX_DPB];
        unsigned available = initial_lists(context, type, initial);
        bool usable = true;
        for (unsigned l = 0; l < lists; l++) {
            unsigned active = fva_active_refs(context, slice, (int)l);
            if (active > limits[l]) {
                fva_violation("slice %u active references in list %u, expected at most EncMaxRefFrames' %u, got %u", s, l,
                              limits[l], active);
                usable = false;
            }
            if (active > available) {
                fva_violation("slice %u active references in list %u, expected at most the %u reference pictures a "
                              "decoder holds, got %u", s, l, available, active);
                usable = false;
            }
        }
        if (!usable) continue;
        const struct fva_ref *entries[2][33];
        for (unsigned l = 0; l < lists; l++) {
            unsigned active = fva_active_refs(context, slice, (int)l);
            memset(entries[l], 0, sizeof entries[l]);
            for (unsigned i = 0; i < active; i++) entries[l][i] = initial[l][i];
            if (!apply_modifications(context, &picture->headers[s], l, s, entries[l], active)) continue;
            check_list(context, s, l, l == 0 ? slice->RefPicList0 : slice->RefPicList1, entries[l], active);
        }
        if (type == H264_SLICE_P) {
            check_list(context, s, 1, slice->RefPicList1, NULL, 0);
        } else if (entries[0][0] != NULL && entries[1][0] != NULL
                   && !(entries[0][0]->poc < current && current < entries[1][0]->poc)) {
            fva_violation("slice %u B picture POC, expected between RefPicList0[0]'s %d and RefPicList1[0]'s %d, got %d",
                          s, entries[0][0]->poc, entries[1][0]->poc, current);
        }
    }
}

// ---- rate control ----

static void check_rate_control(struct fva_context *context) {
    const struct fva_rate_control *rate = &context->rate;
    uint32_t mode = context->config.rc_mode;
    const char *name = fva_rc_name(mode);
    if (mode == VA_RC_CBR || mode == VA_RC_VBR || mode == VA_RC_ICQ) {
        if (!rate->have_rc) {
            fva_violation("%s rate control, expected a RateControl misc parameter buffer by the first picture, got none",
                          name);
        } else if (mode == VA_RC_ICQ) {
            if (rate->rc.ICQ_quality_factor < 1 || rate->rc.ICQ_quality_factor > 51) {
                fva_violation("ICQ_quality_factor, expected 1…51, got %u", rate->rc.ICQ_quality_factor);
            }
        } else {
            if (rate->rc.bits_per_second == 0) {
                fva_violation("%s bits_per_second, expected more than 0, got 0", name);
            }
            if (mode == VA_RC_CBR && rate->rc.target_percentage != 100) {
                fva_violation("CBR target_percentage, expected 100, got %u", rate->rc.target_percentage);
            }
            if (mode == VA_RC_VBR && (rate->rc.target_percentage == 0 || rate->rc.target_percentage > 100)) {
                fva_violation("VBR target_percentage, expected 1…100, got %u", rate->rc.target_percentage);
            }
            if (!rate->have_hrd || rate->hrd.buffer_size == 0) {
                fva_violation("%s HRD buffer_size, expected an HRD misc parameter buffer with buffer_size > 0, got %s",
                              name, rate->have_hrd ? "0" : "none");
            }
        }
    }
    if (rate->have_rc && rate->rc.min_qp > 51) fva_violation("min_qp, expected 0…51, got %u", rate->rc.min_qp);
    if (rate->have_rc && rate->rc.max_qp > 51) fva_violation("max_qp, expected 0…51, got %u", rate->rc.max_qp);
    if (rate->have_frame_rate) {
        uint32_t raw = rate->frame_rate.framerate;
        uint32_t numerator = raw & 0xffff, denominator = raw >> 16;
        if (numerator == 0) fva_violation("frame rate numerator, expected more than 0, got framerate %#x", raw);
        (void)denominator;      // 0 means 1
    }
    if (rate->have_quality && rate->quality.quality_level > fva_knobs.quality_range) {
        fva_violation("quality_level, expected 0…%u (EncQualityRange), got %u", fva_knobs.quality_range,
                      rate->quality.quality_level);
    }
}

static bool check_rules(struct fva_driver *driver, struct fva_context *context, unsigned before) {
    check_sequence(driver, context);
    check_parameter_sets(context);
    check_frame_num(context);
    check_poc(context);
    check_idr_pic_id(context);
    check_slices(context);
    check_marking(context);
    check_reference_frames(context);
    if (fva_stats.violation_count == before) check_reference_lists(context);
    check_rate_control(context);
    return fva_stats.violation_count == before;
}

static void label_picture(const struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    static const char *const types[] = {"P", "B", "I"};
    const char *type = picture->slice_count > 0 && picture->slices[0].slice_type % 5 <= 2
        ? types[picture->slices[0].slice_type % 5] : "?";
    snprintf(fva_picture_label, sizeof fva_picture_label, "picture %u (%s%s, frame_num %u, POC %d): ",
             fva_stats.frames, picture->params.pic_fields.bits.idr_pic_flag ? "IDR " : "", type,
             picture->params.frame_num, picture->params.CurrPic.TopFieldOrderCnt);
}

bool fva_check_picture(struct fva_driver *driver, struct fva_context *context) {
    unsigned before = fva_stats.violation_count;
    if (!check_structure(driver, context)) return false;
    label_picture(context);
    bool good = check_rules(driver, context, before);
    fva_picture_label[0] = '\0';
    return good;
}

// ---- after a picture is encoded: the decoder's state moves on ----

void fva_update_dpb(struct fva_context *context) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    bool idr = pic->pic_fields.bits.idr_pic_flag;
    int32_t poc = pic->CurrPic.TopFieldOrderCnt;
    if (idr) {
        context->poc_count = 0;
        context->prev_idr_pic_id = context->picture.slices[0].idr_pic_id;
    }
    if (context->poc_count == context->poc_capacity) {
        unsigned capacity = context->poc_capacity ? context->poc_capacity * 2 : 64;
        int32_t *pocs = realloc(context->pocs, capacity * sizeof *pocs);
        if (pocs == NULL) fva_out_of_memory();
        context->pocs = pocs;
        context->poc_capacity = capacity;
    }
    context->pocs[context->poc_count++] = poc;
    memcpy(context->dpb, context->next_dpb, context->next_dpb_count * sizeof context->dpb[0]);
    context->dpb_count = context->next_dpb_count;
    if (pic->pic_fields.bits.reference_pic_flag) {
        context->prev_ref_frame_num = pic->frame_num;
        context->prev_poc_msb = context->pending_poc_msb;
        context->prev_poc_lsb = context->picture.slices[0].pic_order_cnt_lsb;
    }
    context->prev_frame_num = pic->frame_num;
    context->prev_frame_num_offset = context->pending_frame_num_offset;
    context->started = true;
}
