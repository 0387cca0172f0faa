// The coded picture, as Annex B in the coded buffer: SPS and PPS written by the driver at IDR
// pictures that bring no packed sequence header, the client's packed headers in the order they
// came, then each slice: its header (the client's packed one or the driver's) and I_PCM slice
// data, with emulation prevention over the whole NAL unit.
#include "slice_data.h"

#include <stdlib.h>
#include <string.h>

static const uint8_t start_code[4] = {0, 0, 0, 1};

// Appends one NAL unit given as RBSP (header byte first) behind a start code.
static void append_nal(struct bit_writer *out, const uint8_t *start, size_t start_length, const struct bit_writer *rbsp) {
    bw_bytes(out, start, start_length);
    bw_bytes(out, rbsp->data, 1);
    ep_insert(out, rbsp->data + 1, bw_size(rbsp) - 1);
}

// A client's Annex B header: as is when it already carries emulation prevention; otherwise it
// is one NAL unit (as Intel's drivers take it: a start code inside could be payload), whose
// payload after the header byte gets emulation prevention here.
static void append_packed(struct bit_writer *out, const struct fva_packed *packed) {
    size_t prefix = start_code_length(packed->data, packed->size);
    if (packed->emulation_bytes || prefix == 0 || packed->size <= prefix + 1) {
        bw_bytes(out, packed->data, packed->size);
        return;
    }
    bw_bytes(out, packed->data, prefix + 1);
    ep_insert(out, packed->data + prefix + 1, packed->size - prefix - 1);
}

static void append_parameter_sets(struct bit_writer *out, const struct fva_context *context) {
    struct h264_sps sps;
    struct h264_pps pps;
    fva_sps_from_params(context, &sps);
    fva_pps_from_params(context, &pps);
    struct bit_writer rbsp;
    bw_init(&rbsp);
    h264_write_sps(&rbsp, &sps);
    append_nal(out, start_code, 4, &rbsp);
    bw_free(&rbsp);
    bw_init(&rbsp);
    h264_write_pps(&rbsp, &pps);
    append_nal(out, start_code, 4, &rbsp);
    bw_free(&rbsp);
}

// The slice NAL unit as RBSP: the client's header bits (emulation prevention removed) or the
// driver's, then the slice data. Returns the start code length to use.
static size_t slice_rbsp(struct bit_writer *rbsp, const struct fva_context *context, unsigned index,
                         const struct fva_surface *surface) {
    const struct fva_picture *picture = &context->picture;
    const VAEncSliceParameterBufferH264 *slice = &picture->slices[index];
    struct h264_sps sps;
    struct h264_pps pps;
    fva_sps_from_params(context, &sps);
    fva_pps_from_params(context, &pps);
    size_t prefix = 4;
    if (picture->slice_header_count > 0) {
        const struct fva_packed *packed = &picture->slice_headers[index];
        uint8_t *copy = malloc(packed->size ? packed->size : 1);
        if (copy == NULL) fva_out_of_memory();
        memcpy(copy, packed->data, packed->size);
        size_t bits = packed->bit_length;
        if (packed->emulation_bytes) bits -= (packed->size - ep_remove(copy, packed->size)) * 8;
        prefix = start_code_length(copy, bits / 8);
        size_t header_bits = bits - prefix * 8;
        const uint8_t *header = copy + prefix;
        for (size_t i = 0; i < header_bits / 8; i++) bw_bits(rbsp, header[i], 8);
        if (header_bits % 8) bw_bits(rbsp, header[header_bits / 8] >> (8 - header_bits % 8), header_bits % 8);
        free(copy);
    } else {
        h264_write_slice_header(rbsp, &sps, &pps, &picture->headers[index]);
    }
    struct slice_data_layout layout = {
        .cabac = pps.entropy_coding_mode_flag,
        .slice_type = slice->slice_type,
        .first_mb = slice->macroblock_address,
        .mb_count = slice->num_macroblocks,
        .width_mbs = context->sequence.picture_width_in_mbs,
        .cabac_init_idc = slice->cabac_init_idc,
        .qp = picture->params.pic_init_qp + slice->slice_qp_delta,
    };
    fva_write_slice_data(rbsp, surface, &layout);
    return prefix;
}

bool fva_encode_picture(struct fva_driver *driver, struct fva_context *context, struct fva_coded *coded) {
    const struct fva_picture *picture = &context->picture;
    const struct fva_surface *surface = fva_table_get(&driver->surfaces, picture->render_target);
    struct bit_writer out;
    bw_init(&out);
    bool sequence_header = false;
    for (unsigned i = 0; i < picture->packed_count; i++) {
        sequence_header |= picture->packed[i].type == VAEncPackedHeaderSequence;
    }
    if (picture->params.pic_fields.bits.idr_pic_flag && !sequence_header) append_parameter_sets(&out, context);
    for (unsigned i = 0; i < picture->packed_count; i++) append_packed(&out, &picture->packed[i]);
    for (unsigned i = 0; i < picture->slice_count; i++) {
        struct bit_writer rbsp;
        bw_init(&rbsp);
        size_t prefix = slice_rbsp(&rbsp, context, i, surface);
        append_nal(&out, start_code + 4 - prefix, prefix, &rbsp);
        bw_free(&rbsp);
    }
    size_t size = bw_size(&out);
    size_t room = coded->capacity;
    if (fva_knobs.coded_limit != 0 && fva_knobs.coded_limit < room) room = fva_knobs.coded_limit;
    coded->status = 0;
    if (size > room) {
        // What a real encoder does when the picture does not fit: cut off, and say so.
        coded->status = VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK;
        fva_stats.overflows++;
        fva_trace("coded picture of %zu bytes cut to the %zu that fit", size, room);
        size = room;
    }
    memcpy(coded->data, out.data, size);
    coded->used = size;
    bw_free(&out);
    return true;
}
