// What the microphone hears: a function of true time (CLOCK_MONOTONIC), not of the sample
// index. A quiet tone, and a clicker that beeps in the first beep_length after each whole second
// (shifted by beep_phase). The beep starts at its crest, so the first sample taken at or after
// the whole second is already loud: a reader finds each onset to the exact sample.
//
// A recorder that stamps its samples right and corrects the clock's drift puts every beep on
// the whole second, whatever the ppm, however many samples an overrun or a stall lost.
#include "fake_alsa.h"

#include <math.h>

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__, "samples are written in host order as _LE formats");

static const long double two_pi = 6.283185307179586476925286766559L;

// sin(2π × hz × t) for t given as whole seconds, ns within the second and a fraction of a ns;
// split so the phase keeps its precision however long the machine has been up.
static double sine_at(double hz, int64_t seconds, int64_t ns, double fraction) {
    long double cycles = fmodl((long double)hz * (long double)seconds, 1.0L)
        + (long double)hz * ((long double)ns + fraction) / 1e9L;
    return (double)sinl(two_pi * cycles);
}

// White noise for an instant: a hash of its nanosecond, uniform in [-1, 1).
static double noise_at(int64_t ns) {
    uint64_t h = (uint64_t)ns * 0x9E3779B97F4A7C15ull;
    h ^= h >> 31;
    h *= 0xBF58476D1CE4E5B9ull;
    h ^= h >> 29;
    return (double)(h >> 11) / 4503599627370496.0 - 1.0;
}

double fa_sound(const struct fa_config *config, struct fa_instant when) {
    int64_t seconds = when.ns / FA_NS_PER_SECOND;
    double noise = config->noise_amplitude > 0 ? config->noise_amplitude * noise_at(when.ns) : 0;
    double value = config->tone_amplitude
        * sine_at(config->tone_hz, seconds, when.ns % FA_NS_PER_SECOND, when.fraction);
    int64_t since_beat = when.ns - config->beep_phase_ns;
    int64_t into_second = since_beat % FA_NS_PER_SECOND;
    if (into_second < 0) into_second += FA_NS_PER_SECOND;
    if (into_second < config->beep_length_ns) {
        long double cycles = (long double)config->beep_hz * ((long double)into_second + when.fraction) / 1e9L;
        value += config->beep_amplitude * (double)cosl(two_pi * cycles);
    }
    return value + noise;
}

static double clamp(double value) {
    return value > 1 ? 1 : value < -1 ? -1 : value;
}

// Full scale is 2^15 and 2^31, as most drivers and converters take it; the top value clips.
static void store(snd_pcm_format_t format, void *sample, double value) {
    switch (format) {
    case SND_PCM_FORMAT_S16_LE: {
        double scaled = nearbyint(value * 32768.0);
        *(int16_t *)sample = (int16_t)(scaled > 32767 ? 32767 : scaled);
        break;
    }
    case SND_PCM_FORMAT_S32_LE: {
        double scaled = nearbyint(value * 2147483648.0);
        *(int32_t *)sample = (int32_t)(scaled > 2147483647.0 ? 2147483647.0 : scaled);
        break;
    }
    case SND_PCM_FORMAT_FLOAT_LE:
        *(float *)sample = (float)value;
        break;
    default:
        break;
    }
}

void fa_fill(const struct fa_config *config, const struct fa_stream *stream, snd_pcm_format_t format,
             unsigned channels, const snd_pcm_channel_area_t *areas, snd_pcm_uframes_t offset,
             uint64_t first, snd_pcm_uframes_t frames) {
    for (snd_pcm_uframes_t i = 0; i < frames; i++) {
        struct fa_instant when;
        double value = fa_sample_time(stream, first + i, &when) ? clamp(fa_sound(config, when)) : 0;
        for (unsigned channel = 0; channel < channels; channel++) {
            const snd_pcm_channel_area_t *area = &areas[channel];
            size_t bit = area->first + (offset + i) * area->step;
            store(format, (uint8_t *)area->addr + bit / 8, value);
        }
    }
}
