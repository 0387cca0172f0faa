// Reading the knobs (documented at the top of fake_va.c) from the environment. A knob that does
// not parse stops the process with a message: a test that sets one wrongly should fail loudly,
// not run against a driver it did not ask for.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-va"
#include "fake_va.h"
#include "double_support.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct word { const char *name; uint32_t bits; };

// "a,b,c" → the OR of each word's bits; "none" is allowed when `none_allowed`.
static uint32_t env_words(const char *name, const char *fallback, const struct word *words, size_t count,
                          bool none_allowed) {
    const char *value = getenv(name);
    if (value == NULL || *value == '\0') value = fallback;
    if (none_allowed && strcmp(value, "none") == 0) return 0;
    uint32_t bits = 0;
    const char *p = value;
    while (*p != '\0') {
        size_t length = strcspn(p, ",");
        bool known = false;
        for (size_t i = 0; i < count; i++) {
            if (strlen(words[i].name) == length && strncmp(p, words[i].name, length) == 0) {
                bits |= words[i].bits;
                known = true;
            }
        }
        if (!known) bad_knob(name, value, "unknown word");
        p += length;
        if (*p == ',') p++;
    }
    if (bits == 0) bad_knob(name, value, "nothing chosen");
    return bits;
}

// Decimal digits only (no sign, no spaces) up to `maximum`; `*p` moves past them. False when
// there are none or the number is too large.
static bool take_number(const char **p, unsigned maximum, unsigned *value) {
    const char *start = *p;
    unsigned long parsed = 0;
    for (; **p >= '0' && **p <= '9'; (*p)++) {
        parsed = parsed * 10 + (unsigned long)(**p - '0');
        if (parsed > maximum) return false;
    }
    if (*p == start) return false;
    *value = (unsigned)parsed;
    return true;
}

// FAKE_VA_LEVEL_MS=m1,m2,…,mn and FAKE_VA_BUSY=FROM-TO[xF]: the modelled engine's costs.
static void read_costs(struct fva_knobs *knobs) {
    const char *levels = getenv("FAKE_VA_LEVEL_MS");
    if (levels != NULL && *levels != '\0') {
        for (const char *p = levels;; p++) {
            if (knobs->level_ms_count == FVA_MAX_QUALITY) bad_knob("FAKE_VA_LEVEL_MS", levels, "more than 100 levels");
            if (!take_number(&p, 10000, &knobs->level_ms[knobs->level_ms_count++])) {
                bad_knob("FAKE_VA_LEVEL_MS", levels, "expected m1,m2,… with each in 0…10000 milliseconds");
            }
            if (*p == '\0') break;
            if (*p != ',') bad_knob("FAKE_VA_LEVEL_MS", levels, "expected m1,m2,… with each in 0…10000 milliseconds");
        }
        if (knobs->sync_ms > 0) {
            bad_knob("FAKE_VA_LEVEL_MS", levels, "FAKE_VA_SYNC_MS is set too: the two are different engines, choose one");
        }
    }
    const char *busy = getenv("FAKE_VA_BUSY");
    if (busy != NULL && *busy != '\0') {
        const char *p = busy;
        unsigned from, to, factor = 3;
        bool parsed = take_number(&p, 3600000, &from) && *p++ == '-' && take_number(&p, 3600000, &to);
        if (parsed && *p == 'x') {
            p++;
            parsed = take_number(&p, 100, &factor);
        }
        if (!parsed || *p != '\0' || from >= to || factor < 1) {
            bad_knob("FAKE_VA_BUSY", busy, "expected FROM-TO or FROM-TOxF in milliseconds, 0 ≤ FROM < TO ≤ 3600000, "
                                           "factor F 1…100");
        }
        if (knobs->level_ms_count == 0) {
            bad_knob("FAKE_VA_BUSY", busy, "needs FAKE_VA_LEVEL_MS: a busy window multiplies its costs");
        }
        knobs->busy_from_ms = from;
        knobs->busy_to_ms = to;
        knobs->busy_factor = factor;
    }
}

