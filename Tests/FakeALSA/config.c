// Reading a microphone's knobs (documented at the top of fake_alsa.c) from the arguments of its
// pcm definition. A knob that does not parse stops the process with a message: a test that
// sets one wrongly should fail loudly, not record from a microphone it did not ask for.
#define DOUBLE_NAME "fake-alsa"
#include "fake_alsa.h"
#include "double_support.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct knob {
    const char *pcm;
    const char *id;
};

static _Noreturn void bad(struct knob knob, const char *why) {
    char name[160];
    snprintf(name, sizeof name, "pcm.%s.%s", knob.pcm, knob.id);
    bad_knob(name, "…", why);
}

static double real_value(struct knob knob, snd_config_t *node) {
    double value;
    if (snd_config_get_ireal(node, &value) < 0) bad(knob, "expected a number");
    if (!isfinite(value)) bad(knob, "expected a finite number");
    return value;
}

static int64_t seconds_value(struct knob knob, snd_config_t *node, double minimum, double maximum) {
    double seconds = real_value(knob, node);
    if (seconds < minimum || seconds > maximum) bad(knob, "out of range");
    return (int64_t)llround(seconds * 1e9);
}

// A value or an array of values: `rates 48000` or `rates [ 44100 48000 ]`.
static unsigned each_value(struct knob knob, snd_config_t *node, unsigned capacity,
                           void (*take)(struct knob, snd_config_t *, unsigned, void *), void *destination) {
    if (snd_config_get_type(node) != SND_CONFIG_TYPE_COMPOUND) {
        take(knob, node, 0, destination);
        return 1;
    }
    unsigned count = 0;
    snd_config_iterator_t i, next;
    snd_config_for_each(i, next, node) {
        if (count == capacity) bad(knob, "too many values");
        take(knob, snd_config_iterator_entry(i), count++, destination);
    }
    if (count == 0) bad(knob, "no values");
    return count;
}

static void take_rate(struct knob knob, snd_config_t *node, unsigned index, void *destination) {
    long value;
    if (snd_config_get_integer(node, &value) < 0 || value < 1000 || value > 768000) {
        bad(knob, "rates are whole numbers from 1000 to 768000");
    }
    ((unsigned *)destination)[index] = (unsigned)value;
}

static void take_channels(struct knob knob, snd_config_t *node, unsigned index, void *destination) {
    long value;
    if (snd_config_get_integer(node, &value) < 0 || value < 1 || value > FA_MAX_CHANNELS) {
        bad(knob, "channel counts are from 1 to 8");
    }
    ((unsigned *)destination)[index] = (unsigned)value;
}

static void take_format(struct knob knob, snd_config_t *node, unsigned index, void *destination) {
    const char *text;
    if (snd_config_get_string(node, &text) < 0) bad(knob, "formats are strings");
    snd_pcm_format_t format = snd_pcm_format_value(text);
    if (format != SND_PCM_FORMAT_S16_LE && format != SND_PCM_FORMAT_S32_LE && format != SND_PCM_FORMAT_FLOAT_LE) {
        bad(knob, "formats are S16_LE, S32_LE and FLOAT_LE");
    }
    ((unsigned *)destination)[index] = (unsigned)format;
}

static void take_time(struct knob knob, snd_config_t *node, unsigned index, void *destination) {
    ((int64_t *)destination)[index] = seconds_value(knob, node, 0, 86400);
}

static int ascending(const void *a, const void *b) {
    unsigned x = *(const unsigned *)a, y = *(const unsigned *)b;
    return x < y ? -1 : x > y;
}

static void sort_unique(struct knob knob, unsigned *values, unsigned count) {
    qsort(values, count, sizeof values[0], ascending);
    for (unsigned i = 1; i < count; i++) {
        if (values[i] == values[i - 1]) bad(knob, "a value is given twice");
    }
}

static double amplitude(struct knob knob, snd_config_t *node) {
    double dbfs = real_value(knob, node);
    if (dbfs > 0) bad(knob, "levels are dBFS, at most 0");
    return pow(10, dbfs / 20);
}

static bool boolean(struct knob knob, snd_config_t *node) {
    int on = snd_config_get_bool(node);
    if (on < 0) bad(knob, "expected a boolean");
    return on != 0;
}

const char *fa_format_name(unsigned format) {
    return snd_pcm_format_name((snd_pcm_format_t)format);
}

