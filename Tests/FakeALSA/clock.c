// The microphone's sample clock: how many frames a run of the device has captured by a
// CLOCK_MONOTONIC time, and when each sample was taken. Exact integer arithmetic, so a test
// can predict every position and every beep's sample from the start time in the report.
//
// The clock runs at f = rate × (1 + ppb/1e9) frames per true second. Sample n of a run is
// taken at start + n/f and is complete (counted in the position) at start + (n+1)/f. A stall
// freezes the position over its span; what happens after depends on its mode (fake_alsa.h).
#include "fake_alsa.h"

typedef unsigned __int128 u128;

static const u128 ns_squared = (u128)FA_NS_PER_SECOND * (u128)FA_NS_PER_SECOND;

// Frames per 1e9 true seconds (rate × (1e9 + ppb)): the denominator of every conversion.
static u128 frames_per_gigasecond(const struct fa_stream *stream) {
    return (u128)stream->rate * (u128)(FA_NS_PER_SECOND + stream->ppb);
}

// Samples complete after `elapsed` ns of running.
static uint64_t frames_after(const struct fa_stream *stream, int64_t elapsed) {
    if (elapsed <= 0) return 0;
    return (uint64_t)((u128)elapsed * frames_per_gigasecond(stream) / ns_squared);
}

// The shortest running time after which `frames` samples are complete.
static int64_t running_time_for(const struct fa_stream *stream, uint64_t frames) {
    u128 denominator = frames_per_gigasecond(stream);
    u128 ns = ((u128)frames * ns_squared + denominator - 1) / denominator;
    return ns > (u128)INT64_MAX / 2 ? INT64_MAX / 2 : (int64_t)ns;
}

static bool has_stall(const struct fa_stream *stream) {
    return stream->stall_from_ns < stream->stall_to_ns;
}

uint64_t fa_position(const struct fa_stream *stream, int64_t now) {
    if (now <= stream->start_ns) return 0;
    int64_t elapsed = now - stream->start_ns;
    if (has_stall(stream) && now > stream->stall_from_ns) {
        if (stream->stall_mode == FA_STALL_GAP) {
            int64_t end = now < stream->stall_to_ns ? now : stream->stall_to_ns;
            elapsed -= end - stream->stall_from_ns;
        } else if (now < stream->stall_to_ns) {
            elapsed = stream->stall_from_ns - stream->start_ns;
        }
    }
    return frames_after(stream, elapsed);
}

int64_t fa_time_of_position(const struct fa_stream *stream, uint64_t frames, int64_t from) {
    if (fa_position(stream, from) >= frames) return from;
    int64_t running = running_time_for(stream, frames);
    if (running > 3600 * FA_NS_PER_SECOND) return FA_NEVER;
    int64_t at = stream->start_ns + running;
    if (has_stall(stream) && at > stream->stall_from_ns) {
        if (stream->stall_mode == FA_STALL_GAP) {
            at += stream->stall_to_ns - stream->stall_from_ns;
        } else if (at < stream->stall_to_ns) {
            at = stream->stall_to_ns;
        }
    }
    return at > from ? at : from;
}

bool fa_sample_time(const struct fa_stream *stream, uint64_t index, struct fa_instant *when) {
    u128 denominator = frames_per_gigasecond(stream);
    u128 scaled = (u128)index * ns_squared;
    int64_t elapsed = (int64_t)(scaled / denominator);
    when->fraction = (double)(scaled % denominator) / (double)denominator;
    when->ns = stream->start_ns + elapsed;
    if (!has_stall(stream) || when->ns < stream->stall_from_ns) return true;
    if (stream->stall_mode == FA_STALL_GAP) {
        when->ns += stream->stall_to_ns - stream->stall_from_ns;
        return true;
    }
    return when->ns >= stream->stall_to_ns;
}

// The first sample taken at or after `elapsed` ns of running.
static uint64_t first_sample_from(const struct fa_stream *stream, int64_t elapsed) {
    if (elapsed <= 0) return 0;
    u128 denominator = frames_per_gigasecond(stream);
    return (uint64_t)(((u128)elapsed * denominator + ns_squared - 1) / ns_squared);
}

uint64_t fa_stall_frames(const struct fa_stream *stream) {
    if (!has_stall(stream)) return 0;
    return first_sample_from(stream, stream->stall_to_ns - stream->start_ns)
        - first_sample_from(stream, stream->stall_from_ns - stream->start_ns);
}
