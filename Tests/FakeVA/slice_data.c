// Slice data made only of I_PCM macroblocks copied from the input surface, in CAVLC or CABAC
// (H.264 7.3.4, 7.3.5, 9.3). I_PCM decodes losslessly and is legal in I, P and B slices, so a
// real decoder reproduces the input exactly; and since every macroblock of the picture is I_PCM
// (qP 0), the deblocking filter changes nothing whatever offsets the slice header carries.
#include "slice_data.h"

// ---- the CABAC arithmetic encoder (9.3.4) ----

// rangeTabLPS (Table 9-44), by pStateIdx and qCodIRangeIdx.
static const uint8_t range_lps[64][4] = {
    {128, 176, 208, 240}, {128, 167, 197, 227}, {128, 158, 187, 216}, {123, 150, 178, 205},
    {116, 142, 169, 195}, {111, 135, 160, 185}, {105, 128, 152, 175}, {100, 122, 144, 166},
    {95, 116, 137, 158}, {90, 110, 130, 150}, {85, 104, 123, 142}, {81, 99, 117, 135},
    {77, 94, 111, 128}, {73, 89, 105, 122}, {69, 85, 100, 116}, {66, 80, 95, 110},
    {62, 76, 90, 104}, {59, 72, 86, 99}, {56, 69, 81, 94}, {53, 65, 77, 89},
    {51, 62, 73, 85}, {48, 59, 69, 80}, {46, 56, 66, 76}, {43, 53, 63, 72},
    {41, 50, 59, 69}, {39, 48, 56, 65}, {37, 45, 54, 62}, {35, 43, 51, 59},
    {33, 41, 48, 56}, {32, 39, 46, 53}, {30, 37, 43, 50}, {29, 35, 41, 48},
    {27, 33, 39, 45}, {26, 31, 37, 43}, {24, 30, 35, 41}, {23, 28, 33, 39},
    {22, 27, 32, 37}, {21, 26, 30, 35}, {20, 24, 29, 33}, {19, 23, 27, 31},
    {18, 22, 26, 30}, {17, 21, 25, 28}, {16, 20, 23, 27}, {15, 19, 22, 25},
    {14, 18, 21, 24}, {14, 17, 20, 23}, {13, 16, 19, 22}, {12, 15, 18, 21},
    {12, 14, 17, 20}, {11, 14, 16, 19}, {11, 13, 15, 18}, {10, 12, 15, 17},
    {10, 12, 14, 16}, {9, 11, 13, 15}, {9, 11, 12, 14}, {8, 10, 12, 14},
    {8, 9, 11, 13}, {7, 9, 11, 12}, {7, 9, 10, 12}, {7, 8, 10, 11},
    {6, 8, 9, 11}, {6, 7, 9, 10}, {6, 7, 8, 9}, {2, 2, 2, 2},
};

// transIdxLPS (Table 9-45); transIdxMPS is min(pStateIdx + 1, 62).
static const uint8_t next_state_lps[64] = {
    0, 0, 1, 2, 2, 4, 4, 5, 6, 7, 8, 9, 9, 11, 11, 12,
    13, 13, 15, 15, 16, 16, 18, 18, 19, 19, 21, 21, 22, 22, 23, 24,
    24, 25, 26, 26, 27, 27, 28, 29, 29, 30, 30, 30, 31, 32, 32, 33,
    33, 33, 34, 34, 35, 35, 35, 36, 36, 36, 37, 37, 37, 38, 38, 63,
};

// Context indices the I_PCM-only syntax uses.
enum {
    CTX_MB_TYPE_I = 3,          // 3…5: mb_type in I slices, by neighbours
    CTX_MB_SKIP_P = 11,         // 11…13
    CTX_MB_TYPE_P_PREFIX = 14,
    CTX_MB_TYPE_P_SUFFIX = 17,
    CTX_MB_SKIP_B = 24,         // 24…26
    CTX_MB_TYPE_B = 27,         // 27…35 prefix, 32… suffix
    CTX_COUNT = 33,
};

// (m, n) for ctxIdx 0…10, the same in every slice type (Table 9-12).
static const int8_t init_intra[11][2] = {
    {20, -15}, {2, 54}, {3, 74}, {20, -15}, {2, 54}, {3, 74},
    {-28, 127}, {-23, 104}, {-6, 53}, {-1, 54}, {7, 51},
};

// (m, n) for ctxIdx 11…32 in P and B slices, by cabac_init_idc (Tables 9-13 and 9-14).
static const int8_t init_inter[3][22][2] = {
    {
        {23, 33}, {23, 2}, {21, 0}, {1, 9}, {0, 49}, {-37, 118}, {5, 57}, {-13, 78},
        {-11, 65}, {1, 62}, {12, 49}, {-4, 73}, {17, 50},
        {18, 64}, {9, 43}, {29, 0}, {26, 67}, {16, 90}, {9, 104}, {-46, 127}, {-20, 104}, {1, 67},
    },
    {
        {22, 25}, {34, 0}, {16, 0}, {-2, 9}, {4, 41}, {-29, 118}, {2, 65}, {-6, 71},
        {-13, 79}, {5, 52}, {9, 50}, {-3, 70}, {10, 54},
        {26, 34}, {19, 22}, {40, 0}, {57, 2}, {41, 36}, {26, 69}, {-45, 127}, {-15, 101}, {-4, 76},
    },
    {
        {29, 16}, {25, 0}, {14, 0}, {-10, 51}, {-3, 62}, {-27, 99}, {26, 16}, {-4, 85},
        {-24, 102}, {5, 57}, {6, 57}, {-17, 73}, {14, 57},
        {20, 40}, {20, 10}, {29, 0}, {54, 0}, {37, 42}, {12, 97}, {-32, 127}, {-22, 117}, {-2, 74},
    },
};

struct cabac {
    struct bit_writer *out;
    uint32_t low, range;
    unsigned outstanding;
    bool first_bit;
    uint8_t state[CTX_COUNT];
    uint8_t mps[CTX_COUNT];
};

static int clip(int low, int high, int value) {
    return value < low ? low : value > high ? high : value;
}

// (m × qp) >> 4 as the standard means it: an arithmetic shift, also of negative products.
static int shift4(int value) {
    return value >= 0 ? value >> 4 : -((-value + 15) >> 4);
}

static void init_context(struct cabac *cabac, unsigned index, int m, int n, int qp) {
    int state = clip(1, 126, shift4(m * clip(0, 51, qp)) + n);
    if (state <= 63) {
        cabac->state[index] = (uint8_t)(63 - state);
        cabac->mps[index] = 0;
    } else {
        cabac->state[index] = (uint8_t)(state - 64);
        cabac->mps[index] = 1;
    }
}

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
    unsigned state = cabac->state[index];
    uint32_t lps = range_lps[state][(cabac->range >> 6) & 3];
    cabac->range -= lps;
    if (bin != cabac->mps[index]) {
        cabac->low += cabac->range;
        cabac->range = lps;
        if (state == 0) cabac->mps[index] = (uint8_t)(1 - cabac->mps[index]);
        cabac->state[index] = next_state_lps[state];
    } else {
        cabac->state[index] = (uint8_t)(state < 62 ? state + 1 : 62);
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
    for (unsigned i = 0; i < 11; i++) init_context(&cabac, i, init_intra[i][0], init_intra[i][1], layout->qp);
    if (type != H264_SLICE_I) {
        for (unsigned i = 11; i < CTX_COUNT; i++) {
            const int8_t *mn = init_inter[layout->cabac_init_idc][i - 11];
            init_context(&cabac, i, mn[0], mn[1], layout->qp);
        }
    }
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
