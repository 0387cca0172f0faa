// A client that lives through an unplug as a recorder should, in one process: it records until
// the device fails, tries snd_pcm_recover and snd_pcm_prepare on the dead handle, closes it,
// then reopens the same PCM every 50 ms until it opens again, and records from the new handle.
// It proves the microphone's fault schedule outlives snd_pcm_close in a process.
//
//   reopen PCM RATE GIVE_UP_SECONDS
//
// One line per step on standard output, key=value, times as CLOCK_MONOTONIC ns:
//   opened at=T / read_error=ERRNO frames=N at=T / recover=R / prepare=R / refused=ERRNO at=T
//   (the first refusal) / refusals=N / reopened at=T / read=N. Exit status 0 when it recorded
//   again, 1 otherwise.
#define _GNU_SOURCE
#include <alsa/asoundlib.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long long now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (long long)now.tv_sec * 1000000000LL + now.tv_nsec;
}

static int open_microphone(snd_pcm_t **pcm, const char *name, unsigned rate) {
    int err = snd_pcm_open(pcm, name, SND_PCM_STREAM_CAPTURE, 0);
    if (err < 0) return err;
    err = snd_pcm_set_params(*pcm, SND_PCM_FORMAT_S16_LE, SND_PCM_ACCESS_RW_INTERLEAVED, 2, rate, 0, 500000);
    if (err < 0) snd_pcm_close(*pcm);
    return err;
}

int main(int argc, char **argv) {
    if (argc != 4) {
        fprintf(stderr, "usage: reopen PCM RATE GIVE_UP_SECONDS\n");
        return 2;
    }
    const char *name = argv[1];
    unsigned rate = (unsigned)atoi(argv[2]);
    long long give_up = now_ns() + atoll(argv[3]) * 1000000000LL;
    static int16_t frames[4800 * 2];
    setvbuf(stdout, NULL, _IOLBF, 0);

    snd_pcm_t *pcm;
    int err = open_microphone(&pcm, name, rate);
    if (err < 0) {
        printf("open=%d\n", err);
        return 1;
    }
    printf("opened at=%lld\n", now_ns());
    long long total = 0;
    snd_pcm_sframes_t got;
    while ((got = snd_pcm_readi(pcm, frames, 4800)) >= 0 || got == -EPIPE) {
        if (got == -EPIPE) {
            snd_pcm_recover(pcm, (int)got, 1);
            continue;
        }
        total += got;
        if (now_ns() > give_up) break;
    }
    printf("read_error=%ld frames=%lld at=%lld\n", (long)got, total, now_ns());
    printf("recover=%d\n", snd_pcm_recover(pcm, (int)got, 1));
    printf("prepare=%d\n", snd_pcm_prepare(pcm));
    snd_pcm_close(pcm);

    int refusals = 0;
    while ((err = open_microphone(&pcm, name, rate)) < 0) {
        if (refusals++ == 0) printf("refused=%d at=%lld\n", err, now_ns());
        if (now_ns() > give_up) {
            printf("refusals=%d\n", refusals);
            return 1;
        }
        struct timespec pause = {0, 50000000};
        nanosleep(&pause, NULL);
    }
    printf("refusals=%d\nreopened at=%lld\n", refusals, now_ns());
    got = snd_pcm_readi(pcm, frames, 4800);
    printf("read=%ld\n", (long)got);
    snd_pcm_close(pcm);
    return got == 4800 ? 0 : 1;
}
