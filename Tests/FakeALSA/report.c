// The report (the `report` knob): what one microphone did in one process, so a test can check
// that the double did what it was asked and compare what the client got with what the device
// captured. Rewritten at every snd_pcm_close, at a refused open and at exit, so a client killed
// by a signal after closing the device still leaves one.
//
// Keys: name, pid, when (close, refused or exit), opens, open_refusals (opens refused while
// unplugged), closes, open_handles, starts, prepares, frames_captured and frames_delivered (over
// every run that ended), xruns (every overrun), xruns_forced (those the `overruns` knob made),
// stalls (runs the stall fell on), stall_frames (samples those stalls took), unplugged (0/1: the
// unplug time came while the process used the microphone), unplugged_handles,
// opens_after_replug; epoch_ns, first_open_ns (the first open or refusal), first_start_ns,
// last_start_ns, last_stop_ns (CLOCK_MONOTONIC, -1: never); rate, format, channels,
// period_size, buffer_size, access (the last hw_params); ppm; and
// run_N=start_ns,delivered,captured,end for the first 32 runs, where end says how the run ended:
// stop, prepare, overrun (forced), xrun (the client was late), unplug, close, or running.
#define DOUBLE_NAME "fake-alsa"

#include "fake_alsa.h"
#include "double_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


// Appends to a fixed buffer; false once it is full.
static bool append(char *text, size_t capacity, size_t *length, const char *format, ...)
    __attribute__((format(printf, 4, 5)));
static bool append(char *text, size_t capacity, size_t *length, const char *format, ...) {
    va_list arguments;
    va_start(arguments, format);
    int added = vsnprintf(text + *length, capacity - *length, format, arguments);
    va_end(arguments);
    if (added < 0 || (size_t)added >= capacity - *length) return false;
    *length += (size_t)added;
    return true;
}

void fa_write_report(const struct fa_microphone *microphone, const char *when) {
    const struct fa_config *config = &microphone->config;
    if (config->report[0] == '\0') return;
    char path[PATH_MAX];
    if (!double_report_path(config->report, path, sizeof path)) {
        dprintf(2, "fake-alsa: report path too long: %s\n", config->report);
        return;
    }
    int saved = errno;
    char text[8192];
    size_t length = 0;
    bool fits = append(text, sizeof text, &length,
        "name=%s\npid=%ld\nwhen=%s\nopens=%llu\nopen_refusals=%llu\ncloses=%llu\nopen_handles=%llu\n"
        "starts=%llu\nprepares=%llu\nframes_captured=%llu\nframes_delivered=%llu\nxruns=%llu\n"
        "xruns_forced=%llu\nstalls=%llu\nstall_frames=%llu\nunplugged=%d\nunplugged_handles=%llu\n"
        "opens_after_replug=%llu\nepoch_ns=%lld\nfirst_open_ns=%lld\nfirst_start_ns=%lld\nlast_start_ns=%lld\n"
        "last_stop_ns=%lld\nrate=%u\nformat=%s\nchannels=%u\nperiod_size=%llu\nbuffer_size=%llu\n"
        "access=%s\nppm=%.3f\n",
        config->name, (long)getpid(), when, (unsigned long long)microphone->opens,
        (unsigned long long)microphone->open_refusals, (unsigned long long)microphone->closes,
        (unsigned long long)microphone->open_handles, (unsigned long long)microphone->starts,
        (unsigned long long)microphone->prepares, (unsigned long long)microphone->frames_captured,
        (unsigned long long)microphone->frames_delivered, (unsigned long long)microphone->xruns,
        (unsigned long long)microphone->xruns_forced, (unsigned long long)microphone->stalls,
        (unsigned long long)microphone->stall_frames, microphone->unplug_seen ? 1 : 0,
        (unsigned long long)microphone->unplugged_handles, (unsigned long long)microphone->opens_after_replug,
        (long long)microphone->epoch_ns, (long long)microphone->first_open_ns, (long long)microphone->first_start_ns,
        (long long)microphone->last_start_ns, (long long)microphone->last_stop_ns, microphone->rate,
        microphone->rate == 0 ? "none" : fa_format_name(microphone->format), microphone->channels,
        (unsigned long long)microphone->period_size, (unsigned long long)microphone->buffer_size,
        microphone->rate == 0 ? "none" : snd_pcm_access_name((snd_pcm_access_t)microphone->access),
        (double)config->ppb / 1000);
    uint64_t listed = microphone->starts < FA_MAX_RUNS ? microphone->starts : FA_MAX_RUNS;
    for (uint64_t i = 0; i < listed && fits; i++) {
        const struct fa_run *run = &microphone->runs[i];
        fits = append(text, sizeof text, &length, "run_%llu=%lld,%llu,%llu,%s\n", (unsigned long long)i,
                      (long long)run->start_ns, (unsigned long long)run->delivered,
                      (unsigned long long)run->captured, run->end);
    }
    if (!fits) {
        dprintf(2, "fake-alsa: report does not fit its buffer\n");
        errno = saved;
        return;
    }
    // Written whole to a new file and renamed, so a test never reads half a report.
    char partial[PATH_MAX + 16];
    snprintf(partial, sizeof partial, "%s.partial", path);
    int fd = open(partial, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        dprintf(2, "fake-alsa: cannot write report %s: %s\n", partial, strerror(errno));
        errno = saved;
        return;
    }
    bool written = write(fd, text, length) == (ssize_t)length;
    if (close(fd) != 0) written = false;
    if (!written || rename(partial, path) != 0) {
        dprintf(2, "fake-alsa: cannot write report %s: %s\n", path, strerror(errno));
        unlink(partial);
    }
    errno = saved;
}
