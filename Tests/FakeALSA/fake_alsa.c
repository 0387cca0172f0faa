// A fake microphone for tests on machines without a sound card: an ALSA external PCM plugin
// (ioplug) of type "vtfake", capture only, so real clients (arecord, ffmpeg -f alsa, vtrecord)
// record from it through libasound unchanged. A test writes an ALSA configuration, points
// ALSA_CONFIG_PATH at it, and names the microphone like any PCM:
//
//   pcm_type.vtfake { lib "/abs/path/libasound_module_pcm_vtfake.so" }
//   pcm.fastmic {
//       type vtfake
//       ppm 50000
//       overruns [ 1.5 ]
//       report "/tmp/x/fastmic-%p.txt"
//       hint { show on description "Fast test microphone" }
//   }
//
// The microphone has a sample clock of its own that runs `ppm` fast (or slow) against
// CLOCK_MONOTONIC: a run started at t0 has captured floor((t − t0) × rate × (1 + ppm/1e6))
// frames by t (clock.c). What it hears is a function of true time (sound.c): sample n of the run
// is taken at t0 + n / (rate × (1 + ppm/1e6)), and carries a quiet tone plus a beep in the
// first beep_length after each whole second of CLOCK_MONOTONIC. A recorder that stamps samples
// right puts every beep on the whole second; one that counts samples drifts by the ppm.
//
// Positions are computed when asked (pointer, poll, status), so there is no thread. The poll
// descriptor is a timerfd set for when the client's avail_min will be reached, or for the next
// fault. Overruns are what the kernel makes of them: when the client lets avail reach the stop
// threshold (a full buffer unless the client changed it), the next look at the device finds it
// in XRUN, and reads fail with EPIPE until snd_pcm_prepare.
//
// Knobs (arguments of the pcm definition; times are seconds, as reals):
//
//   rates [44100 48000]        Rates offered (1000…768000; a single number is a list of one).
//   channels [1 2]             Channel counts offered (1…8). Every channel carries the same
//                              samples.
//   formats [S16_LE S32_LE FLOAT_LE]  Sample formats offered (a subset of those three).
//                              Interleaved access only, read/write or mmap. Full scale is 2^15,
//                              2^31 and 1.0.
//   ppm 0                      The sample clock's error against CLOCK_MONOTONIC, in parts per
//                              million (a real, within ±500000): +50000 captures 5 % more frames
//                              per second than the nominal rate.
//   tone_frequency 440         The tone, in Hz (0: none).
//   tone_level -20             Its peak level, dBFS.
//   beep_frequency 1000        The beep, in Hz. It starts at its crest, on the first sample
//                              taken at or after each whole second (+ beep_phase).
//   beep_level -3              Its peak level, dBFS.
//   beep_length 0.1            How long each beep lasts (< 1 s; 0: no beeps).
//   beep_phase 0               The beeps come this long after each whole second (< 1 s).
//   noise_level                White noise at this peak level, dBFS (none unless given), a
//                              function of the instant like the rest: a room's hiss, which
//                              codecs code as they would a real microphone's (a pure tone
//                              costs FFmpeg's AAC encoder twice what tone and noise do).
//   overruns [ 1.5 3 ]         At each of these times after the epoch, the run in progress
//                              overruns (XRUN: reads fail with EPIPE until snd_pcm_prepare). A
//                              time that passes while no run is in progress is skipped.
//   stall 1.0                  At this time after the epoch the device delivers nothing for
//   stall_length 0.5           stall_length: the position stays where it was. Once per process.
//   stall_mode "jump"          What follows a stall. jump: the position jumps to where the
//                              clock is and the frames it jumps over hold silence (the device
//                              heard nothing); a jump that fills the buffer is an overrun, as on
//                              real hardware. gap: the position goes on from where it stopped,
//                              the stall's samples never exist, and later samples are as much
//                              later in true time (what a USB device's lost packets do).
//   unplug 2.0                 From this time after the epoch the device is gone: handles
//                              opened before fail with ENODEV (state DISCONNECTED: reads,
//                              snd_pcm_prepare, snd_pcm_recover; poll reports POLLERR), and
//                              opening the PCM fails with ENODEV.
//   replug 4.0                 From this time on, opens work again (new handles only; handles
//                              broken by the unplug stay broken). Needs unplug.
//   epoch_ns N                 The epoch of the fault times, as CLOCK_MONOTONIC ns. Default:
//                              the first start of this microphone in the process (kept across
//                              close and reopen). Give it to share one schedule between
//                              processes, e.g. to see a second process's open refused.
//   report "/path/mic-%p.txt"  Written at every snd_pcm_close and at exit, "%p" being the
//                              process id: key=value lines (report.c) saying what the
//                              microphone did in this process.
//   monotonic false            Status and trigger timestamps default to CLOCK_MONOTONIC instead
//                              of gettimeofday. Either way a client can choose with
//                              snd_pcm_sw_params_set_tstamp_type, as on a real device. ioplug
//                              never sets SND_PCM_INFO_MONOTONIC, so arecord, believing the
//                              stamps are gettimeofday's, prints absurd overrun lengths when on.
//   trace false                Log every callback to standard error.
//
// The fault schedule, epoch and counts belong to the microphone's PCM name in one process; the
// library stays loaded once opened (see microphone.c). Not emulated: playback, pause, resume,
// channel maps, audio timestamps (status->audio_tstamp stays zero) and non-interleaved access.
//
// Files: this one opens the PCM and says what it offers; config.c reads the knobs, pcm.c is an
// open handle and its callbacks, clock.c the sample clock, sound.c what the microphone hears,
// microphone.c what outlives a handle, report.c the report. clients/ holds test clients.
#include "fake_alsa.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <unistd.h>

