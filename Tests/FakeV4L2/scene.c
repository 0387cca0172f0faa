// What happens in front of the fake camera, for motion detection to find or to ignore: a
// square that crosses the picture (FAKE_V4L2_MOVER) and a change of light over the whole scene
// (FAKE_V4L2_LIGHT_RAMP). Both are pure functions of the frame's sequence number, like the
// rest of the picture, so a test knows exactly which frames show what. picture.c calls them
// after painting the background and before the noise and the frame code, so the noise lies
// over the mover and the light, and the frame code stays byte for byte what FrameCode.swift
// reads.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <string.h>

enum {
    // Far from the background's mean, so the square shows against every part of it.
    MOVER_LUMA = 235,
    // A multiple of 2 keeps the square's chroma on whole samples; 4 is a walking person's pace
    // across a 640-pixel picture in about five seconds.
    MOVER_STEP = 4,
};

void fv_draw_mover(uint8_t *y, uint8_t *u, uint8_t *v, uint32_t width, uint32_t height, uint32_t sequence) {
    const struct fv_config *config = &fv.config;
    if (!config->mover || sequence < config->mover_start || sequence >= config->mover_end) return;
    uint32_t side = (height / 6) & ~1u;
    if (side < 2 || side > width) return;
    // Left to right at MOVER_STEP pixels a frame, starting again at the left edge when the
    // square reaches the right one: moving in every frame of its window.
    uint32_t positions = (width - side) / MOVER_STEP + 1;
    uint32_t left = MOVER_STEP * ((sequence - config->mover_start) % positions);
    uint32_t top = ((height - side) / 2) & ~1u;
    for (uint32_t row = top; row < top + side; row++) {
        memset(y + (size_t)row * width + left, MOVER_LUMA, side);
    }
    for (uint32_t row = top / 2; row < (top + side) / 2; row++) {
        memset(u + (size_t)row * (width / 2) + left / 2, 128, side / 2);
        memset(v + (size_t)row * (width / 2) + left / 2, 128, side / 2);
    }
}

// A lamp that blinks: a square a sixth of the picture's height on a side, in the upper right
// quarter (clear of the frame code at the top left and of the mover's row), lit in the first
// blink_on frames of every blink_period, from frame 0.
void fv_draw_blink(uint8_t *y, uint32_t width, uint32_t height, uint32_t sequence) {
    const struct fv_config *config = &fv.config;
    if (!config->blink || sequence % config->blink_period >= config->blink_on) return;
    uint32_t side = (height / 6) & ~1u;
    if (side < 2 || side * 2 > width) return;
    uint32_t left = (width - 2 * side) & ~1u, top = (height / 6) & ~1u;
    for (uint32_t row = top; row < top + side; row++) {
        memset(y + (size_t)row * width + left, MOVER_LUMA, side);
    }
}

// The light's shift at frame `sequence`: none before the ramp, linear through it, the whole
// delta from its end on (START = END is a step).
static int light_shift(uint32_t sequence) {
    const struct fv_config *config = &fv.config;
    if (!config->light_ramp || sequence < config->light_start) return 0;
    if (sequence >= config->light_end) return config->light_delta;
    int64_t done = (int64_t)(sequence - config->light_start);
    return (int)(config->light_delta * done / (int64_t)(config->light_end - config->light_start));
}

void fv_apply_light(uint8_t *y, uint32_t width, uint32_t height, uint32_t sequence) {
    int shift = light_shift(sequence);
    if (shift == 0) return;
    // Clipped to video range, as a camera's picture saturates.
    uint8_t shifted[256];
    for (int value = 0; value < 256; value++) {
        int lit = value + shift;
        shifted[value] = (uint8_t)(lit < 16 ? 16 : lit > 235 ? 235 : lit);
    }
    size_t luma = (size_t)width * height;
    for (size_t i = 0; i < luma; i++) y[i] = shifted[y[i]];
}
