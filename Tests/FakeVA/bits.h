// Bit-level reading and writing of H.264 RBSP, and the emulation prevention that turns RBSP
// into NAL unit payload and back.
#ifndef FAKE_VA_BITS_H
#define FAKE_VA_BITS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

// A growing buffer written MSB first. Out of memory aborts the process (it is a test double).
struct bit_writer {
    uint8_t *data;
    size_t capacity;
    size_t bits;                    // bits written so far
};

void bw_init(struct bit_writer *writer);
void bw_free(struct bit_writer *writer);
void bw_bits(struct bit_writer *writer, uint32_t value, unsigned count);    // count ≤ 32
void bw_ue(struct bit_writer *writer, uint32_t value);
void bw_se(struct bit_writer *writer, int32_t value);
void bw_bytes(struct bit_writer *writer, const uint8_t *bytes, size_t count);  // byte-aligned
bool bw_aligned(const struct bit_writer *writer);
void bw_align_with(struct bit_writer *writer, unsigned bit);
void bw_trailing_bits(struct bit_writer *writer);   // rbsp_trailing_bits()
size_t bw_size(const struct bit_writer *writer);     // whole bytes, the last one padded with 0

// Reads a bounded RBSP; reading past `bits` sets `overrun` and yields zeros.
struct bit_reader {
    const uint8_t *data;
    size_t bits;
    size_t position;
    bool overrun;
};

void br_init(struct bit_reader *reader, const uint8_t *data, size_t bits);
uint32_t br_bits(struct bit_reader *reader, unsigned count);                 // count ≤ 32
uint32_t br_ue(struct bit_reader *reader);
int32_t br_se(struct bit_reader *reader);
bool br_more_rbsp_data(const struct bit_reader *reader);
bool br_aligned(const struct bit_reader *reader);
// `count` whole bytes from a byte-aligned reader; past the end: zeros and `overrun`.
void br_bytes(struct bit_reader *reader, uint8_t *bytes, size_t count);
// True when every bit from the position to the end is 0.
bool br_rest_is_zero(const struct bit_reader *reader);

// NAL payload (after the header byte) with emulation prevention bytes inserted.
void ep_insert(struct bit_writer *out, const uint8_t *rbsp, size_t size);
// Removes emulation prevention bytes in place; returns the new size.
size_t ep_remove(uint8_t *data, size_t size);

// The length of the Annex B start code (00 00 01 or 00 00 00 01) at `data`, or 0.
size_t start_code_length(const uint8_t *data, size_t size);

#endif
