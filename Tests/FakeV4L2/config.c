// Reading the knobs (documented at the top of fake_v4l2.c) from the environment. A knob that
// does not parse stops the process with a message: a test that sets one wrongly should fail
// loudly, not run against a camera it did not ask for.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-v4l2"
#include "fake_v4l2.h"
#include "double_support.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <turbojpeg.h>
#include <unistd.h>

static int env_errno(const char *name) {
    static const struct { const char *name; int value; } names[] = {
        {"EACCES", EACCES}, {"EPERM", EPERM}, {"EBUSY", EBUSY}, {"ENOENT", ENOENT},
        {"ENODEV", ENODEV}, {"ENXIO", ENXIO}, {"EIO", EIO}, {"ENOMEM", ENOMEM},
    };
    const char *value = getenv(name);
    if (value == NULL || *value == '\0') return 0;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (strcmp(value, names[i].name) == 0) return names[i].value;
    }
    return (int)env_unsigned(name, 0, 1, 4095);
}

static uint32_t fourcc_named(const char *name, size_t length) {
    static const struct { const char *name; uint32_t fourcc; } known[] = {
        {"YUYV", V4L2_PIX_FMT_YUYV}, {"NV12", V4L2_PIX_FMT_NV12},
        {"YU12", V4L2_PIX_FMT_YUV420}, {"MJPG", V4L2_PIX_FMT_MJPEG},
        {"H264", V4L2_PIX_FMT_H264},
    };
    for (size_t i = 0; i < sizeof known / sizeof known[0]; i++) {
        if (length == 4 && strncmp(name, known[i].name, 4) == 0) return known[i].fourcc;
    }
    return 0;
}

// Parses "FOURCC:WxH@r/r,WxH@r;FOURCC:…" into the format table.
static void parse_formats(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_FORMATS";
    const char *p = text;
    config->format_count = 0;
    while (*p != '\0') {
        if (config->format_count == FV_MAX_FORMATS) bad_knob(knob, text, "too many formats");
        struct fv_format *format = &config->formats[config->format_count++];
        const char *colon = strchr(p, ':');
        if (colon == NULL) bad_knob(knob, text, "expected FOURCC:sizes");
        format->fourcc = fourcc_named(p, (size_t)(colon - p));
        if (format->fourcc == 0) bad_knob(knob, text, "unknown FOURCC (YUYV, NV12, YU12, MJPG, H264)");
        p = colon + 1;
        format->size_count = 0;
        for (;;) {
            if (format->size_count == FV_MAX_SIZES) bad_knob(knob, text, "too many sizes");
            struct fv_size *size = &format->sizes[format->size_count++];
            char *end;
            unsigned long width = strtoul(p, &end, 10);
            if (end == p || *end != 'x') bad_knob(knob, text, "expected WxH@fps");
            p = end + 1;
            unsigned long height = strtoul(p, &end, 10);
            if (end == p || *end != '@') bad_knob(knob, text, "expected WxH@fps");
            if (width < 64 || height < 64 || width > 8192 || height > 8192 || width % 2 || height % 2) {
                bad_knob(knob, text, "sizes must be even, from 64x64 to 8192x8192");
            }
            size->width = (uint32_t)width;
            size->height = (uint32_t)height;
            p = end + 1;
            size->rate_count = 0;
            for (;;) {
                if (size->rate_count == FV_MAX_RATES) bad_knob(knob, text, "too many rates");
                unsigned long rate = strtoul(p, &end, 10);
                if (end == p || rate == 0 || rate > 1000) bad_knob(knob, text, "rates are 1…1000 fps");
                size->rates[size->rate_count++] = (uint32_t)rate;
                p = end;
                if (*p != '/') break;
                p++;
            }
            if (*p != ',') break;
            p++;
        }
        if (*p == ';') {
            p++;
        } else if (*p != '\0') {
            bad_knob(knob, text, "formats are separated by ';'");
        }
    }
    if (config->format_count == 0) bad_knob(knob, text, "no formats");
}

