// One open handle of the microphone: its runs, checked against the clock and the fault
// schedule whenever the client looks (pointer, poll, status, start, prepare), and the ioplug
// callbacks. A run's position and samples come from clock.c and sound.c; what outlives the
// handle from microphone.c.
#include "fake_alsa.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <unistd.h>

// The client's position in the current run: appl_ptr counts from 0 at each prepare, and the
// boundary it wraps at is beyond any run's length.
static uint64_t application_position(const struct fa_pcm *pcm) {
    return pcm->io.appl_ptr;
}

static void note_consumed(struct fa_pcm *pcm, uint64_t position) {
    if (position > pcm->consumed) pcm->consumed = position;
}

// Ends the run in progress; `captured` is the position it ended at. Lock held.
static void end_run(struct fa_pcm *pcm, uint64_t captured, const char *why) {
    if (!pcm->running) return;
    struct fa_microphone *microphone = pcm->microphone;
    note_consumed(pcm, application_position(pcm));
    pcm->running = false;
    pcm->frozen = captured;
    microphone->frames_captured += captured;
    microphone->frames_delivered += pcm->consumed;
    microphone->last_stop_ns = fa_now_ns();
    if (pcm->run >= 0) {
        struct fa_run *run = &microphone->runs[pcm->run];
        run->delivered = pcm->consumed;
        run->captured = captured;
        run->end = why;
    }
    fa_trace(microphone, "run ends (%s): captured %llu, delivered %llu", why, (unsigned long long)captured,
             (unsigned long long)pcm->consumed);
}

// Brings the handle up to date with the clock and the fault schedule. Lock held.
static enum fa_condition check(struct fa_pcm *pcm, int64_t now) {
    struct fa_microphone *microphone = pcm->microphone;
    if (pcm->condition == FA_GONE) return FA_GONE;
    int64_t unplug = fa_absolute(microphone, microphone->config.unplug_ns);
    if (now >= unplug && pcm->opened_ns < unplug) {
        pcm->condition = FA_GONE;
        microphone->unplug_seen = true;
        microphone->unplugged_handles++;
        end_run(pcm, fa_position(&pcm->stream, unplug), "unplug");
        fa_trace(microphone, "unplugged");
        return FA_GONE;
    }
    if (!pcm->running) return pcm->condition;
    if (!pcm->stall_counted && pcm->stream.stall_from_ns < pcm->stream.stall_to_ns
        && now >= pcm->stream.stall_from_ns) {
        pcm->stall_counted = true;
        microphone->stalls++;
        microphone->stall_frames += fa_stall_frames(&pcm->stream);
        fa_trace(microphone, "stall");
    }
    for (unsigned k = 0; k < microphone->config.overrun_count; k++) {
        int64_t at = fa_absolute(microphone, microphone->config.overrun_ns[k]);
        if (microphone->overrun_done[k] || at > now) continue;
        microphone->overrun_done[k] = true;
        if (at < pcm->stream.start_ns) continue;
        microphone->xruns++;
        microphone->xruns_forced++;
        pcm->condition = FA_OVERRUN;
        end_run(pcm, fa_position(&pcm->stream, at), "overrun");
        return FA_OVERRUN;
    }
    uint64_t position = fa_position(&pcm->stream, now);
    uint64_t application = application_position(pcm);
    note_consumed(pcm, application);
    if (position >= application + pcm->stop_threshold) {
        microphone->xruns++;
        pcm->condition = FA_OVERRUN;
        end_run(pcm, position, "xrun");
        return FA_OVERRUN;
    }
    return FA_FINE;
}

// Makes the poll descriptor readable when a client at position `application` can read
// avail_min frames, or when the next fault comes; at once when the handle is broken. Lock held.
static void rearm_for(struct fa_pcm *pcm, int64_t now, uint64_t application) {
    uint64_t ticks;
    while (read(pcm->timer_fd, &ticks, sizeof ticks) > 0) {}
    int64_t at = FA_NEVER;
    if (pcm->condition != FA_FINE) {
        at = now;
    } else if (pcm->running) {
        struct fa_microphone *microphone = pcm->microphone;
        at = fa_time_of_position(&pcm->stream, application + pcm->avail_min, now);
        for (unsigned k = 0; k < microphone->config.overrun_count; k++) {
            int64_t overrun = fa_absolute(microphone, microphone->config.overrun_ns[k]);
            if (!microphone->overrun_done[k] && overrun < at) at = overrun;
        }
        int64_t unplug = fa_absolute(microphone, microphone->config.unplug_ns);
        if (pcm->opened_ns < unplug && unplug < at) at = unplug;
    }
    struct itimerspec timer = {0};
    if (at != FA_NEVER) {
        if (at < 1) at = 1;
        timer.it_value.tv_sec = at / FA_NS_PER_SECOND;
        timer.it_value.tv_nsec = at % FA_NS_PER_SECOND;
    }
    if (timerfd_settime(pcm->timer_fd, TFD_TIMER_ABSTIME, &timer, NULL) != 0) {
        dprintf(2, "fake-alsa: timerfd_settime: %s\n", strerror(errno));
        abort();
    }
}

