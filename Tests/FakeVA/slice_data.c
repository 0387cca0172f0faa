// Slice data made only of I_PCM macroblocks copied from the input surface, in CAVLC or CABAC
// (H.264 7.3.4, 7.3.5, 9.3). I_PCM decodes losslessly and is legal in I, P and B slices, so a
// real decoder reproduces the input exactly; and since every macroblock of the picture is I_PCM
// (qP 0), the deblocking filter changes nothing whatever offsets the slice header carries.
#include "slice_data.h"

#include "cabac.h"

// ---- the CABAC arithmetic encoder (9.3.4) ----

struct cabac {
    struct bit_writer *out;
    uint32_t low, range;
    unsigned outstanding;
    bool first_bit;
    struct cabac_contexts contexts;
};

static void init_engine(struct cabac *cabac) {
    cabac->low = 0;
    cabac->range = 510;
    cabac->outstanding = 0;
    cabac->first_bit = true;
}

static void put_bit(struct cabac *cabac, unsigned bit) {
    if (cabac->first_bit) {
        cabac->first_bit = false;
    } else {
        bw_bits(cabac->out, bit, 1);
    }
    for (; cabac->outstanding > 0; cabac->outstanding--) bw_bits(cabac->out, 1 - bit, 1);
}

static void renormalize(struct cabac *cabac) {
    while (cabac->range < 256) {
        if (cabac->low < 256) {
            put_bit(cabac, 0);
        } else if (cabac->low >= 512) {
            cabac->low -= 512;
            put_bit(cabac, 1);
        } else {
            cabac->low -= 256;
            cabac->outstanding++;
        }
        cabac->range <<= 1;
        cabac->low <<= 1;
    }
}

static void encode_decision(struct cabac *cabac, unsigned index, unsigned bin) {
    struct cabac_contexts *contexts = &cabac->contexts;
    unsigned state = contexts->state[index];
    uint32_t lps = cabac_range_lps[state][(cabac->range >> 6) & 3];
    cabac->range -= lps;
    if (bin != contexts->mps[index]) {
        cabac->low += cabac->range;
        cabac->range = lps;
        if (state == 0) contexts->mps[index] = (uint8_t)(1 - contexts->mps[index]);
        contexts->state[index] = cabac_next_state_lps[state];
    } else {
        contexts->state[index] = (uint8_t)(state < 62 ? state + 1 : 62);
    }
    renormalize(cabac);
}

// EncodeFlush (9.3.4.5): its last written bit is 1, which ends the slice as rbsp_stop_one_bit.
static void flush(struct cabac *cabac) {
    cabac->range = 2;
    renormalize(cabac);
    put_bit(cabac, (cabac->low >> 9) & 1);
    bw_bits(cabac->out, ((cabac->low >> 7) & 3) | 1, 2);
}

static void encode_terminate(struct cabac *cabac, unsigned bin) {
    cabac->range -= 2;
    if (bin) {
        cabac->low += cabac->range;
        flush(cabac);
    } else {
        renormalize(cabac);
    }
}

// ---- macroblocks ----

static void write_samples(struct bit_writer *out, const struct fva_surface *surface, unsigned mb_x, unsigned mb_y) {
    const uint8_t *luma = surface->data + (size_t)mb_y * 16 * surface->pitch + mb_x * 16;
    for (unsigned row = 0; row < 16; row++) bw_bytes(out, luma + row * surface->pitch, 16);
    const uint8_t *chroma = surface->data + surface->chroma_offset + (size_t)mb_y * 8 * surface->pitch + mb_x * 16;
    uint8_t plane[64];
    for (unsigned component = 0; component < 2; component++) {
        for (unsigned row = 0; row < 8; row++) {
            for (unsigned column = 0; column < 8; column++) {
                plane[row * 8 + column] = chroma[row * surface->pitch + column * 2 + component];
            }
        }
        bw_bytes(out, plane, 64);
    }
}

void fva_write_slice_data(struct bit_writer *out, const struct fva_surface *surface,
                          const struct slice_data_layout *layout) {
    unsigned type = layout->slice_type % 5;
    unsigned first = layout->first_mb, end = layout->first_mb + layout->mb_count;
    if (!layout->cabac) {
        for (unsigned address = first; address < end; address++) {
            if (type == H264_SLICE_P) {
                bw_ue(out, 0);          // mb_skip_run
                bw_ue(out, 5 + 25);     // I_PCM after the five P macroblock types
            } else if (type == H264_SLICE_B) {
                bw_ue(out, 0);
                bw_ue(out, 23 + 25);    // after the 23 B macroblock types
            } else {
                bw_ue(out, 25);
            }
            bw_align_with(out, 0);      // pcm_alignment_zero_bit
            write_samples(out, surface, address % layout->width_mbs, address / layout->width_mbs);
        }
        bw_trailing_bits(out);
        return;
    }

    bw_align_with(out, 1);              // cabac_alignment_one_bit
    struct cabac cabac = {.out = out};
    cabac_init_contexts(&cabac.contexts, layout->slice_type, layout->cabac_init_idc, layout->qp);
    init_engine(&cabac);
    for (unsigned address = first; address < end; address++) {
        unsigned x = address % layout->width_mbs;
        // Neighbours count when they are in this slice; all are I_PCM, never skipped or I_NxN.
        unsigned neighbours = (x > 0 && address - 1 >= first) + (address >= first + layout->width_mbs);
        if (type == H264_SLICE_P) {
            encode_decision(&cabac, CTX_MB_SKIP_P + neighbours, 0);
            encode_decision(&cabac, CTX_MB_TYPE_P_PREFIX, 1);       // intra
            encode_decision(&cabac, CTX_MB_TYPE_P_SUFFIX, 1);       // not I_NxN
        } else if (type == H264_SLICE_B) {
            encode_decision(&cabac, CTX_MB_SKIP_B + neighbours, 0);
            // The intra prefix 111101 (Table 9-37).
            encode_decision(&cabac, CTX_MB_TYPE_B + neighbours, 1);
            encode_decision(&cabac, CTX_MB_TYPE_B + 3, 1);
            encode_decision(&cabac, CTX_MB_TYPE_B + 4, 1);
            encode_decision(&cabac, CTX_MB_TYPE_B + 5, 1);
            encode_decision(&cabac, CTX_MB_TYPE_B + 5, 0);
            encode_decision(&cabac, CTX_MB_TYPE_B + 5, 1);
            encode_decision(&cabac, CTX_MB_TYPE_B + 5, 1);          // suffix: not I_NxN
        } else {
            encode_decision(&cabac, CTX_MB_TYPE_I + neighbours, 1);
        }
        encode_terminate(&cabac, 1);    // I_PCM, and the flush before its samples
        bw_align_with(out, 0);          // pcm_alignment_zero_bit
        write_samples(out, surface, x, address / layout->width_mbs);
        init_engine(&cabac);            // 9.3.1.2: the engine, not the contexts, restarts
        encode_terminate(&cabac, address + 1 == end);       // end_of_slice_flag
    }
    bw_align_with(out, 0);              // after the stop bit the flush wrote
}