// "N:F": from frame N on, frames come at F per second (F may be fractional).
static void parse_rate_change(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_RATE_CHANGE";
    config->rate_change_fps = 0;
    if (text == NULL || *text == '\0') return;
    char *end;
    errno = 0;
    unsigned long long frame = strtoull(text, &end, 10);
    if (errno != 0 || end == text || *end != ':' || text[0] == '-') bad_knob(knob, text, "expected FRAME:FPS");
    const char *rate = end + 1;
    config->rate_change_fps = strtod(rate, &end);
    if (end == rate || *end != '\0' || !(config->rate_change_fps > 0 && config->rate_change_fps <= 1000)) {
        bad_knob(knob, text, "the rate must be above 0, at most 1000");
    }
    config->rate_change_frame = frame;
}

// FAKE_V4L2_SIGNAL_AT=N[,N…]: frame sequences whose DQBUF sends the process SIGUSR1.
static void parse_signals(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_SIGNAL_AT";
    config->signal_count = 0;
    if (text == NULL || *text == '\0') return;
    const char *at = text;
    for (;;) {
        if (config->signal_count == FV_MAX_SIGNALS) bad_knob(knob, text, "at most 16 frames");
        char *end;
        errno = 0;
        unsigned long frame = strtoul(at, &end, 10);
        if (end == at || errno != 0 || frame > UINT32_MAX || (*end != ',' && *end != '\0')) {
            bad_knob(knob, text, "expected frame numbers separated by commas, such as 90,150");
        }
        config->signal_at[config->signal_count++] = (uint32_t)frame;
        if (*end == '\0') return;
        at = end + 1;
    }
}

// Reads "N:M…" of up to `count` numbers separated by ':' into `values`; the first `unsigned_count`
// are whole frame numbers, the rest may be signed. False when the text has another shape.
static bool parse_numbers(const char *text, long long *values, unsigned count, unsigned unsigned_count) {
    const char *at = text;
    for (unsigned i = 0; i < count; i++) {
        if (i < unsigned_count && !(*at >= '0' && *at <= '9')) return false;
        char *end;
        errno = 0;
        values[i] = strtoll(at, &end, 10);
        if (end == at || errno != 0 || values[i] > UINT32_MAX) return false;
        if (*end != (i + 1 < count ? ':' : '\0')) return false;
        at = end + 1;
    }
    return true;
}

// FAKE_V4L2_MOVER=START:END: the square crosses the picture in frames START…END-1.
static void parse_mover(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_MOVER";
    config->mover = false;
    if (text == NULL || *text == '\0') return;
    long long values[2];
    if (!parse_numbers(text, values, 2, 2)) bad_knob(knob, text, "expected START:END, frame numbers such as 30:90");
    if (values[0] >= values[1]) bad_knob(knob, text, "END must come after START");
    config->mover = true;
    config->mover_start = (uint32_t)values[0];
    config->mover_end = (uint32_t)values[1];
}

// FAKE_V4L2_LIGHT_RAMP=START:END:DELTA: the light shifts the scene's luma by DELTA over frames
// START…END (START = END: at once).
static void parse_light_ramp(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_LIGHT_RAMP";
    config->light_ramp = false;
    if (text == NULL || *text == '\0') return;
    long long values[3];
    if (!parse_numbers(text, values, 3, 2)) {
        bad_knob(knob, text, "expected START:END:DELTA, such as 30:120:40 or 30:120:-40");
    }
    if (values[0] > values[1]) bad_knob(knob, text, "END cannot come before START");
    if (values[2] == 0 || values[2] < -219 || values[2] > 219) bad_knob(knob, text, "DELTA is -219…219, not 0");
    config->light_ramp = true;
    config->light_start = (uint32_t)values[0];
    config->light_end = (uint32_t)values[1];
    config->light_delta = (int)values[2];
}