static unsigned format_bytes(unsigned format) {
    return (unsigned)snd_pcm_format_physical_width((snd_pcm_format_t)format) / 8;
}

// What the microphone offers. ioplug limits periods and buffers in bytes only, as a kernel
// driver does, so the limits are the bytes of 64 of the largest frames to 16384 of the smallest:
// every period is within 64…16384 frames (S16_LE stereo of the default microphone gets
// 128…8192). Buffers hold 2…1024 periods, up to one second of the largest frame at the highest
// rate (two seconds of S16_LE stereo).
static int set_constraints(struct fa_pcm *pcm) {
    const struct fa_config *config = &pcm->config;
    static const unsigned access[] = {SND_PCM_ACCESS_RW_INTERLEAVED, SND_PCM_ACCESS_MMAP_INTERLEAVED};
    unsigned smallest = 8, largest = 0;
    for (unsigned i = 0; i < config->format_count; i++) {
        unsigned bytes = format_bytes(config->formats[i]);
        if (bytes < smallest) smallest = bytes;
        if (bytes > largest) largest = bytes;
    }
    unsigned frame_min = smallest * config->channels[0];
    unsigned frame_max = largest * config->channels[config->channel_count - 1];
    unsigned top_rate = config->rates[config->rate_count - 1];
    int err;
    if ((err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_ACCESS, 2, access)) < 0
        || (err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_FORMAT, config->format_count,
                                                config->formats)) < 0
        || (err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_CHANNELS, config->channel_count,
                                                config->channels)) < 0
        || (err = snd_pcm_ioplug_set_param_list(&pcm->io, SND_PCM_IOPLUG_HW_RATE, config->rate_count,
                                                config->rates)) < 0
        || (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_PERIOD_BYTES, 64 * frame_max,
                                                  16384 * frame_min)) < 0
        || (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_PERIODS, 2, 1024)) < 0
        || (err = snd_pcm_ioplug_set_param_minmax(&pcm->io, SND_PCM_IOPLUG_HW_BUFFER_BYTES, 128 * frame_max,
                                                  top_rate * frame_max)) < 0) {
        return err;
    }
    return 0;
}

SND_PCM_PLUGIN_DEFINE_FUNC(vtfake) {
    (void)root;
    if (stream != SND_PCM_STREAM_CAPTURE) {
        SNDERR("vtfake: %s is a microphone: capture only", name != NULL ? name : "vtfake");
        return -ENOENT;
    }
    struct fa_pcm *pcm = calloc(1, sizeof *pcm);
    if (pcm == NULL) return -ENOMEM;
    fa_read_config(&pcm->config, name, conf);

    fa_lock();
    struct fa_microphone *microphone = fa_microphone(&pcm->config);
    if (microphone == NULL) {
        fa_unlock();
        free(pcm);
        SNDERR("vtfake: more than %d microphones in one process", FA_MAX_MICROPHONES);
        return -ENOMEM;
    }
    int64_t now = fa_now_ns();
    if (fa_absent(microphone, now)) {
        microphone->unplug_seen = true;
        microphone->open_refusals++;
        fa_write_report(microphone, "refused");
        fa_trace(microphone, "open refused: unplugged");
        fa_unlock();
        free(pcm);
        return -ENODEV;
    }
    fa_unlock();

    pcm->microphone = microphone;
    pcm->opened_ns = now;
    pcm->run = -1;
    pcm->timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (pcm->timer_fd < 0) {
        int err = -errno;
        free(pcm);
        return err;
    }
    pcm->io.version = SND_PCM_IOPLUG_VERSION;
    pcm->io.name = "vtrecord fake microphone";
    // Positions count from 0 at each prepare and never reach the boundary.
    pcm->io.flags = SND_PCM_IOPLUG_FLAG_BOUNDARY_WA;
    if (pcm->config.monotonic) pcm->io.flags |= SND_PCM_IOPLUG_FLAG_MONOTONIC;
    pcm->io.poll_fd = pcm->timer_fd;
    pcm->io.poll_events = POLLIN;
    pcm->io.callback = &fa_callbacks;
    pcm->io.private_data = pcm;
    int err = snd_pcm_ioplug_create(&pcm->io, name, stream, mode);
    if (err < 0) {
        close(pcm->timer_fd);
        free(pcm);
        return err;
    }
    // From here the close callback undoes the counts and frees the handle.
    fa_lock();
    microphone->opens++;
    microphone->open_handles++;
    if (now >= fa_absolute(microphone, pcm->config.replug_ns)) microphone->opens_after_replug++;
    fa_trace(microphone, "open");
    fa_unlock();
    err = set_constraints(pcm);
    if (err < 0) {
        snd_pcm_ioplug_delete(&pcm->io);
        return err;
    }
    *pcmp = pcm->io.pcm;
    return 0;
}

SND_PCM_PLUGIN_SYMBOL(vtfake);
