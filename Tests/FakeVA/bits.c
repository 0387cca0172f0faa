// Bit writer and reader for RBSP, Exp-Golomb codes, emulation prevention (H.264 7.2, 7.4.1, 9.1).
#define _GNU_SOURCE
#include "bits.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void grow(struct bit_writer *writer, size_t more_bits) {
    size_t needed = (writer->bits + more_bits + 7) / 8 + 1;
    if (needed <= writer->capacity) return;
    size_t capacity = writer->capacity ? writer->capacity : 256;
    while (capacity < needed) capacity *= 2;
    uint8_t *data = realloc(writer->data, capacity);
    if (data == NULL) {
        dprintf(2, "fake-va: out of memory\n");
        abort();
    }
    memset(data + writer->capacity, 0, capacity - writer->capacity);
    writer->data = data;
    writer->capacity = capacity;
}

void bw_init(struct bit_writer *writer) {
    *writer = (struct bit_writer){0};
    grow(writer, 8);
}

void bw_free(struct bit_writer *writer) {
    free(writer->data);
    *writer = (struct bit_writer){0};
}

void bw_bits(struct bit_writer *writer, uint32_t value, unsigned count) {
    grow(writer, count);
    for (unsigned i = count; i > 0; i--) {
        unsigned bit = (value >> (i - 1)) & 1;
        size_t byte = writer->bits / 8;
        unsigned shift = 7 - (unsigned)(writer->bits % 8);
        writer->data[byte] = (uint8_t)((writer->data[byte] & ~(1u << shift)) | (bit << shift));
        writer->bits++;
    }
}

void bw_ue(struct bit_writer *writer, uint32_t value) {
    uint64_t code = (uint64_t)value + 1;
    unsigned length = 0;
    while ((code >> length) > 1) length++;
    bw_bits(writer, 0, length);
    // length + 1 bits of code: the leading 1 and `length` information bits.
    if (length + 1 > 32) {
        bw_bits(writer, (uint32_t)(code >> 32), length + 1 - 32);
        bw_bits(writer, (uint32_t)code, 32);
    } else {
        bw_bits(writer, (uint32_t)code, length + 1);
    }
}

void bw_se(struct bit_writer *writer, int32_t value) {
    uint32_t mapped = value > 0 ? 2 * (uint32_t)value - 1 : 2 * (uint32_t)(-(int64_t)value);
    bw_ue(writer, mapped);
}

void bw_bytes(struct bit_writer *writer, const uint8_t *bytes, size_t count) {
    if (!bw_aligned(writer)) {
        for (size_t i = 0; i < count; i++) bw_bits(writer, bytes[i], 8);
        return;
    }
    grow(writer, count * 8);
    memcpy(writer->data + writer->bits / 8, bytes, count);
    writer->bits += count * 8;
}

bool bw_aligned(const struct bit_writer *writer) {
    return writer->bits % 8 == 0;
}

void bw_align_with(struct bit_writer *writer, unsigned bit) {
    while (!bw_aligned(writer)) bw_bits(writer, bit, 1);
}

void bw_trailing_bits(struct bit_writer *writer) {
    bw_bits(writer, 1, 1);
    bw_align_with(writer, 0);
}

size_t bw_size(const struct bit_writer *writer) {
    return (writer->bits + 7) / 8;
}

void br_init(struct bit_reader *reader, const uint8_t *data, size_t bits) {
    *reader = (struct bit_reader){.data = data, .bits = bits};
}

uint32_t br_bits(struct bit_reader *reader, unsigned count) {
    uint32_t value = 0;
    for (unsigned i = 0; i < count; i++) {
        unsigned bit = 0;
        if (reader->position < reader->bits) {
            bit = (reader->data[reader->position / 8] >> (7 - reader->position % 8)) & 1;
        } else {
            reader->overrun = true;
        }
        reader->position++;
        value = (value << 1) | bit;
    }
    return value;
}

uint32_t br_ue(struct bit_reader *reader) {
    unsigned zeros = 0;
    while (br_bits(reader, 1) == 0) {
        if (reader->overrun || ++zeros > 31) {
            reader->overrun = true;
            return 0;
        }
    }
    if (zeros == 0) return 0;
    return (uint32_t)((1ull << zeros) - 1 + br_bits(reader, zeros));
}

int32_t br_se(struct bit_reader *reader) {
    uint32_t code = br_ue(reader);
    return (code & 1) ? (int32_t)((code + 1) / 2) : -(int32_t)(code / 2);
}

// True when anything but the rbsp_stop_one_bit and its alignment zeros is left (7.2).
bool br_more_rbsp_data(const struct bit_reader *reader) {
    if (reader->position >= reader->bits) return false;
    size_t last_one = reader->bits;
    while (last_one > reader->position) {
        size_t p = last_one - 1;
        if ((reader->data[p / 8] >> (7 - p % 8)) & 1) break;
        last_one--;
    }
    // last_one - 1 is the stop bit; more data when it lies beyond the current position.
    return last_one > reader->position + 1;
}

bool br_aligned(const struct bit_reader *reader) {
    return reader->position % 8 == 0;
}

void br_bytes(struct bit_reader *reader, uint8_t *bytes, size_t count) {
    size_t available = reader->position < reader->bits ? (reader->bits - reader->position) / 8 : 0;
    size_t copied = count < available ? count : available;
    if (copied > 0) memcpy(bytes, reader->data + reader->position / 8, copied);
    memset(bytes + copied, 0, count - copied);
    if (copied < count) reader->overrun = true;
    reader->position += count * 8;
}

bool br_rest_is_zero(const struct bit_reader *reader) {
    for (size_t p = reader->position; p < reader->bits; p++) {
        if (p % 8 == 0 && p + 8 <= reader->bits) {
            if (reader->data[p / 8] != 0) return false;
            p += 7;
        } else if ((reader->data[p / 8] >> (7 - p % 8)) & 1) {
            return false;
        }
    }
    return true;
}

void ep_insert(struct bit_writer *out, const uint8_t *rbsp, size_t size) {
    unsigned zeros = 0;
    for (size_t i = 0; i < size; i++) {
        if (zeros >= 2 && rbsp[i] <= 3) {
            uint8_t three = 3;
            bw_bytes(out, &three, 1);
            zeros = 0;
        }
        bw_bytes(out, &rbsp[i], 1);
        zeros = rbsp[i] == 0 ? zeros + 1 : 0;
    }
    // A payload ending in zero bytes (cabac_zero_words) gets 03 after its final 00 00.
    if (zeros >= 2) {
        uint8_t three = 3;
        bw_bytes(out, &three, 1);
    }
}

size_t ep_remove(uint8_t *data, size_t size) {
    size_t out = 0;
    unsigned zeros = 0;
    for (size_t i = 0; i < size; i++) {
        if (zeros >= 2 && data[i] == 3 && (i + 1 == size || data[i + 1] <= 3)) {
            zeros = 0;
            continue;
        }
        zeros = data[i] == 0 ? zeros + 1 : 0;
        data[out++] = data[i];
    }
    return out;
}

size_t start_code_length(const uint8_t *data, size_t size) {
    if (size >= 3 && data[0] == 0 && data[1] == 0 && data[2] == 1) return 3;
    if (size >= 4 && data[0] == 0 && data[1] == 0 && data[2] == 0 && data[3] == 1) return 4;
    return 0;
}