// FAKE_V4L2_BLINK=PERIOD:ON: a lamp lit in the first ON frames of every PERIOD.
static void parse_blink(const char *text, struct fv_config *config) {
    static const char *knob = "FAKE_V4L2_BLINK";
    config->blink = false;
    if (text == NULL || *text == '\0') return;
    long long values[2];
    if (!parse_numbers(text, values, 2, 2)) bad_knob(knob, text, "expected PERIOD:ON, frame counts such as 30:15");
    if (values[1] < 1 || values[1] >= values[0]) bad_knob(knob, text, "ON must be at least 1 and less than PERIOD");
    config->blink = true;
    config->blink_period = (uint32_t)values[0];
    config->blink_on = (uint32_t)values[1];
}

static const char *default_formats =
    "YUYV:640x480@30/15/5,1280x720@30/15/5,1920x1080@30/15/5;"
    "MJPG:640x480@30/15/5,1280x720@30/15/5,1920x1080@30/15/5;"
    "NV12:640x480@30/15/5,1280x720@30/15/5,1920x1080@30/15/5;"
    "YU12:640x480@30/15/5,1280x720@30/15/5,1920x1080@30/15/5";

// What a typical USB 2 webcam offers: uncompressed only where the bus has the bandwidth.
static const char *webcam_formats =
    "YUYV:640x480@30/15/5,1280x720@10/5,1920x1080@5;"
    "MJPG:640x480@30/15/5,1280x720@30/15/5,1920x1080@30/15/5";

