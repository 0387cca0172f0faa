// Shared declarations of the fake microphone (see fake_alsa.c for what it is and its knobs).
// Nothing is exported but the plugin's entry point, _snd_pcm_vtfake_open.
#ifndef FAKE_ALSA_H
#define FAKE_ALSA_H

// Every file includes this first: alsa-lib's headers need the POSIX and GNU declarations.
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>

#include <alsa/asoundlib.h>
#include <alsa/pcm_external.h>

#define FA_HIDDEN __attribute__((visibility("hidden")))

enum {
    FA_MAX_RATES = 8,
    FA_MAX_CHANNELS = 8,
    FA_MAX_FORMATS = 3,
    FA_MAX_OVERRUNS = 16,
    // Distinct PCM names one process can open; each keeps its own counts and fault schedule.
    FA_MAX_MICROPHONES = 8,
    FA_NAME_CAPACITY = 64,
};

#define FA_NS_PER_SECOND INT64_C(1000000000)
// A time that never comes.
#define FA_NEVER INT64_MAX

// ---- configuration (the arguments of one pcm.NAME { type vtfake … } definition) ----

enum fa_stall_mode {
    // Frozen, then the position jumps to where the clock is; the frames it jumps over hold
    // silence (the device heard nothing). A jump to a full buffer is an overrun.
    FA_STALL_JUMP,
    // Frozen, then the position goes on from where it stopped: the stall's samples never
    // exist, and later samples are as much later in true time (a USB device's lost packets).
    FA_STALL_GAP,
};

struct fa_config {
    char name[FA_NAME_CAPACITY];
    unsigned rates[FA_MAX_RATES], rate_count;              // ascending
    unsigned channels[FA_MAX_CHANNELS], channel_count;     // ascending
    unsigned formats[FA_MAX_FORMATS], format_count;        // snd_pcm_format_t values
    int64_t ppb;                    // the sample clock's error, parts per billion (ppm × 1000)
    double tone_hz, tone_amplitude; // amplitude as a fraction of full scale
    double beep_hz, beep_amplitude;
    double noise_amplitude;         // white noise, 0 for none
    int64_t beep_length_ns, beep_phase_ns;
    // Fault times in ns after the epoch; FA_NEVER when not asked for.
    int64_t overrun_ns[FA_MAX_OVERRUNS];
    unsigned overrun_count;
    int64_t stall_ns, stall_length_ns;
    enum fa_stall_mode stall_mode;
    int64_t unplug_ns, replug_ns;
    int64_t epoch_ns;               // CLOCK_MONOTONIC; -1: the microphone's first start
    char report[PATH_MAX];
    bool monotonic;                 // timestamps default to CLOCK_MONOTONIC
    bool trace;
};

// Reads the PCM's arguments; stops the process on one that does not parse.
FA_HIDDEN void fa_read_config(struct fa_config *config, const char *name, snd_config_t *conf);
FA_HIDDEN const char *fa_format_name(unsigned format);

// ---- clock.c: the device's sample clock, pure functions of one stream ----

// One run of the device, from a start to its stop, with the stall (absolute CLOCK_MONOTONIC
// ns, empty when from == to) as it falls on this run.
struct fa_stream {
    int64_t start_ns;
    uint32_t rate;
    int64_t ppb;
    int64_t stall_from_ns, stall_to_ns;
    enum fa_stall_mode stall_mode;
};

// The true time of a sample: whole ns since boot plus a fraction of one.
struct fa_instant {
    int64_t ns;
    double fraction;
};

// Frames the device has captured by `now` (0 before the start).
FA_HIDDEN uint64_t fa_position(const struct fa_stream *stream, int64_t now);
// The first time at or after `from` when the position is at least `frames`; FA_NEVER when
// that is more than an hour away.
FA_HIDDEN int64_t fa_time_of_position(const struct fa_stream *stream, uint64_t frames, int64_t from);
// When sample `index` was taken; false when it was lost to the stall (its content is silence).
FA_HIDDEN bool fa_sample_time(const struct fa_stream *stream, uint64_t index, struct fa_instant *when);
// Frames of the stream that the stall took (whether they read as silence or never existed).
FA_HIDDEN uint64_t fa_stall_frames(const struct fa_stream *stream);

