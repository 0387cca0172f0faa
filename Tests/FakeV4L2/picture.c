// The pictures the fake camera delivers: a background that pans a few pixels every frame (or
// stands still), with what scene.c adds in front of it, and the vtrecord frame code
// (Sources/VTCapture/FrameCode.swift) over its top rows, painted as I420 and then packed into
// the negotiated format or compressed to JPEG with libturbojpeg.
//
// The frame code must stay byte-for-byte the layout FrameCode.swift reads: 40 blocks in reading
// order from the top-left corner, 16×16 from 320 pixels wide (8×8 below), wrapping onto further
// block rows when the width needs it; slots 0–1 white black, 2–33 the Gray-coded number most
// significant bit first, 34–37 the XOR of its eight nibbles, 38–39 black white; luma 235 for
// white and 16 for black, neutral chroma (128) under every block.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>

enum { PERIOD = 256, CHROMA_PERIOD = PERIOD / 2, SLOTS = 40 };

static uint8_t luma_tile[PERIOD * PERIOD];
static uint8_t u_tile[CHROMA_PERIOD * CHROMA_PERIOD];
static uint8_t v_tile[CHROMA_PERIOD * CHROMA_PERIOD];
static bool tiles_ready;

// Everything one picture size needs, kept while the size stays the same.
struct canvas {
    uint32_t width, height;
    uint8_t *y, *u, *v;                 // the I420 picture
    uint8_t *strip_y, *strip_u, *strip_v;
    size_t strip_y_width, strip_c_width;
    uint8_t *u422, *v422;               // chroma with every row doubled, for 4:2:2 JPEG
    tjhandle compressor;
    unsigned char *jpeg;
    unsigned long jpeg_capacity;
};

static struct canvas canvas;

uint32_t fv_bytesperline(uint32_t fourcc, uint32_t width) {
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: return width * 2;
    case V4L2_PIX_FMT_MJPEG: case V4L2_PIX_FMT_H264: return 0;
    default: return width;
    }
}

uint32_t fv_sizeimage(uint32_t fourcc, uint32_t width, uint32_t height) {
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: return width * height * 2;
    // What UVC cameras announce as their largest compressed frame.
    case V4L2_PIX_FMT_MJPEG: return width * height * 2;
    // An access unit of the test pattern is far smaller; an IDR of noise still fits.
    case V4L2_PIX_FMT_H264: return width * height * 3 / 2 + 65536;
    default: return width * height * 3 / 2;
    }
}

const char *fv_format_description(uint32_t fourcc) {
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: return "YUYV 4:2:2";
    case V4L2_PIX_FMT_MJPEG: return "Motion-JPEG";
    case V4L2_PIX_FMT_H264: return "H.264";
    case V4L2_PIX_FMT_NV12: return "Y/UV 4:2:0";
    case V4L2_PIX_FMT_YUV420: return "Planar YUV 4:2:0";
    default: return "Unknown";
    }
}

static uint8_t triangle(unsigned t, unsigned period) {
    t %= period;
    return (uint8_t)(t < period / 2 ? t : period - t);
}

// One period of background: a diagonal ramp under a checkerboard, and slow colour ramps.
static void make_tiles(void) {
    for (unsigned y = 0; y < PERIOD; y++) {
        for (unsigned x = 0; x < PERIOD; x++) {
            int value = 60 + (int)((x + y) % PERIOD) / 2 + (((x / 32 + y / 32) % 2) ? 24 : -24);
            luma_tile[y * PERIOD + x] = (uint8_t)(value < 16 ? 16 : value > 235 ? 235 : value);
        }
    }
    for (unsigned y = 0; y < CHROMA_PERIOD; y++) {
        for (unsigned x = 0; x < CHROMA_PERIOD; x++) {
            u_tile[y * CHROMA_PERIOD + x] = (uint8_t)(96 + triangle(x, CHROMA_PERIOD));
            v_tile[y * CHROMA_PERIOD + x] = (uint8_t)(96 + triangle(x + 2 * y, CHROMA_PERIOD));
        }
    }
    tiles_ready = true;
}

static void release_canvas(void) {
    free(canvas.y);
    free(canvas.u);
    free(canvas.v);
    free(canvas.strip_y);
    free(canvas.strip_u);
    free(canvas.strip_v);
    free(canvas.u422);
    free(canvas.v422);
    if (canvas.compressor != NULL && tjDestroy(canvas.compressor) != 0) {
        fv_trace("tjDestroy: %s", tjGetErrorStr2(NULL));
    }
    tjFree(canvas.jpeg);
    memset(&canvas, 0, sizeof canvas);
}

