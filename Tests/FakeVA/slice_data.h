// Slice data of I_PCM macroblocks: written (slice_data.c) and read back (slice_decode.c).
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

// Reads slice_data() from `reader`, placed at its first bit (after the slice header), writing
// each I_PCM macroblock's samples into `surface`. Here layout->mb_count is the picture's
// macroblock count, which the slice must not go beyond; `decoded` has a byte per macroblock of
// the picture, set as each is written. *count is the number written. False after a violation:
// a macroblock that is not I_PCM, slice data that ends early, a macroblock written twice.
bool fva_read_slice_data(struct bit_reader *reader, struct fva_surface *surface, const struct slice_data_layout *layout,
                         uint8_t *decoded, unsigned *count);

#endif