static void rearm(struct fa_pcm *pcm, int64_t now) {
    rearm_for(pcm, now, application_position(pcm));
}

// ---- ioplug callbacks ----

static int vtfake_start(snd_pcm_ioplug_t *io) {
    struct fa_pcm *pcm = io->private_data;
    struct fa_microphone *microphone = pcm->microphone;
    fa_lock();
    int64_t now = fa_now_ns();
    if (check(pcm, now) == FA_GONE) {
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
        fa_unlock();
        return -ENODEV;
    }
    if (microphone->epoch_ns < 0) microphone->epoch_ns = now;
    if (microphone->first_start_ns < 0) microphone->first_start_ns = now;
    microphone->last_start_ns = now;
    pcm->stream = (struct fa_stream){
        .start_ns = now, .rate = io->rate, .ppb = pcm->config.ppb,
        .stall_from_ns = FA_NEVER, .stall_to_ns = FA_NEVER, .stall_mode = pcm->config.stall_mode,
    };
    int64_t stall = fa_absolute(microphone, pcm->config.stall_ns);
    if (stall != FA_NEVER && stall + pcm->config.stall_length_ns > now) {
        pcm->stream.stall_from_ns = stall > now ? stall : now;
        pcm->stream.stall_to_ns = stall + pcm->config.stall_length_ns;
    }
    pcm->run = microphone->starts < FA_MAX_RUNS ? (int)microphone->starts : -1;
    if (pcm->run >= 0) microphone->runs[pcm->run] = (struct fa_run){.start_ns = now, .end = "running"};
    microphone->starts++;
    pcm->running = true;
    pcm->stall_counted = false;
    pcm->frozen = 0;
    pcm->consumed = 0;
    rearm(pcm, now);
    fa_trace(microphone, "start at %lld ns, %u Hz", (long long)now, io->rate);
    fa_unlock();
    return 0;
}

static int vtfake_stop(snd_pcm_ioplug_t *io) {
    struct fa_pcm *pcm = io->private_data;
    fa_lock();
    int64_t now = fa_now_ns();
    if (check(pcm, now) == FA_FINE) end_run(pcm, fa_position(&pcm->stream, now), "stop");
    rearm(pcm, now);
    fa_unlock();
    return 0;
}

static snd_pcm_sframes_t vtfake_pointer(snd_pcm_ioplug_t *io) {
    struct fa_pcm *pcm = io->private_data;
    fa_lock();
    int64_t now = fa_now_ns();
    snd_pcm_sframes_t result;
    switch (check(pcm, now)) {
    case FA_GONE:
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
        result = (snd_pcm_sframes_t)pcm->frozen;
        break;
    case FA_OVERRUN:
        result = -EPIPE;
        break;
    default:
        result = (snd_pcm_sframes_t)(pcm->running ? fa_position(&pcm->stream, now) : pcm->frozen);
        break;
    }
    fa_unlock();
    return result;
}

static snd_pcm_sframes_t vtfake_transfer(snd_pcm_ioplug_t *io, const snd_pcm_channel_area_t *areas,
                                         snd_pcm_uframes_t offset, snd_pcm_uframes_t size) {
    struct fa_pcm *pcm = io->private_data;
    fa_lock();
    uint64_t first = application_position(pcm);
    fa_fill(&pcm->config, &pcm->stream, io->format, io->channels, areas, offset, first, size);
    // Read/write access moves appl_ptr by what this returns; mmap access commits later, and
    // poll_revents looks again then.
    if (io->access == SND_PCM_ACCESS_RW_INTERLEAVED) {
        note_consumed(pcm, first + size);
        if (pcm->condition == FA_FINE && pcm->running) {
            struct fa_stream *stream = &pcm->stream;
            int64_t now = fa_now_ns();
            if (fa_position(stream, now) < first + size + pcm->avail_min) rearm_for(pcm, now, first + size);
        }
    }
    fa_unlock();
    return (snd_pcm_sframes_t)size;
}

