// Reading slice data made only of I_PCM macroblocks, in CAVLC or CABAC (H.264 7.3.4, 7.3.5,
// 9.3.1.2, 9.3.3.2): the exact inverse of slice_data.c, and nothing more. Each macroblock's
// samples go into the render target (NV12); anything that is not I_PCM — a skipped macroblock,
// any other mb_type — or data that ends early is a violation, because the double cannot decode
// it and must not pretend to.
#include "slice_data.h"

#include "cabac.h"

#include <string.h>

static const char *slice_type_name(unsigned type) {
    switch (type) {
    case H264_SLICE_P: return "a P";
    case H264_SLICE_B: return "a B";
    default: return "an I";
    }
}

// What a CAVLC mb_type other than I_PCM is (Tables 7-11, 7-13, 7-14).
static const char *cavlc_mb_type_name(unsigned slice_type, uint32_t mb_type) {
    uint32_t intra = mb_type;
    if (slice_type == H264_SLICE_P) {
        if (mb_type < 5) return "an inter macroblock type";
        intra -= 5;
    } else if (slice_type == H264_SLICE_B) {
        if (mb_type == 0) return "B_Direct_16x16";
        if (mb_type < 23) return "an inter macroblock type";
        intra -= 23;
    }
    if (intra == 0) return "I_NxN";
    if (intra < 25) return "an I_16x16 type";
    return "no macroblock type at all";
}

// Writes one macroblock's pcm samples (256 luma, 64 Cb, 64 Cr bytes) into the NV12 surface.
static void put_samples(struct fva_surface *surface, unsigned mb_x, unsigned mb_y, const uint8_t samples[384]) {
    uint8_t *luma = surface->data + (size_t)mb_y * 16 * surface->pitch + mb_x * 16;
    for (unsigned row = 0; row < 16; row++) memcpy(luma + (size_t)row * surface->pitch, samples + row * 16, 16);
    uint8_t *chroma = surface->data + surface->chroma_offset + (size_t)mb_y * 8 * surface->pitch + mb_x * 16;
    for (unsigned component = 0; component < 2; component++) {
        const uint8_t *plane = samples + 256 + component * 64;
        for (unsigned row = 0; row < 8; row++) {
            for (unsigned column = 0; column < 8; column++) {
                chroma[(size_t)row * surface->pitch + column * 2 + component] = plane[row * 8 + column];
            }
        }
    }
}

struct reading {
    struct bit_reader *in;
    struct fva_surface *surface;
    const struct slice_data_layout *layout;
    uint8_t *decoded;
    unsigned count;
    unsigned address;       // of the macroblock being read
};

#define MB_FORMAT "macroblock %u (x %u, y %u)"
#define MB_ARGS(r) (r)->address, (r)->address % (r)->layout->width_mbs, (r)->address / (r)->layout->width_mbs

static bool check_address(struct reading *r) {
    if (r->address >= r->layout->mb_count) {
        fva_violation("slice data beyond the picture, expected at most %u macroblocks, got more after macroblock %u",
                      r->layout->mb_count, r->layout->mb_count - 1);
        return false;
    }
    if (r->decoded[r->address]) {
        fva_violation(MB_FORMAT " decoded twice, expected each macroblock once per picture (slices overlap)",
                      MB_ARGS(r));
        return false;
    }
    return true;
}

// pcm_alignment_zero_bits, then the samples, into the surface.
static bool read_pcm(struct reading *r) {
    while (!br_aligned(r->in)) {
        if (br_bits(r->in, 1) != 0) {
            fva_violation(MB_FORMAT " pcm_alignment_zero_bit, expected 0, got 1", MB_ARGS(r));
            return false;
        }
    }
    uint8_t samples[384];
    size_t left = r->in->position < r->in->bits ? (r->in->bits - r->in->position) / 8 : 0;
    br_bytes(r->in, samples, sizeof samples);
    if (r->in->overrun) {
        fva_violation("slice data ends early: " MB_FORMAT " I_PCM samples, expected 384 bytes, got %zu", MB_ARGS(r),
                      left);
        return false;
    }
    put_samples(r->surface, r->address % r->layout->width_mbs, r->address / r->layout->width_mbs, samples);
    r->decoded[r->address] = 1;
    r->count++;
    return true;
}