// ---- sound.c: what the microphone hears ----

// The sound at true time `when`, as a fraction of full scale: the tone plus, in the first
// beep_length after each whole second (+ beep_phase), the beep.
FA_HIDDEN double fa_sound(const struct fa_config *config, struct fa_instant when);
// Writes `frames` frames of the stream, from sample `first` on, into `areas` at `offset`.
FA_HIDDEN void fa_fill(const struct fa_config *config, const struct fa_stream *stream, snd_pcm_format_t format,
                       unsigned channels, const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t offset,
                       uint64_t first, snd_pcm_uframes_t frames);

// ---- microphone.c: what outlives a handle (per PCM name, for the life of the process) ----

enum { FA_MAX_RUNS = 32 };

// One run of the device as the report lists it.
struct fa_run {
    int64_t start_ns;
    uint64_t delivered;             // frames the client took (the highest appl_ptr seen)
    uint64_t captured;              // the position when the run ended
    const char *end;                // "running", "stop", "prepare", "overrun", "xrun", "unplug", "close"
};

struct fa_microphone {
    struct fa_config config;        // as the last open read it
    int64_t epoch_ns;               // -1 until known
    bool overrun_done[FA_MAX_OVERRUNS];
    bool unplug_seen;
    // Counts for the report.
    uint64_t opens, open_refusals, closes, open_handles, starts, prepares;
    uint64_t frames_delivered, frames_captured;
    uint64_t xruns, xruns_forced, stalls, stall_frames, unplugged_handles, opens_after_replug;
    int64_t first_open_ns, first_start_ns, last_start_ns, last_stop_ns;
    struct fa_run runs[FA_MAX_RUNS];     // the first FA_MAX_RUNS runs (`starts` counts all)
    // The last hw_params.
    unsigned rate, channels, format, access;
    uint64_t period_size, buffer_size;
};

FA_HIDDEN void fa_lock(void);
FA_HIDDEN void fa_unlock(void);
FA_HIDDEN int64_t fa_now_ns(void);
// The microphone `config` names, created on first use; NULL when the table is full. Lock held.
FA_HIDDEN struct fa_microphone *fa_microphone(const struct fa_config *config);
// The fault times as absolute CLOCK_MONOTONIC ns (FA_NEVER while the epoch is unknown or the
// fault is not asked for). Lock held.
FA_HIDDEN int64_t fa_absolute(const struct fa_microphone *microphone, int64_t offset_ns);
// True while the device is unplugged: after the unplug time and before the replug time.
FA_HIDDEN bool fa_absent(const struct fa_microphone *microphone, int64_t now);
FA_HIDDEN void fa_trace(const struct fa_microphone *microphone, const char *format, ...)
    __attribute__((format(printf, 2, 3)));

// ---- pcm.c: one open handle, and the ioplug callbacks ----

enum fa_condition { FA_FINE, FA_OVERRUN, FA_GONE };

struct fa_pcm {
    snd_pcm_ioplug_t io;
    struct fa_config config;
    struct fa_microphone *microphone;
    int timer_fd;
    int64_t opened_ns;
    enum fa_condition condition;
    bool running;
    struct fa_stream stream;
    int run;                        // index in microphone->runs, -1 when not listed
    bool stall_counted;
    uint64_t frozen;                // the position while not running
    uint64_t consumed;              // the highest appl_ptr seen in this run
    snd_pcm_uframes_t avail_min, stop_threshold;
};

FA_HIDDEN extern const snd_pcm_ioplug_callback_t fa_callbacks;

// ---- report.c ----

// Writes the microphone's report (its `report` path, "%p" → pid). Lock held.
FA_HIDDEN void fa_write_report(const struct fa_microphone *microphone, const char *when);
// Writes every microphone's report; for the exit of the process.
FA_HIDDEN void fa_write_all_reports(const char *when);

#endif
