// The CABAC state tables and context initialisation (H.264 9.3.1.1, Tables 9-12 to 9-14, 9-44
// and 9-45) for the little syntax I_PCM-only slice data has, shared by its arithmetic encoder
// (slice_data.c) and decoder (slice_decode.c), so the two cannot drift apart.
#ifndef FAKE_VA_CABAC_H
#define FAKE_VA_CABAC_H

#include <stdint.h>

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

// rangeTabLPS by pStateIdx and qCodIRangeIdx; transIdxLPS (transIdxMPS is min(pStateIdx + 1, 62)).
extern const uint8_t cabac_range_lps[64][4];
extern const uint8_t cabac_next_state_lps[64];

struct cabac_contexts {
    uint8_t state[CTX_COUNT];   // pStateIdx
    uint8_t mps[CTX_COUNT];     // valMPS
};

// 9.3.1.1 for a slice of `slice_type` (0…9) with SliceQPY `qp`: ctxIdx 0…10 always, 11…32
// (from cabac_init_idc's table) in P and B slices.
void cabac_init_contexts(struct cabac_contexts *contexts, unsigned slice_type, unsigned cabac_init_idc, int qp);

#endif