void fa_read_config(struct fa_config *config, const char *name, snd_config_t *conf) {
    memset(config, 0, sizeof *config);
    snprintf(config->name, sizeof config->name, "%s", name != NULL ? name : "vtfake");
    config->rates[0] = 44100;
    config->rates[1] = 48000;
    config->rate_count = 2;
    config->channels[0] = 1;
    config->channels[1] = 2;
    config->channel_count = 2;
    config->formats[0] = SND_PCM_FORMAT_S16_LE;
    config->formats[1] = SND_PCM_FORMAT_S32_LE;
    config->formats[2] = SND_PCM_FORMAT_FLOAT_LE;
    config->format_count = 3;
    config->tone_hz = 440;
    config->tone_amplitude = pow(10, -20.0 / 20);
    config->beep_hz = 1000;
    config->beep_amplitude = pow(10, -3.0 / 20);
    config->beep_length_ns = 100000000;
    config->stall_ns = FA_NEVER;
    config->unplug_ns = FA_NEVER;
    config->replug_ns = FA_NEVER;
    config->epoch_ns = -1;

    snd_config_iterator_t i, next;
    snd_config_for_each(i, next, conf) {
        snd_config_t *node = snd_config_iterator_entry(i);
        const char *id;
        if (snd_config_get_id(node, &id) < 0) continue;
        // What alsa-lib reads itself (snd_pcm_conf_generic_id is not public).
        if (strcmp(id, "comment") == 0 || strcmp(id, "type") == 0 || strcmp(id, "hint") == 0) continue;
        struct knob knob = {config->name, id};
        if (strcmp(id, "rates") == 0) {
            config->rate_count = each_value(knob, node, FA_MAX_RATES, take_rate, config->rates);
            sort_unique(knob, config->rates, config->rate_count);
        } else if (strcmp(id, "channels") == 0) {
            config->channel_count = each_value(knob, node, FA_MAX_CHANNELS, take_channels, config->channels);
            sort_unique(knob, config->channels, config->channel_count);
        } else if (strcmp(id, "formats") == 0) {
            config->format_count = each_value(knob, node, FA_MAX_FORMATS, take_format, config->formats);
            sort_unique(knob, config->formats, config->format_count);
        } else if (strcmp(id, "ppm") == 0) {
            double ppm = real_value(knob, node);
            if (ppm <= -500000 || ppm >= 500000) bad(knob, "the clock's error must be within ±500000 ppm");
            config->ppb = llround(ppm * 1000);
        } else if (strcmp(id, "tone_frequency") == 0) {
            config->tone_hz = real_value(knob, node);
            if (config->tone_hz < 0 || config->tone_hz > 20000) bad(knob, "0 to 20000 Hz");
        } else if (strcmp(id, "tone_level") == 0) {
            config->tone_amplitude = amplitude(knob, node);
        } else if (strcmp(id, "beep_frequency") == 0) {
            config->beep_hz = real_value(knob, node);
            if (config->beep_hz < 0 || config->beep_hz > 20000) bad(knob, "0 to 20000 Hz");
        } else if (strcmp(id, "beep_level") == 0) {
            config->beep_amplitude = amplitude(knob, node);
        } else if (strcmp(id, "noise_level") == 0) {
            config->noise_amplitude = amplitude(knob, node);
        } else if (strcmp(id, "beep_length") == 0) {
            config->beep_length_ns = seconds_value(knob, node, 0, 0.999);
        } else if (strcmp(id, "beep_phase") == 0) {
            config->beep_phase_ns = seconds_value(knob, node, 0, 0.999999999);
        } else if (strcmp(id, "overruns") == 0) {
            config->overrun_count = each_value(knob, node, FA_MAX_OVERRUNS, take_time, config->overrun_ns);
        } else if (strcmp(id, "stall") == 0) {
            config->stall_ns = seconds_value(knob, node, 0, 86400);
        } else if (strcmp(id, "stall_length") == 0) {
            config->stall_length_ns = seconds_value(knob, node, 0.001, 3600);
        } else if (strcmp(id, "stall_mode") == 0) {
            const char *mode;
            if (snd_config_get_string(node, &mode) < 0) bad(knob, "\"jump\" or \"gap\"");
            if (strcmp(mode, "jump") == 0) {
                config->stall_mode = FA_STALL_JUMP;
            } else if (strcmp(mode, "gap") == 0) {
                config->stall_mode = FA_STALL_GAP;
            } else {
                bad(knob, "\"jump\" or \"gap\"");
            }
        } else if (strcmp(id, "unplug") == 0) {
            config->unplug_ns = seconds_value(knob, node, 0, 86400);
        } else if (strcmp(id, "replug") == 0) {
            config->replug_ns = seconds_value(knob, node, 0, 86400);
        } else if (strcmp(id, "epoch_ns") == 0) {
            long long epoch;
            if (snd_config_get_integer64(node, &epoch) < 0 || epoch < 0) {
                long small;
                if (snd_config_get_integer(node, &small) < 0 || small < 0) bad(knob, "CLOCK_MONOTONIC in ns");
                epoch = small;
            }
            config->epoch_ns = epoch;
        } else if (strcmp(id, "report") == 0) {
            const char *path;
            if (snd_config_get_string(node, &path) < 0) bad(knob, "expected a path");
            if (strlen(path) >= sizeof config->report) bad(knob, "too long");
            strcpy(config->report, path);
        } else if (strcmp(id, "monotonic") == 0) {
            config->monotonic = boolean(knob, node);
        } else if (strcmp(id, "trace") == 0) {
            config->trace = boolean(knob, node);
        } else {
            bad(knob, "unknown knob");
        }
    }
    struct knob whole = {config->name, "stall_length"};
    if ((config->stall_ns != FA_NEVER) != (config->stall_length_ns > 0)) bad(whole, "stall and stall_length go together");
    whole.id = "replug";
    if (config->replug_ns != FA_NEVER && config->replug_ns <= config->unplug_ns) bad(whole, "must come after unplug");
}