// ---- CAVLC (7.3.4 with entropy_coding_mode_flag 0) ----

static bool read_cavlc(struct reading *r) {
    unsigned type = r->layout->slice_type % 5;
    uint32_t pcm_type = type == H264_SLICE_P ? 30 : type == H264_SLICE_B ? 48 : 25;
    bool more = true;
    while (more) {
        if (type != H264_SLICE_I) {
            uint32_t skip_run = br_ue(r->in);
            if (r->in->overrun) {
                fva_violation("slice data ends early: " MB_FORMAT " mb_skip_run, expected a ue(v), got the end",
                              MB_ARGS(r));
                return false;
            }
            if (skip_run > 0) {
                fva_violation(MB_FORMAT " in %s slice, expected I_PCM, got %u skipped macroblocks (mb_skip_run)",
                              MB_ARGS(r), slice_type_name(type), skip_run);
                return false;
            }
            if (!br_more_rbsp_data(r->in)) {
                fva_violation("slice data ends early: " MB_FORMAT " mb_type, expected after mb_skip_run 0, got "
                              "the end", MB_ARGS(r));
                return false;
            }
        }
        if (!check_address(r)) return false;
        uint32_t mb_type = br_ue(r->in);
        if (r->in->overrun) {
            fva_violation("slice data ends early: " MB_FORMAT " mb_type, expected a ue(v), got the end", MB_ARGS(r));
            return false;
        }
        if (mb_type != pcm_type) {
            fva_violation(MB_FORMAT " mb_type in %s slice, expected I_PCM (%u), got %u (%s)", MB_ARGS(r),
                          slice_type_name(type), pcm_type, mb_type, cavlc_mb_type_name(type, mb_type));
            return false;
        }
        if (!read_pcm(r)) return false;
        more = br_more_rbsp_data(r->in);
        r->address++;
    }
    return true;
}

// ---- CABAC: the arithmetic decoding engine (9.3.1.2, 9.3.3.2) ----

struct cabac_decoder {
    struct bit_reader *in;
    uint32_t range, offset;
    struct cabac_contexts contexts;
};

static bool init_engine(struct cabac_decoder *d) {
    d->range = 510;
    d->offset = br_bits(d->in, 9);
    return d->offset < 510;     // 510 and 511 are not allowed (9.3.1.2)
}

static void renormalize(struct cabac_decoder *d) {
    while (d->range < 256) {
        d->range <<= 1;
        d->offset = (d->offset << 1) | br_bits(d->in, 1);
    }
}

static unsigned decode_decision(struct cabac_decoder *d, unsigned index) {
    struct cabac_contexts *contexts = &d->contexts;
    unsigned state = contexts->state[index];
    uint32_t lps = cabac_range_lps[state][(d->range >> 6) & 3];
    unsigned bin;
    d->range -= lps;
    if (d->offset >= d->range) {
        bin = 1u - contexts->mps[index];
        d->offset -= d->range;
        d->range = lps;
        if (state == 0) contexts->mps[index] = (uint8_t)(1 - contexts->mps[index]);
        contexts->state[index] = cabac_next_state_lps[state];
    } else {
        bin = contexts->mps[index];
        contexts->state[index] = (uint8_t)(state < 62 ? state + 1 : 62);
    }
    renormalize(d);
    return bin;
}

// DecodeTerminate: 1 ends the arithmetic decoding (before I_PCM samples, or at the end of the
// slice, whose rbsp_stop_one_bit is then the last bit read).
static unsigned decode_terminate(struct cabac_decoder *d) {
    d->range -= 2;
    if (d->offset >= d->range) return 1;
    renormalize(d);
    return 0;
}

