// FAKE_V4L2_PAUSE_AT: the camera stops for a while inside one call (open, S_FMT, S_PARM,
// REQBUFS, STREAMON, or the DQBUF that hands out frame N), as a slow camera does, so a test can
// signal a client while it is in that phase on purpose rather than by luck of timing. A line on
// standard error says when the pause starts and ends; the exit report names the phase reached.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-v4l2"
#include "fake_v4l2.h"
#include "double_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct { enum fv_phase phase; const char *name; } phases[] = {
    {FV_PHASE_OPEN, "open"}, {FV_PHASE_S_FMT, "s_fmt"}, {FV_PHASE_S_PARM, "s_parm"},
    {FV_PHASE_REQBUFS, "reqbufs"}, {FV_PHASE_STREAMON, "streamon"}, {FV_PHASE_DQBUF, "dqbuf"},
};

const char *fv_phase_name(enum fv_phase phase) {
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        if (phases[i].phase == phase) return phases[i].name;
    }
    return "none";
}

// "open", "s_fmt", "s_parm", "reqbufs", "streamon" or "dqbuf:N".
void fv_parse_pause(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_PAUSE_AT";
    config->pause_phase = FV_PHASE_NONE;
    if (text == NULL || *text == '\0') return;
    const char *colon = strchr(text, ':');
    size_t length = colon != NULL ? (size_t)(colon - text) : strlen(text);
    for (size_t i = 0; i < sizeof phases / sizeof phases[0]; i++) {
        if (strlen(phases[i].name) == length && strncmp(text, phases[i].name, length) == 0) {
            config->pause_phase = phases[i].phase;
        }
    }
    if (config->pause_phase == FV_PHASE_NONE) {
        bad_knob(knob, text, "expected open, s_fmt, s_parm, reqbufs, streamon or dqbuf:N");
    }
    if ((config->pause_phase == FV_PHASE_DQBUF) != (colon != NULL)) {
        bad_knob(knob, text, "dqbuf takes a frame count (dqbuf:N); the other phases none");
    }
    if (colon != NULL) {
        char *end;
        errno = 0;
        unsigned long long frames = strtoull(colon + 1, &end, 10);
        if (errno != 0 || end == colon + 1 || *end != '\0' || colon[1] == '-') {
            bad_knob(knob, text, "dqbuf:N needs a whole number of frames");
        }
        config->pause_frame = frames;
    }
}

// Sleeps the whole duration: a signal the process takes meanwhile does not cut it short.
static void sleep_through(int64_t duration_ns) {
    int64_t end = fv_now_ns() + duration_ns;
    struct timespec until = {.tv_sec = end / 1000000000, .tv_nsec = end % 1000000000};
    int error;
    while ((error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &until, NULL)) == EINTR) {}
    if (error != 0) {
        dprintf(2, "fake-v4l2: clock_nanosleep: %s\n", strerror(error));
        abort();
    }
}

// The phase as FAKE_V4L2_PAUSE_AT names it: "s_fmt", "dqbuf:45".
static void label(enum fv_phase phase, char *text, size_t capacity) {
    int length = phase == FV_PHASE_DQBUF
        ? snprintf(text, capacity, "dqbuf:%llu", (unsigned long long)fv.config.pause_frame)
        : snprintf(text, capacity, "%s", fv_phase_name(phase));
    if (length < 0 || (size_t)length >= capacity) abort();
}

// The lines a test waits for. Without them it cannot know where the client is, so a failure
// to write one stops the process rather than leaving the test to time out unexplained.
bool fv_pause_at(enum fv_phase phase) {
    if (phase == FV_PHASE_NONE || fv.config.pause_phase != phase || fv.pause_reached) return false;
    if (phase == FV_PHASE_DQBUF && fv.frames_delivered != fv.config.pause_frame) return false;
    fv.pause_reached = true;
    char name[32];
    label(phase, name, sizeof name);
    if (dprintf(2, "fake-v4l2: paused at %s for %lld ms\n", name, (long long)(fv.config.pause_ns / 1000000)) < 0) {
        abort();
    }
    fv_unlock();
    sleep_through(fv.config.pause_ns);
    fv_lock();
    if (dprintf(2, "fake-v4l2: resumed after %s\n", name) < 0) abort();
    return true;
}

// A test that signals a client twice (once to stop, again while it drains what it holds) waits
// for this line: the stop has given the camera back, so the second signal lands in the drain.
void fv_note_release(void) {
    static bool noted;
    if (!fv.pause_reached || noted || fv.open_handles > 0 || fv_mapping_count() > 0) return;
    noted = true;
    if (dprintf(2, "fake-v4l2: released the camera\n") < 0) abort();
}
