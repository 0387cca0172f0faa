// Slice data of I_PCM macroblocks (slice_data.c).
#ifndef FAKE_VA_SLICE_DATA_H
#define FAKE_VA_SLICE_DATA_H

#include "fake_va.h"

struct slice_data_layout {
    bool cabac;
    unsigned slice_type;        // as in the slice header (0…9)
    unsigned first_mb, mb_count, width_mbs;
    unsigned cabac_init_idc;
    int qp;                     // SliceQPY
};

// Appends slice_data() and the slice's trailing bits to `out`, which holds the NAL header and
// slice header.
void fva_write_slice_data(struct bit_writer *out, const struct fva_surface *surface,
                          const struct slice_data_layout *layout);

#endif