void fv_read_config(struct fv_config *config) {
    env_string("FAKE_V4L2_DEVICE", "/dev/video0", config->device, sizeof config->device);
    if (config->device[0] != '/') bad_knob("FAKE_V4L2_DEVICE", config->device, "must be an absolute path");
    env_string("FAKE_V4L2_CARD", "Fake UVC Camera", config->card, sizeof config->card);
    const char *formats = getenv("FAKE_V4L2_FORMATS");
    if (formats == NULL || *formats == '\0') formats = default_formats;
    if (strcmp(formats, "webcam") == 0) formats = webcam_formats;
    parse_formats(formats, config);
    config->max_buffers = (unsigned)env_unsigned("FAKE_V4L2_MAX_BUFFERS", FV_MAX_BUFFERS, 1, FV_MAX_BUFFERS);
    config->unplug_after = env_unsigned("FAKE_V4L2_UNPLUG_AFTER", 0, 0, UINT32_MAX);
    const char *reconnect = getenv("FAKE_V4L2_RECONNECT_MS");
    config->reconnect_ns = (reconnect == NULL || *reconnect == '\0')
        ? -1 : (int64_t)env_unsigned("FAKE_V4L2_RECONNECT_MS", 0, 0, 3600000) * 1000000;
    const char *delivered = getenv("FAKE_V4L2_DELIVERED_FPS");
    if (delivered != NULL && *delivered != '\0') {
        char *end;
        config->delivered_fps = strtod(delivered, &end);
        if (*end != '\0' || !(config->delivered_fps > 0 && config->delivered_fps <= 1000)) {
            bad_knob("FAKE_V4L2_DELIVERED_FPS", delivered, "expected a rate above 0, at most 1000");
        }
    }
    config->jitter_us = (uint32_t)env_unsigned("FAKE_V4L2_JITTER_US", 0, 0, 10000000);
    config->drop_every = (uint32_t)env_unsigned("FAKE_V4L2_DROP_EVERY", 0, 0, UINT32_MAX);
    config->corrupt_jpeg_every = (uint32_t)env_unsigned("FAKE_V4L2_CORRUPT_JPEG_EVERY", 0, 0, UINT32_MAX);
    config->jpeg_hole_every = (uint32_t)env_unsigned("FAKE_V4L2_JPEG_HOLE_EVERY", 0, 0, UINT32_MAX);
    config->corrupt_h264_every = (uint32_t)env_unsigned("FAKE_V4L2_CORRUPT_H264_EVERY", 0, 0, UINT32_MAX);
    config->h264_hole_every = (uint32_t)env_unsigned("FAKE_V4L2_H264_HOLE_EVERY", 0, 0, UINT32_MAX);
    config->short_every = (uint32_t)env_unsigned("FAKE_V4L2_SHORT_EVERY", 0, 0, UINT32_MAX);
    config->error_every = (uint32_t)env_unsigned("FAKE_V4L2_ERROR_EVERY", 0, 0, UINT32_MAX);
    config->eio_after = env_unsigned("FAKE_V4L2_EIO_AFTER", 0, 0, UINT32_MAX);
    parse_rate_change(getenv("FAKE_V4L2_RATE_CHANGE"), config);
    config->timestamp_back_every = (uint32_t)env_unsigned("FAKE_V4L2_TIMESTAMP_BACK_EVERY", 0, 0, UINT32_MAX);
    config->timestamp_back_ns = (int64_t)env_unsigned("FAKE_V4L2_TIMESTAMP_BACK_MS", 50, 1, 3600000) * 1000000;
    config->timestamp_jump_every = (uint32_t)env_unsigned("FAKE_V4L2_TIMESTAMP_JUMP_EVERY", 0, 0, UINT32_MAX);
    config->timestamp_jump_ns = (int64_t)env_unsigned("FAKE_V4L2_TIMESTAMP_JUMP_MS", 500, 1, 3600000) * 1000000;
    fv_parse_pause(getenv("FAKE_V4L2_PAUSE_AT"), config);
    parse_signals(getenv("FAKE_V4L2_SIGNAL_AT"), config);
    config->pause_ns = (int64_t)env_unsigned("FAKE_V4L2_PAUSE_MS", 1000, 1, 600000) * 1000000;
    config->busy = env_unsigned("FAKE_V4L2_BUSY", 0, 0, 1) == 1;
    config->open_errno = env_errno("FAKE_V4L2_OPEN_ERRNO");
    config->not_capture = env_unsigned("FAKE_V4L2_NOT_CAPTURE", 0, 0, 1) == 1;
    uint64_t subsampling = env_unsigned("FAKE_V4L2_JPEG_SUBSAMPLING", 422, 420, 422);
    if (subsampling != 420 && subsampling != 422) {
        bad_knob("FAKE_V4L2_JPEG_SUBSAMPLING", getenv("FAKE_V4L2_JPEG_SUBSAMPLING"), "422 or 420");
    }
    config->jpeg_subsampling = subsampling == 420 ? TJSAMP_420 : TJSAMP_422;
    config->jpeg_quality = (int)env_unsigned("FAKE_V4L2_JPEG_QUALITY", 85, 1, 100);
    config->noise = (uint32_t)env_unsigned("FAKE_V4L2_NOISE", 0, 0, 64);
    config->still = env_unsigned("FAKE_V4L2_STILL", 0, 0, 1) == 1;
    parse_mover(getenv("FAKE_V4L2_MOVER"), config);
    parse_light_ramp(getenv("FAKE_V4L2_LIGHT_RAMP"), config);
    parse_blink(getenv("FAKE_V4L2_BLINK"), config);
    config->picture_ring = (uint32_t)env_unsigned("FAKE_V4L2_PICTURE_RING", 0, 0, 600);
    config->flash = env_unsigned("FAKE_V4L2_FLASH", 0, 0, 1) == 1;
    config->trace = env_unsigned("FAKE_V4L2_TRACE", 0, 0, 1) == 1;
    env_string("FAKE_V4L2_REPORT", "", config->report, sizeof config->report);
    env_string("FAKE_V4L2_STREAMON_FILE", "", config->streamon_file, sizeof config->streamon_file);
    env_string("FAKE_V4L2_LOCK_FILE", "", config->lock_file, sizeof config->lock_file);
}
