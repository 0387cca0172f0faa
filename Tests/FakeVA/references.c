// The reference pictures: the decoded picture buffer the double models (sliding window or
// MMCO 1 marking, 8.2.5), ReferenceFrames against it, and each slice's RefPicList0/1 against
// the default order of 8.2.4.2 as modified by the slice header (8.2.4.3).
#include "fake_va.h"

#include <stdlib.h>
#include <string.h>

static bool invalid_picture(const VAPictureH264 *picture) {
    return picture->picture_id == VA_INVALID_SURFACE || (picture->flags & VA_PICTURE_H264_INVALID);
}

uint32_t fva_max_frame_num(const struct fva_context *context) {
    return 1u << (context->sequence.seq_fields.bits.log2_max_frame_num_minus4 + 4);
}

// FrameNumWrap (8.2.4.1), which for frames is also PicNum.
static int64_t pic_num(const struct fva_context *context, const struct fva_ref *ref) {
    uint32_t current = context->picture.params.frame_num;
    return ref->frame_num > current ? (int64_t)ref->frame_num - fva_max_frame_num(context) : ref->frame_num;
}

static unsigned active_refs(const struct fva_context *context, const VAEncSliceParameterBufferH264 *slice, int list) {
    const VAEncPictureParameterBufferH264 *pic = &context->picture.params;
    if (slice->num_ref_idx_active_override_flag) {
        return 1u + (list == 0 ? slice->num_ref_idx_l0_active_minus1 : slice->num_ref_idx_l1_active_minus1);
    }
    return 1u + (list == 0 ? pic->num_ref_idx_l0_active_minus1 : pic->num_ref_idx_l1_active_minus1);
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

void fva_check_marking(struct fva_context *context) {
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

void fva_check_reference_frames(struct fva_context *context) {
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

static int64_t poc_of(const struct fva_context *context, const struct fva_ref *ref) {
    (void)context;
    return ref->poc;
}

// Insertion sort by `key`, largest first when `descending` (the DPB holds at most 16).
static void sort_refs(const struct fva_context *context, const struct fva_ref **refs, unsigned count,
                      int64_t (*key)(const struct fva_context *, const struct fva_ref *), bool descending) {
    for (unsigned i = 1; i < count; i++) {
        const struct fva_ref *moving = refs[i];
        unsigned j = i;
        while (j > 0 && (descending ? key(context, refs[j - 1]) < key(context, moving)
                                    : key(context, refs[j - 1]) > key(context, moving))) {
            refs[j] = refs[j - 1];
            j--;
        }
        refs[j] = moving;
    }
}

// The initial lists of 8.2.4.2.1 (P) and 8.2.4.2.3 (B), for frames with short-term references.
static unsigned initial_lists(const struct fva_context *context, unsigned type, const struct fva_ref *lists[2][FVA_MAX_DPB]) {
    unsigned count = context->dpb_count;
    int32_t current = context->picture.params.CurrPic.TopFieldOrderCnt;
    if (type == H264_SLICE_P) {
        for (unsigned i = 0; i < count; i++) lists[0][i] = &context->dpb[i];
        sort_refs(context, lists[0], count, pic_num, true);
        return count;
    }
    const struct fva_ref *before[FVA_MAX_DPB], *after[FVA_MAX_DPB];
    unsigned nb = 0, na = 0;
    for (unsigned i = 0; i < count; i++) {
        if (context->dpb[i].poc < current) before[nb++] = &context->dpb[i];
        else after[na++] = &context->dpb[i];
    }
    sort_refs(context, before, nb, poc_of, true);
    sort_refs(context, after, na, poc_of, false);
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
    int64_t max_pic_num = fva_max_frame_num(context), current = context->picture.params.frame_num;
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

static void check_list(unsigned slice_index, unsigned list, const VAPictureH264 *got, const struct fva_ref **expected,
                       unsigned active) {
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
}

void fva_check_reference_lists(struct fva_context *context) {
    const struct fva_picture *picture = &context->picture;
    int32_t current = picture->params.CurrPic.TopFieldOrderCnt;
    for (unsigned s = 0; s < picture->slice_count; s++) {
        const VAEncSliceParameterBufferH264 *slice = &picture->slices[s];
        unsigned type = slice->slice_type % 5;
        if (type == H264_SLICE_I) {
            check_list(s, 0, slice->RefPicList0, NULL, 0);
            check_list(s, 1, slice->RefPicList1, NULL, 0);
            continue;
        }
        unsigned lists = type == H264_SLICE_B ? 2 : 1;
        unsigned limits[2] = {fva_knobs.max_ref_l0, fva_knobs.max_ref_l1};
        const struct fva_ref *initial[2][FVA_MAX_DPB];
        unsigned available = initial_lists(context, type, initial);
        bool usable = true;
        for (unsigned l = 0; l < lists; l++) {
            unsigned active = active_refs(context, slice, (int)l);
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
            unsigned active = active_refs(context, slice, (int)l);
            memset(entries[l], 0, sizeof entries[l]);
            for (unsigned i = 0; i < active; i++) entries[l][i] = initial[l][i];
            if (!apply_modifications(context, &picture->headers[s], l, s, entries[l], active)) continue;
            check_list(s, l, l == 0 ? slice->RefPicList0 : slice->RefPicList1, entries[l], active);
        }
        if (type == H264_SLICE_P) {
            check_list(s, 1, slice->RefPicList1, NULL, 0);
        } else if (entries[0][0] != NULL && entries[1][0] != NULL
                   && !(entries[0][0]->poc < current && current < entries[1][0]->poc)) {
            fva_violation("slice %u B picture POC, expected between RefPicList0[0]'s %d and RefPicList1[0]'s %d, got %d",
                          s, entries[0][0]->poc, entries[1][0]->poc, current);
        }
    }
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
