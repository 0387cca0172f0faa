// When the camera's frames come due: the negotiated rate or FAKE_V4L2_DELIVERED_FPS, and
// jitter.
#define _GNU_SOURCE
#include "fake_v4l2.h"

bool fv_every(uint32_t n, uint64_t sequence) {
    return n != 0 && (sequence + 1) % n == 0;
}

static int64_t interval_ns(const struct fv_device *device, uint64_t frames) {
    double fps = fv.config.delivered_fps > 0 ? fv.config.delivered_fps : (double)device->fps;
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

// Frame n is exposed for one whole interval after STREAMON before it can be delivered.
int64_t fv_due_ns(const struct fv_device *device, uint64_t sequence) {
    return device->start_ns + interval_ns(device, sequence + 1) + jitter_ns(sequence);
}