// A strip holds every row of the tile repeated to the picture's width plus one period, so any
// pan offset is a plain copy from it.
static uint8_t *make_strip(const uint8_t *tile, unsigned period, size_t width) {
    uint8_t *strip = malloc(period * width);
    if (strip == NULL) return NULL;
    for (unsigned row = 0; row < period; row++) {
        for (size_t x = 0; x < width; x++) strip[row * width + x] = tile[row * period + x % period];
    }
    return strip;
}

static bool prepare_canvas(uint32_t width, uint32_t height) {
    if (canvas.y != NULL && canvas.width == width && canvas.height == height) return true;
    release_canvas();
    if (!tiles_ready) make_tiles();
    size_t luma = (size_t)width * height, chroma = luma / 4;
    canvas.width = width;
    canvas.height = height;
    canvas.y = malloc(luma);
    canvas.u = malloc(chroma);
    canvas.v = malloc(chroma);
    canvas.u422 = malloc(chroma * 2);
    canvas.v422 = malloc(chroma * 2);
    canvas.strip_y_width = width + PERIOD;
    canvas.strip_c_width = width / 2 + CHROMA_PERIOD;
    canvas.strip_y = make_strip(luma_tile, PERIOD, canvas.strip_y_width);
    canvas.strip_u = make_strip(u_tile, CHROMA_PERIOD, canvas.strip_c_width);
    canvas.strip_v = make_strip(v_tile, CHROMA_PERIOD, canvas.strip_c_width);
    if (canvas.y == NULL || canvas.u == NULL || canvas.v == NULL || canvas.u422 == NULL
        || canvas.v422 == NULL || canvas.strip_y == NULL || canvas.strip_u == NULL || canvas.strip_v == NULL) {
        fv_trace("out of memory for %ux%u pictures", width, height);
        release_canvas();
        return false;
    }
    return true;
}

static void draw_code(uint32_t width, uint32_t number) {
    unsigned block = width >= 320 ? 16 : 8;
    unsigned per_row = width / block;
    bool white[SLOTS];
    unsigned k = 0;
    uint32_t gray = number ^ (number >> 1);
    uint32_t check = 0;
    for (unsigned i = 0; i < 8; i++) check ^= (gray >> (4 * i)) & 0xF;
    white[k++] = true;
    white[k++] = false;
    for (int bit = 31; bit >= 0; bit--) white[k++] = (gray >> bit) & 1;
    for (int bit = 3; bit >= 0; bit--) white[k++] = (check >> bit) & 1;
    white[k++] = false;
    white[k++] = true;
    for (unsigned slot = 0; slot < SLOTS; slot++) {
        unsigned x = (slot % per_row) * block, y = (slot / per_row) * block;
        for (unsigned row = y; row < y + block; row++) {
            memset(canvas.y + (size_t)row * width + x, white[slot] ? 235 : 16, block);
        }
        for (unsigned row = y / 2; row < (y + block) / 2; row++) {
            memset(canvas.u + (size_t)row * (width / 2) + x / 2, 128, block / 2);
            memset(canvas.v + (size_t)row * (width / 2) + x / 2, 128, block / 2);
        }
    }
}

// Noise over the whole luma plane, a fresh pseudo-random pattern for every sequence number
// (xorshift64*, one draw per eight pixels).
static void add_noise(uint32_t sequence, uint32_t amplitude) {
    size_t luma = (size_t)canvas.width * canvas.height;
    uint64_t state = 0x9E3779B97F4A7C15ull ^ ((uint64_t)sequence * 0xD1B54A32D192ED03ull);
    if (state == 0) state = 1;
    unsigned span = 2 * amplitude + 1;
    for (size_t i = 0; i < luma; i += 8) {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        uint64_t bits = state * 0x2545F4914F6CDD1Dull;
        for (size_t k = 0; k < 8 && i + k < luma; k++, bits >>= 8) {
            int value = canvas.y[i + k] + (int)((bits & 0xFF) % span) - (int)amplitude;
            canvas.y[i + k] = (uint8_t)(value < 16 ? 16 : value > 235 ? 235 : value);
        }
    }
}