static int vtfake_prepare(snd_pcm_ioplug_t *io) {
    struct fa_pcm *pcm = io->private_data;
    fa_lock();
    int64_t now = fa_now_ns();
    if (check(pcm, now) == FA_GONE) {
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
        fa_unlock();
        return -ENODEV;
    }
    end_run(pcm, fa_position(&pcm->stream, now), "prepare");
    pcm->microphone->prepares++;
    pcm->condition = FA_FINE;
    pcm->frozen = 0;
    pcm->consumed = 0;
    rearm(pcm, now);
    fa_unlock();
    return 0;
}

static int vtfake_drain(snd_pcm_ioplug_t *io) {
    // Capture stops at once; ioplug then drops the stream, which calls vtfake_stop.
    (void)io;
    return 0;
}

static int vtfake_hw_params(snd_pcm_ioplug_t *io, snd_pcm_hw_params_t *params) {
    (void)params;
    struct fa_pcm *pcm = io->private_data;
    struct fa_microphone *microphone = pcm->microphone;
    fa_lock();
    if (check(pcm, fa_now_ns()) == FA_GONE) {
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
        fa_unlock();
        return -ENODEV;
    }
    microphone->rate = io->rate;
    microphone->channels = io->channels;
    microphone->format = (unsigned)io->format;
    microphone->access = (unsigned)io->access;
    microphone->period_size = io->period_size;
    microphone->buffer_size = io->buffer_size;
    pcm->avail_min = io->period_size;
    pcm->stop_threshold = io->buffer_size;
    fa_trace(microphone, "hw_params %s %u ch %u Hz, period %lu, buffer %lu", fa_format_name(io->format),
             io->channels, io->rate, io->period_size, io->buffer_size);
    fa_unlock();
    return 0;
}

static int vtfake_sw_params(snd_pcm_ioplug_t *io, snd_pcm_sw_params_t *params) {
    struct fa_pcm *pcm = io->private_data;
    snd_pcm_uframes_t avail_min, stop_threshold;
    if (snd_pcm_sw_params_get_avail_min(params, &avail_min) < 0
        || snd_pcm_sw_params_get_stop_threshold(params, &stop_threshold) < 0) {
        return -EINVAL;
    }
    fa_lock();
    pcm->avail_min = avail_min > 0 ? avail_min : 1;
    pcm->stop_threshold = stop_threshold;
    fa_trace(pcm->microphone, "sw_params avail_min %lu, stop_threshold %lu", avail_min, stop_threshold);
    fa_unlock();
    return 0;
}

static int vtfake_poll_revents(snd_pcm_ioplug_t *io, struct pollfd *pfd, unsigned int nfds,
                               unsigned short *revents) {
    (void)pfd;
    (void)nfds;
    struct fa_pcm *pcm = io->private_data;
    fa_lock();
    int64_t now = fa_now_ns();
    *revents = 0;
    switch (check(pcm, now)) {
    case FA_GONE:
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_DISCONNECTED);
        *revents = POLLERR | POLLHUP;
        break;
    case FA_OVERRUN:
        snd_pcm_ioplug_set_state(io, SND_PCM_STATE_XRUN);
        *revents = POLLERR;
        break;
    default:
        if (!pcm->running) {
            if (io->state != SND_PCM_STATE_PREPARED) *revents = POLLERR;
        } else if (fa_position(&pcm->stream, now) >= application_position(pcm) + pcm->avail_min) {
            *revents = POLLIN;
        } else {
            rearm(pcm, now);
        }
        break;
    }
    fa_unlock();
    return 0;
}

static int vtfake_close(snd_pcm_ioplug_t *io) {
    struct fa_pcm *pcm = io->private_data;
    struct fa_microphone *microphone = pcm->microphone;
    fa_lock();
    int64_t now = fa_now_ns();
    if (check(pcm, now) == FA_FINE) end_run(pcm, fa_position(&pcm->stream, now), "close");
    microphone->closes++;
    microphone->open_handles--;
    fa_write_report(microphone, "close");
    fa_trace(microphone, "close");
    fa_unlock();
    close(pcm->timer_fd);
    free(pcm);
    return 0;
}

const snd_pcm_ioplug_callback_t fa_callbacks = {
    .start = vtfake_start,
    .stop = vtfake_stop,
    .pointer = vtfake_pointer,
    .transfer = vtfake_transfer,
    .close = vtfake_close,
    .hw_params = vtfake_hw_params,
    .sw_params = vtfake_sw_params,
    .prepare = vtfake_prepare,
    .drain = vtfake_drain,
    .poll_revents = vtfake_poll_revents,
};
