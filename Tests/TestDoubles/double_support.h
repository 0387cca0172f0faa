// What the test doubles (Tests/FakeV4L2, Tests/FakeVA, Tests/FakeALSA) share: reading their
// knobs from the environment, a lock that stops the process when it cannot be taken, and where
// a report goes. A double defines
// DOUBLE_NAME ("fake-v4l2", "fake-va") before including this, to name itself in messages.
//
// A knob that does not parse stops the process: a test that sets one wrongly should fail
// loudly, not run against a double it did not ask for.
#ifndef DOUBLE_SUPPORT_H
#define DOUBLE_SUPPORT_H

#ifndef DOUBLE_NAME
#error "define DOUBLE_NAME before including double_support.h"
#endif

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

// A report's path: `pattern` with "%p" replaced by the process id; false when it is empty or
// does not fit in `capacity` bytes.
static inline bool double_report_path(const char *pattern, char *path, size_t capacity) {
    size_t length = 0;
    for (const char *from = pattern; *from != '\0';) {
        int added;
        if (from[0] == '%' && from[1] == 'p') {
            added = snprintf(path + length, capacity - length, "%ld", (long)getpid());
            from += 2;
        } else {
            added = snprintf(path + length, capacity - length, "%c", *from);
            from += 1;
        }
        if (added < 0 || (size_t)added >= capacity - length) return false;
        length += (size_t)added;
    }
    return length > 0;
}

static inline _Noreturn void bad_knob(const char *name, const char *value, const char *why) {
    dprintf(2, DOUBLE_NAME ": %s=%s: %s\n", name, value, why);
    abort();
}

// An unsigned decimal knob in [minimum, maximum]; `fallback` when unset or empty.
static inline uint64_t env_unsigned(const char *name, uint64_t fallback, uint64_t minimum, uint64_t maximum) {
    const char *value = getenv(name);
    if (value == NULL || *value == '\0') return fallback;
    char *end;
    errno = 0;
    unsigned long long parsed = strtoull(value, &end, 10);
    if (errno != 0 || *end != '\0' || value[0] == '-') bad_knob(name, value, "not a whole number");
    if (parsed < minimum || parsed > maximum) bad_knob(name, value, "out of range");
    return parsed;
}

// A string knob copied into `destination`; `fallback` when unset or empty.
static inline void env_string(const char *name, const char *fallback, char *destination, size_t capacity) {
    const char *value = getenv(name);
    if (value == NULL || *value == '\0') value = fallback;
    if (strlen(value) >= capacity) bad_knob(name, value, "too long");
    strcpy(destination, value);
}

// One line on standard error (a trace), errno kept: tracing must not change what the client sees.
static inline void double_vprint(const char *format, va_list arguments) {
    int saved = errno;
    char line[512];
    int length = vsnprintf(line, sizeof line, format, arguments);
    if (length > 0) dprintf(2, DOUBLE_NAME ": %s\n", line);
    errno = saved;
}

static inline void double_lock(pthread_mutex_t *mutex) {
    int error = pthread_mutex_lock(mutex);
    if (error != 0) {
        dprintf(2, DOUBLE_NAME ": pthread_mutex_lock: %s\n", strerror(error));
        abort();
    }
}

static inline void double_unlock(pthread_mutex_t *mutex) {
    int error = pthread_mutex_unlock(mutex);
    if (error != 0) {
        dprintf(2, DOUBLE_NAME ": pthread_mutex_unlock: %s\n", strerror(error));
        abort();
    }
}

#endif
