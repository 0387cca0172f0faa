// The modelled engine of FAKE_VA_LEVEL_MS and FAKE_VA_BUSY. The driver encodes inside
// vaEndPicture, at once; what takes time is the engine it pretends to drive. Each encode context
// has one, which takes its pictures one after another: a picture submitted at vaEndPicture
// starts when the engine is free (at once, or when the picture before it is done) and takes what
// its quality level costs, times the busy factor if it was submitted inside the busy window.
// The time it is done is kept on its input surface, its reconstructed surface and its coded
// buffer; vaSyncSurface, vaSyncSurface2, vaSyncBuffer and vaMapBuffer of the coded buffer wait
// for it, and vaQuerySurfaceStatus says VASurfaceRendering until then. Without FAKE_VA_LEVEL_MS
// every picture is done when vaEndPicture returns.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-va"
#include "fake_va.h"
#include "double_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int64_t nanoseconds_per_ms = 1000000;

int64_t fva_now_ns(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        dprintf(2, "fake-va: clock_gettime: %s\n", strerror(errno));
        abort();
    }
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void fva_sleep_until(int64_t deadline_ns) {
    struct timespec deadline = {.tv_sec = deadline_ns / 1000000000, .tv_nsec = deadline_ns % 1000000000};
    int error;
    while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &deadline, NULL)) == EINTR) {}
    if (error != 0) {
        dprintf(2, "fake-va: clock_nanosleep: %s\n", strerror(error));
        abort();
    }
}

VAStatus fva_wait_for_engine(int64_t done_ns, uint64_t timeout_ns) {
    int64_t now = fva_now_ns();
    if (done_ns <= now) return VA_STATUS_SUCCESS;
    if (timeout_ns != VA_TIMEOUT_INFINITE && (uint64_t)(done_ns - now) > timeout_ns) {
        fva_sleep_until(now + (int64_t)timeout_ns);
        return VA_STATUS_ERROR_TIMEDOUT;
    }
    fva_sleep_until(done_ns);
    return VA_STATUS_SUCCESS;
}

void fva_schedule_picture(struct fva_context *context, struct fva_surface *const *surfaces, unsigned surface_count,
                          struct fva_coded *coded) {
    if (fva_knobs.level_ms_count == 0) return;
    int64_t now = fva_now_ns();
    if (!context->submitted) {
        context->submitted = true;
        context->first_submit_ns = now;
        context->engine_free_ns = now;
    }
    // Level 0 (the driver's default, also before any level was sent) costs what level 1 does.
    unsigned level = fva_quality_level(context);
    unsigned index = level == 0 ? 0 : level - 1;
    if (index >= fva_knobs.level_ms_count) index = fva_knobs.level_ms_count - 1;
    int64_t cost = fva_knobs.level_ms[index] * nanoseconds_per_ms;
    int64_t since_first = now - context->first_submit_ns;
    bool busy = fva_knobs.busy_factor > 0 && since_first >= fva_knobs.busy_from_ms * nanoseconds_per_ms
        && since_first < fva_knobs.busy_to_ms * nanoseconds_per_ms;
    if (busy) cost *= fva_knobs.busy_factor;
    int64_t start = context->engine_free_ns > now ? context->engine_free_ns : now;
    context->engine_free_ns = start + cost;
    for (unsigned i = 0; i < surface_count; i++) {
        if (surfaces[i] != NULL) surfaces[i]->done_ns = context->engine_free_ns;
    }
    coded->done_ns = context->engine_free_ns;
    fva_trace("  submitted at %.1f ms: quality level %u costs %.1f ms%s, done at %.1f ms",
              (double)since_first / 1e6, level, (double)cost / 1e6, busy ? " (busy)" : "",
              (double)(context->engine_free_ns - context->first_submit_ns) / 1e6);
}
