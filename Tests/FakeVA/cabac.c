// CABAC tables and context initialisation shared by the I_PCM slice data encoder and decoder
// (see cabac.h).
#include "cabac.h"

#include "h264_syntax.h"

const uint8_t cabac_range_lps[64][4] = {
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

const uint8_t cabac_next_state_lps[64] = {
    0, 0, 1, 2, 2, 4, 4, 5, 6, 7, 8, 9, 9, 11, 11, 12,
    13, 13, 15, 15, 16, 16, 18, 18, 19, 19, 21, 21, 22, 22, 23, 24,
    24, 25, 26, 26, 27, 27, 28, 29, 29, 30, 30, 30, 31, 32, 32, 33,
    33, 33, 34, 34, 35, 35, 35, 36, 36, 36, 37, 37, 37, 38, 38, 63,
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

static int clip(int low, int high, int value) {
    return value < low ? low : value > high ? high : value;
}

// (m × qp) >> 4 as the standard means it: an arithmetic shift, also of negative products.
static int shift4(int value) {
    return value >= 0 ? value >> 4 : -((-value + 15) >> 4);
}

static void init_context(struct cabac_contexts *contexts, unsigned index, int m, int n, int qp) {
    int state = clip(1, 126, shift4(m * clip(0, 51, qp)) + n);
    if (state <= 63) {
        contexts->state[index] = (uint8_t)(63 - state);
        contexts->mps[index] = 0;
    } else {
        contexts->state[index] = (uint8_t)(state - 64);
        contexts->mps[index] = 1;
    }
}

void cabac_init_contexts(struct cabac_contexts *contexts, unsigned slice_type, unsigned cabac_init_idc, int qp) {
    *contexts = (struct cabac_contexts){0};
    for (unsigned i = 0; i < 11; i++) init_context(contexts, i, init_intra[i][0], init_intra[i][1], qp);
    if (slice_type % 5 == H264_SLICE_I || cabac_init_idc > 2) return;
    for (unsigned i = 11; i < CTX_COUNT; i++) {
        const int8_t *mn = init_inter[cabac_init_idc][i - 11];
        init_context(contexts, i, mn[0], mn[1], qp);
    }
}
