// When the camera's frames come due and what time each carries: the negotiated rate or
// FAKE_V4L2_DELIVERED_FPS, a change of rate part-way (FAKE_V4L2_RATE_CHANGE), jitter, and
// timestamps that go backwards or jump (FAKE_V4L2_TIMESTAMP_BACK_EVERY, _JUMP_EVERY).
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <math.h>

bool fv_every(uint32_t n, uint64_t sequence) {
    return n != 0 && (sequence + 1) % n == 0;
}

static double delivered_fps(const struct fv_device *device) {
    return fv.config.delivered_fps > 0 ? fv.config.delivered_fps : (double)device->fps;
}

// Time from STREAMON until `frames` frame intervals have passed. From frame N of
// FAKE_V4L2_RATE_CHANGE on, the intervals are those of the new rate.
static int64_t elapsed_ns(const struct fv_device *device, uint64_t frames) {
    double fps = delivered_fps(device);
    uint64_t change = fv.config.rate_change_frame;
    if (fv.config.rate_change_fps > 0 && frames > change) {
        return (int64_t)((double)change * 1e9 / fps + (double)(frames - change) * 1e9 / fv.config.rate_change_fps);
    }
    return (int64_t)((double)frames * 1e9 / fps);
}

// A fixed pseudo-random lateness in [0, jitter] µs for each sequence number.
static int64_t jitter_ns(uint64_t sequence) {
    if (fv.config.jitter_us == 0) return 0;
    uint64_t h = sequence * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (int64_t)(h % ((uint64_t)fv.config.jitter_us + 1)) * 1000;
}

// A start such that some frame's due time is the next whole second: that second minus a whole
// number of intervals, no later than `now`. Intervals are computed as elapsed_ns computes
// them, so every later whole second is a frame's time too (without jitter or a rate change).
int64_t fv_aligned_start_ns(const struct fv_device *device, int64_t now) {
    int64_t second = (now / 1000000000 + 1) * 1000000000;
    uint64_t frames = (uint64_t)ceil((double)(second - now) * delivered_fps(device) / 1e9);
    return second - elapsed_ns(device, frames);
}

// Within half a frame interval of a whole second.
bool fv_is_flash(const struct fv_device *device, int64_t timestamp) {
    int64_t half = (int64_t)(5e8 / delivered_fps(device));
    int64_t into = timestamp % 1000000000;
    return into < half || 1000000000 - into <= half;
}

// Frame n is exposed for one whole interval after STREAMON before it can be delivered.
int64_t fv_due_ns(const struct fv_device *device, uint64_t sequence) {
    return device->start_ns + elapsed_ns(device, sequence + 1) + jitter_ns(sequence);
}

// The buffer timestamp of a frame that came due at `due`: the due time, moved by the jumps
// before it (each adds to the ones before, as a clock that steps forward stays ahead) and, for
// a frame stamped backwards, set back on its own (the frames after it are stamped as usual).
int64_t fv_timestamp_ns(uint64_t sequence, int64_t due) {
    int64_t stamp = due;
    if (fv.config.timestamp_jump_every != 0) {
        stamp += (int64_t)((sequence + 1) / fv.config.timestamp_jump_every) * fv.config.timestamp_jump_ns;
    }
    if (fv_every(fv.config.timestamp_back_every, sequence)) stamp -= fv.config.timestamp_back_ns;
    return stamp;
}
