// The exit report (FAKE_V4L2_REPORT): what a process left of the camera when it ended, so a
// test can prove a client gave back every descriptor, mapping and buffer.
//
// A process that returns from main or calls exit() writes it from a destructor. One that ends
// with _exit() (vtrecord's abort on a second signal) runs no destructors, so _exit is
// intercepted (intercept.c) to write it first; the report then says `exit=_exit` and shows what
// the process still held at that moment, which the kernel releases as the process goes. A
// process killed by a signal it does not handle writes none.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-v4l2"

#include "fake_v4l2.h"
#include "double_support.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>


void fv_write_report(const char *how) {
    fv_init();
    // Processes that never tried the camera (a shell, `timeout`) leave the report alone.
    if (fv.config.report[0] == '\0' || fv.open_attempts == 0) return;
    char path[PATH_MAX];
    if (!double_report_path(fv.config.report, path, sizeof path)) {
        dprintf(2, "fake-v4l2: report path too long: %s\n", fv.config.report);
        return;
    }
    fv_lock();
    if (fv.reported) {
        fv_unlock();
        return;
    }
    fv.reported = true;
    struct fv_device *device = fv.device;
    unsigned queued = 0;
    bool streaming = false;
    if (device != NULL) {
        fv_advance(device, fv_now_ns());
        if (fv.device != NULL) {
            queued = device->queued_count + device->done_count;
            streaming = device->streaming;
        }
    }
    char text[1024];
    int length = snprintf(text, sizeof text,
        "open_handles=%u\nmapped_buffers=%u\nstreaming=%d\nbuffers_queued=%u\n"
        "frames_delivered=%llu\nframes_dropped=%llu\nlast_sequence=%lld\nopens=%llu\nunplugged=%d\n"
        "failed=%d\npause_reached=%s\nexit=%s\npid=%ld\n",
        fv.open_handles, fv_mapping_count(), streaming ? 1 : 0, queued,
        (unsigned long long)fv.frames_delivered, (unsigned long long)fv.frames_dropped,
        (long long)fv.last_sequence, (unsigned long long)fv.opens, fv.ever_unplugged ? 1 : 0,
        fv.ever_failed ? 1 : 0, fv.pause_reached ? fv_phase_name(fv.config.pause_phase) : "none", how,
        (long)getpid());
    fv_unlock();
    if (length < 0 || (size_t)length >= sizeof text) {
        dprintf(2, "fake-v4l2: report does not fit its buffer\n");
        return;
    }
    int fd = fv_real.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        dprintf(2, "fake-v4l2: cannot write report %s: %s\n", path, strerror(errno));
        return;
    }
    ssize_t written = write(fd, text, (size_t)length);
    if (written != length) {
        dprintf(2, "fake-v4l2: short write to report %s: %s\n", path,
                written < 0 ? strerror(errno) : "disk full?");
    }
    if (fv_real.close(fd) != 0) dprintf(2, "fake-v4l2: close report %s: %s\n", path, strerror(errno));
}

// FAKE_V4L2_STREAMON_FILE: the CLOCK_MONOTONIC nanoseconds of the stream's start, written at
// each STREAMON, so that a measurement outside the process knows when frame n came due
// (start + (n+1) × interval) and how late a client shows it.
void fv_write_streamon(int64_t start_ns) {
    const char *path = fv.config.streamon_file;
    if (path[0] == '\0') return;
    char text[32];
    int length = snprintf(text, sizeof text, "%lld\n", (long long)start_ns);
    int fd = fv_real.open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        dprintf(2, "fake-v4l2: cannot write %s: %s\n", path, strerror(errno));
        return;
    }
    if (write(fd, text, (size_t)length) != length) dprintf(2, "fake-v4l2: short write to %s\n", path);
    if (fv_real.close(fd) != 0) dprintf(2, "fake-v4l2: close %s: %s\n", path, strerror(errno));
}

__attribute__((destructor)) static void report_at_exit(void) {
    fv_write_report("exit");
}
