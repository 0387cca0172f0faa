// The rules a client's bookkeeping must follow, checked at vaEndPicture against the stream so
// far as a decoder would see it (H.264 7.4.3, 8.2.1, 8.2.4, 8.2.5.3). Each broken rule is one
// violation; the picture is encoded only when there are none.
#include "fake_va.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
    uint32_t expected = (context->prev_ref_frame_num + 1) % fva_max_frame_num(context);
    if (pic->frame_num != expected) {
        fva_violation("frame_num, expected %u (previous reference picture's %u + 1, mod MaxFrameNum %u), got %u",
                      expected, context->prev_ref_frame_num, fva_max_frame_num(context), pic->frame_num);
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
                ? context->prev_frame_num_offset + fva_max_frame_num(context) : context->prev_frame_num_offset;
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
    fva_check_slices(context);
    fva_check_marking(context);
    fva_check_reference_frames(context);
    if (fva_stats.violation_count == before) fva_check_reference_lists(context);
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