void fva_read_knobs(struct fva_knobs *knobs) {
    *knobs = (struct fva_knobs){0};
    static const struct word entrypoints[] = {{"slice", 1}, {"lp", 2}, {"vld", 4}};
    uint32_t entry = env_words("FAKE_VA_ENTRYPOINTS", "slice,lp,vld", entrypoints, 3, false);
    knobs->entry_slice = entry & 1;
    knobs->entry_lp = entry & 2;
    knobs->entry_vld = entry & 4;

    const char *decode_max = getenv("FAKE_VA_DECODE_MAX");
    knobs->decode_max_width = 4096;
    knobs->decode_max_height = 4096;
    if (decode_max != NULL && *decode_max != '\0') {
        unsigned width, height;
        char extra;
        if (sscanf(decode_max, "%ux%u%c", &width, &height, &extra) != 2 || width < 16 || width > 4096 || height < 16
            || height > 4096) {
            bad_knob("FAKE_VA_DECODE_MAX", decode_max, "expected WxH with each of W and H in 16…4096");
        }
        knobs->decode_max_width = width;
        knobs->decode_max_height = height;
    }

    static const struct word profiles[] = {{"baseline", 1}, {"main", 2}, {"high", 4}};
    uint32_t profile = env_words("FAKE_VA_PROFILES", "baseline,main,high", profiles, 3, false);
    knobs->profile_baseline = profile & 1;
    knobs->profile_main = profile & 2;
    knobs->profile_high = profile & 4;

    knobs->no_derive = env_unsigned("FAKE_VA_NO_DERIVE", 0, 0, 1) == 1;

    static const struct word packed[] = {
        {"sequence", VA_ENC_PACKED_HEADER_SEQUENCE}, {"picture", VA_ENC_PACKED_HEADER_PICTURE},
        {"slice", VA_ENC_PACKED_HEADER_SLICE}, {"raw", VA_ENC_PACKED_HEADER_MISC | VA_ENC_PACKED_HEADER_RAW_DATA},
    };
    knobs->packed_headers = env_words("FAKE_VA_PACKED_HEADERS", "sequence,picture,slice,raw", packed, 4, true);

    const char *refs = getenv("FAKE_VA_MAX_REFS");
    knobs->max_ref_l0 = 4;
    knobs->max_ref_l1 = 1;
    if (refs != NULL && *refs != '\0') {
        unsigned l0, l1;
        char extra;
        if (sscanf(refs, "%u,%u%c", &l0, &l1, &extra) != 2 || l0 < 1 || l0 > 16 || l1 > 16) {
            bad_knob("FAKE_VA_MAX_REFS", refs, "expected L0,L1 with 1 ≤ L0 ≤ 16 and L1 ≤ 16");
        }
        knobs->max_ref_l0 = l0;
        knobs->max_ref_l1 = l1;
    }

    static const struct word modes[] = {{"cqp", VA_RC_CQP}, {"cbr", VA_RC_CBR}, {"vbr", VA_RC_VBR}, {"icq", VA_RC_ICQ}};
    knobs->rc_modes = env_words("FAKE_VA_RC_MODES", "cqp,cbr,vbr", modes, 4, false);

    env_string("FAKE_VA_VENDOR", "vtrecord test driver 1.0", knobs->vendor, sizeof knobs->vendor);
    knobs->segments = (unsigned)env_unsigned("FAKE_VA_SEGMENTS", 1, 1, FVA_MAX_SEGMENTS);
    knobs->quality_range = (unsigned)env_unsigned("FAKE_VA_QUALITY_RANGE", 7, 1, FVA_MAX_QUALITY);
    knobs->max_slices = (unsigned)env_unsigned("FAKE_VA_MAX_SLICES", 8, 1, FVA_MAX_SLICES);
    knobs->coded_limit = (size_t)env_unsigned("FAKE_VA_CODED_LIMIT", 0, 0, UINT32_MAX);
    knobs->trace = env_unsigned("FAKE_VA_TRACE", 0, 0, 1) == 1;
    knobs->sync_ms = (unsigned)env_unsigned("FAKE_VA_SYNC_MS", 0, 0, 10000);
    read_costs(knobs);
    static const struct word failures[] = {
        {"vaCreateContext", FVA_FAIL_CREATE_CONTEXT}, {"vaPutImage", FVA_FAIL_PUT_IMAGE},
        {"vaEndPicture", FVA_FAIL_END_PICTURE},
    };
    knobs->fail = getenv("FAKE_VA_FAIL") == NULL ? 0 : env_words("FAKE_VA_FAIL", "", failures, 3, false);

    char report[PATH_MAX];
    env_string("FAKE_VA_REPORT", "", report, sizeof report);
    // "%p" → the process id, so several processes sharing one environment keep apart.
    char *percent = strstr(report, "%p");
    if (percent != NULL) {
        int length = snprintf(knobs->report, sizeof knobs->report, "%.*s%d%s", (int)(percent - report), report,
                              (int)getpid(), percent + 2);
        if (length < 0 || (size_t)length >= sizeof knobs->report) bad_knob("FAKE_VA_REPORT", report, "too long");
    } else {
        strcpy(knobs->report, report);
    }
}