// mb_type up to the I_PCM decision; NULL when it is I_PCM, otherwise what it is instead.
static const char *cabac_mb_type(struct cabac_decoder *d, unsigned type, unsigned neighbours) {
    unsigned suffix_context;
    if (type == H264_SLICE_P) {
        if (decode_decision(d, CTX_MB_TYPE_P_PREFIX) == 0) return "an inter macroblock type";
        suffix_context = CTX_MB_TYPE_P_SUFFIX;
    } else if (type == H264_SLICE_B) {
        if (decode_decision(d, CTX_MB_TYPE_B + neighbours) == 0) return "B_Direct_16x16";
        if (decode_decision(d, CTX_MB_TYPE_B + 3) == 0) return "an inter macroblock type";
        unsigned bits = decode_decision(d, CTX_MB_TYPE_B + 4) << 3;
        bits |= decode_decision(d, CTX_MB_TYPE_B + 5) << 2;
        bits |= decode_decision(d, CTX_MB_TYPE_B + 5) << 1;
        bits |= decode_decision(d, CTX_MB_TYPE_B + 5);
        if (bits != 13) return "an inter macroblock type";    // 1101 is the intra prefix (Table 9-37)
        suffix_context = CTX_MB_TYPE_B + 5;
    } else {
        suffix_context = CTX_MB_TYPE_I + neighbours;
    }
    if (decode_decision(d, suffix_context) == 0) return "I_NxN";
    if (decode_terminate(d) == 0) return "an I_16x16 type";
    return NULL;
}

static bool read_cabac(struct reading *r) {
    while (!br_aligned(r->in)) {
        if (br_bits(r->in, 1) != 1) {
            fva_violation("cabac_alignment_one_bit, expected 1, got 0");
            return false;
        }
    }
    const struct slice_data_layout *layout = r->layout;
    unsigned type = layout->slice_type % 5;
    struct cabac_decoder d = {.in = r->in};
    cabac_init_contexts(&d.contexts, layout->slice_type, layout->cabac_init_idc, layout->qp);
    if (!init_engine(&d)) {
        fva_violation("CABAC codIOffset at the start of the slice data, expected below 510, got %u", d.offset);
        return false;
    }
    for (;;) {
        if (!check_address(r)) return false;
        unsigned x = r->address % layout->width_mbs;
        // Neighbours count when they are in this slice; all are I_PCM (or this fails first).
        unsigned neighbours = (x > 0 && r->address - 1 >= layout->first_mb)
            + (r->address >= layout->first_mb + layout->width_mbs);
        if (type != H264_SLICE_I
            && decode_decision(&d, (type == H264_SLICE_P ? CTX_MB_SKIP_P : CTX_MB_SKIP_B) + neighbours) == 1) {
            if (r->in->overrun) {
                fva_violation("slice data ends early: " MB_FORMAT " mb_skip_flag, expected a bin, got the end",
                              MB_ARGS(r));
            } else {
                fva_violation(MB_FORMAT " in %s slice, expected I_PCM, got a skipped macroblock (mb_skip_flag 1)",
                              MB_ARGS(r), slice_type_name(type));
            }
            return false;
        }
        const char *other = cabac_mb_type(&d, type, neighbours);
        if (r->in->overrun) {
            fva_violation("slice data ends early: " MB_FORMAT " mb_type, expected its bins, got the end", MB_ARGS(r));
            return false;
        }
        if (other != NULL) {
            fva_violation(MB_FORMAT " mb_type in %s slice, expected I_PCM, got %s", MB_ARGS(r), slice_type_name(type),
                          other);
            return false;
        }
        if (!read_pcm(r)) return false;
        // 9.3.1.2: after pcm samples the engine, not the contexts, starts again.
        if (!init_engine(&d)) {
            fva_violation(MB_FORMAT " CABAC codIOffset after I_PCM samples, expected below 510, got %u", MB_ARGS(r),
                          d.offset);
            return false;
        }
        unsigned end_of_slice = decode_terminate(&d);
        if (r->in->overrun) {
            fva_violation("slice data ends early: " MB_FORMAT " end_of_slice_flag, expected a bin, got the end",
                          MB_ARGS(r));
            return false;
        }
        r->address++;
        if (end_of_slice) break;
    }
    // The last bit read was the rbsp_stop_one_bit: only alignment zeros (or cabac_zero_words) follow.
    if (!br_rest_is_zero(r->in)) {
        fva_violation("slice data after end_of_slice_flag, expected only zero bits, got more at bit %zu",
                      r->in->position);
        return false;
    }
    return true;
}

bool fva_read_slice_data(struct bit_reader *reader, struct fva_surface *surface, const struct slice_data_layout *layout,
                         uint8_t *decoded, unsigned *count) {
    struct reading r = {.in = reader, .surface = surface, .layout = layout, .decoded = decoded,
                        .address = layout->first_mb};
    bool good = layout->cabac ? read_cabac(&r) : read_cavlc(&r);
    *count = r.count;
    return good;
}