static void paint_i420(uint32_t sequence) {
    uint32_t width = canvas.width, height = canvas.height;
    // A still scene keeps the background where frame 0 has it.
    uint32_t panned = fv.config.still ? 0 : sequence;
    size_t pan_x = (size_t)(panned * 4u) % PERIOD, pan_y = (size_t)(panned * 2u) % PERIOD;
    for (uint32_t row = 0; row < height; row++) {
        memcpy(canvas.y + (size_t)row * width,
               canvas.strip_y + ((row + pan_y) % PERIOD) * canvas.strip_y_width + pan_x, width);
    }
    for (uint32_t row = 0; row < height / 2; row++) {
        size_t from = ((row + pan_y / 2) % CHROMA_PERIOD) * canvas.strip_c_width + pan_x / 2;
        memcpy(canvas.u + (size_t)row * (width / 2), canvas.strip_u + from, width / 2);
        memcpy(canvas.v + (size_t)row * (width / 2), canvas.strip_v + from, width / 2);
    }
    fv_draw_mover(canvas.y, canvas.u, canvas.v, width, height, sequence);
    fv_draw_blink(canvas.y, width, height, sequence);
    fv_apply_light(canvas.y, width, height, sequence);
    if (fv.config.noise > 0) add_noise(sequence, fv.config.noise);
    draw_code(width, sequence);
}

static size_t pack_yuyv(uint8_t *out) {
    uint32_t width = canvas.width, height = canvas.height;
    for (uint32_t row = 0; row < height; row++) {
        const uint8_t *y = canvas.y + (size_t)row * width;
        const uint8_t *u = canvas.u + (size_t)(row / 2) * (width / 2);
        const uint8_t *v = canvas.v + (size_t)(row / 2) * (width / 2);
        uint8_t *o = out + (size_t)row * width * 2;
        for (uint32_t i = 0; i < width / 2; i++) {
            o[4 * i] = y[2 * i];
            o[4 * i + 1] = u[i];
            o[4 * i + 2] = y[2 * i + 1];
            o[4 * i + 3] = v[i];
        }
    }
    return (size_t)width * height * 2;
}

static size_t pack_planar(uint8_t *out, bool interleaved) {
    size_t luma = (size_t)canvas.width * canvas.height, chroma = luma / 4;
    memcpy(out, canvas.y, luma);
    if (interleaved) {
        uint8_t *uv = out + luma;
        for (size_t i = 0; i < chroma; i++) {
            uv[2 * i] = canvas.u[i];
            uv[2 * i + 1] = canvas.v[i];
        }
    } else {
        memcpy(out + luma, canvas.u, chroma);
        memcpy(out + luma + chroma, canvas.v, chroma);
    }
    return luma + 2 * chroma;
}

static size_t compress_jpeg(uint8_t *out, size_t capacity) {
    uint32_t width = canvas.width, height = canvas.height;
    int subsampling = fv.config.jpeg_subsampling;
    if (canvas.compressor == NULL) {
        canvas.compressor = tjInitCompress();
        if (canvas.compressor == NULL) {
            fv_trace("tjInitCompress: %s", tjGetErrorStr2(NULL));
            return 0;
        }
        canvas.jpeg_capacity = tjBufSize((int)width, (int)height, subsampling);
        canvas.jpeg = canvas.jpeg_capacity == (unsigned long)-1 ? NULL : tjAlloc((int)canvas.jpeg_capacity);
        if (canvas.jpeg == NULL) {
            fv_trace("tjAlloc(%lu) failed", canvas.jpeg_capacity);
            return 0;
        }
    }
    const unsigned char *planes[3] = {canvas.y, canvas.u, canvas.v};
    if (subsampling == TJSAMP_422) {
        size_t half = width / 2;
        for (uint32_t row = 0; row < height; row++) {
            memcpy(canvas.u422 + row * half, canvas.u + (row / 2) * half, half);
            memcpy(canvas.v422 + row * half, canvas.v + (row / 2) * half, half);
        }
        planes[1] = canvas.u422;
        planes[2] = canvas.v422;
    }
    unsigned long size = canvas.jpeg_capacity;
    if (tjCompressFromYUVPlanes(canvas.compressor, planes, (int)width, NULL, (int)height, subsampling,
                                &canvas.jpeg, &size, fv.config.jpeg_quality, TJFLAG_NOREALLOC) != 0) {
        fv_trace("tjCompressFromYUVPlanes: %s", tjGetErrorStr2(canvas.compressor));
        return 0;
    }
    if (size > capacity) {
        fv_trace("JPEG of %lu bytes does not fit a %zu-byte buffer", size, capacity);
        return 0;
    }
    memcpy(out, canvas.jpeg, size);
    return size;
}

// FAKE_V4L2_PICTURE_RING=N: a camera whose pictures cost the process nothing, as a real one
// makes them in its own hardware. N pictures are painted (and packed or compressed) as usual,
// with frame codes 0…N-1, at STREAMON (fv_prepare_ring) and kept; frame n is a copy of
// picture n mod N, so the frame code counts 0…N-1 over and over.
static struct {
    uint32_t fourcc, width, height, count;
    uint8_t **pictures;
    size_t *sizes;
} ring;

static void release_ring(void) {
    for (uint32_t i = 0; i < ring.count; i++) free(ring.pictures[i]);
    free(ring.pictures);
    free(ring.sizes);
    memset(&ring, 0, sizeof ring);
}

