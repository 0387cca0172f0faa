// What outlives one handle: each microphone (by PCM name) keeps its fault schedule, its epoch
// and its counts for the life of the process. alsa-lib keeps a plugin loaded after the last
// snd_pcm_close (its dlobj cache) but unloads it in snd_config_update_free_global(); the library
// is linked with -z nodelete so that even then this state stays, and a client that closes and
// reopens the device meets the same schedule.
#define DOUBLE_NAME "fake-alsa"
#include "fake_alsa.h"
#include "double_support.h"

#include <stdarg.h>
#include <time.h>

static pthread_mutex_t mutex = PTHREAD_MUTEX_INITIALIZER;
static struct fa_microphone microphones[FA_MAX_MICROPHONES];
static unsigned microphone_count;

void fa_lock(void) {
    double_lock(&mutex);
}

void fa_unlock(void) {
    double_unlock(&mutex);
}

int64_t fa_now_ns(void) {
    struct timespec now;
    clock_gettime(CLOCK_MONOTONIC, &now);
    return (int64_t)now.tv_sec * FA_NS_PER_SECOND + now.tv_nsec;
}

struct fa_microphone *fa_microphone(const struct fa_config *config) {
    struct fa_microphone *microphone = NULL;
    for (unsigned i = 0; i < microphone_count; i++) {
        if (strcmp(microphones[i].config.name, config->name) == 0) microphone = &microphones[i];
    }
    if (microphone == NULL) {
        if (microphone_count == FA_MAX_MICROPHONES) return NULL;
        microphone = &microphones[microphone_count++];
        microphone->epoch_ns = -1;
        microphone->first_open_ns = fa_now_ns();
        microphone->first_start_ns = -1;
        microphone->last_start_ns = -1;
        microphone->last_stop_ns = -1;
    }
    microphone->config = *config;
    if (config->epoch_ns >= 0) microphone->epoch_ns = config->epoch_ns;
    return microphone;
}

int64_t fa_absolute(const struct fa_microphone *microphone, int64_t offset_ns) {
    if (microphone->epoch_ns < 0 || offset_ns == FA_NEVER) return FA_NEVER;
    return microphone->epoch_ns + offset_ns;
}

bool fa_absent(const struct fa_microphone *microphone, int64_t now) {
    return now >= fa_absolute(microphone, microphone->config.unplug_ns)
        && now < fa_absolute(microphone, microphone->config.replug_ns);
}

void fa_trace(const struct fa_microphone *microphone, const char *format, ...) {
    if (!microphone->config.trace) return;
    char line[400];
    va_list arguments;
    va_start(arguments, format);
    vsnprintf(line, sizeof line, format, arguments);
    va_end(arguments);
    // Tracing must not change the errno the client sees.
    int saved = errno;
    dprintf(2, DOUBLE_NAME ": %s: %s\n", microphone->config.name, line);
    errno = saved;
}

void fa_write_all_reports(const char *when) {
    fa_lock();
    for (unsigned i = 0; i < microphone_count; i++) fa_write_report(&microphones[i], when);
    fa_unlock();
}

__attribute__((destructor)) static void write_reports_at_exit(void) {
    fa_write_all_reports("exit");
}