static size_t paint(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t sequence, bool flash,
                    uint8_t *destination, size_t capacity);

size_t fv_paint(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t sequence, bool flash,
                uint8_t *destination, size_t capacity) {
    uint32_t count = fv.config.picture_ring;
    // A flash is painted afresh: the ring keeps the pictures without. H.264 is always encoded
    // afresh: a copied access unit would not continue the stream the decoder holds.
    if (count == 0 || flash || fourcc == V4L2_PIX_FMT_H264) return paint(fourcc, width, height, sequence, flash, destination, capacity);
    if (ring.pictures == NULL || ring.fourcc != fourcc || ring.width != width || ring.height != height) {
        release_ring();
        ring.pictures = calloc(count, sizeof ring.pictures[0]);
        ring.sizes = calloc(count, sizeof ring.sizes[0]);
        if (ring.pictures == NULL || ring.sizes == NULL) {
            fv_trace("out of memory for a ring of %u pictures", count);
            release_ring();
            return 0;
        }
        ring.fourcc = fourcc;
        ring.width = width;
        ring.height = height;
        ring.count = count;
    }
    uint32_t slot = sequence % count;
    if (ring.pictures[slot] == NULL) {
        size_t used = paint(fourcc, width, height, slot, false, destination, capacity);
        if (used == 0) return 0;
        ring.pictures[slot] = malloc(used);
        if (ring.pictures[slot] == NULL) {
            fv_trace("out of memory for picture %u of the ring", slot);
            return 0;
        }
        memcpy(ring.pictures[slot], destination, used);
        ring.sizes[slot] = used;
        return used;
    }
    if (ring.sizes[slot] > capacity) return 0;
    memcpy(destination, ring.pictures[slot], ring.sizes[slot]);
    return ring.sizes[slot];
}

// Paints the ring's pictures before the stream's clock starts. Painted as the first frames came
// due instead, a 1080p MJPEG ring cost each of those frames a paint and a compression on the
// capture thread, inside DQBUF: with three other cameras' processes starting beside it, frame
// 11 found no buffer queued, a drop the recorder was blamed for.
void fv_prepare_ring(uint32_t fourcc, uint32_t width, uint32_t height, size_t capacity) {
    if (fv.config.picture_ring == 0 || fourcc == V4L2_PIX_FMT_H264) return;
    uint8_t *scratch = malloc(capacity);
    if (scratch == NULL) {
        fv_trace("out of memory for a %zu-byte picture of the ring", capacity);
        return;
    }
    for (uint32_t n = 0; n < fv.config.picture_ring; n++) {
        if (fv_paint(fourcc, width, height, n, false, scratch, capacity) == 0) {
            fv_trace("picture %u of the ring could not be made before STREAMON", n);
            break;
        }
    }
    free(scratch);
}

// The lower half white, as the test pattern flashes with its test sound.
static void paint_flash(void) {
    uint32_t width = canvas.width, height = canvas.height;
    uint32_t top = (height / 2) & ~1u;
    memset(canvas.y + (size_t)top * width, 235, (size_t)(height - top) * width);
    memset(canvas.u + (size_t)(top / 2) * (width / 2), 128, (size_t)(height / 2 - top / 2) * (width / 2));
    memset(canvas.v + (size_t)(top / 2) * (width / 2), 128, (size_t)(height / 2 - top / 2) * (width / 2));
}

static size_t paint(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t sequence, bool flash,
                    uint8_t *destination, size_t capacity) {
    if (!prepare_canvas(width, height)) return 0;
    paint_i420(sequence);
    if (flash) paint_flash();
    if (fourcc == V4L2_PIX_FMT_H264) {
        uint32_t fps = fv.device != NULL ? fv.device->fps : 0;
        int32_t i_period = fv.device != NULL ? fv_control_value(fv.device, V4L2_CID_MPEG_VIDEO_H264_I_PERIOD) : 30;
        return fv_h264_encode(canvas.y, canvas.u, canvas.v, width, height, fps, i_period > 0 ? (uint32_t)i_period : 30,
                              sequence, destination, capacity);
    }
    if (fourcc != V4L2_PIX_FMT_MJPEG && capacity < fv_sizeimage(fourcc, width, height)) return 0;
    switch (fourcc) {
    case V4L2_PIX_FMT_YUYV: return pack_yuyv(destination);
    case V4L2_PIX_FMT_NV12: return pack_planar(destination, true);
    case V4L2_PIX_FMT_YUV420: return pack_planar(destination, false);
    case V4L2_PIX_FMT_MJPEG: return compress_jpeg(destination, capacity);
    default: return 0;
    }
}
