#include "CAVFormat.h"

#include <dlfcn.h>
#include <syslog.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define VT_STRINGIFY_(x) #x
#define VT_STRINGIFY(x) VT_STRINGIFY_(x)
// The major versions the headers describe: a library of another major has another ABI.
#define VT_SONAME_FORMAT "libavformat.so." VT_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR)
#define VT_SONAME_CODEC "libavcodec.so." VT_STRINGIFY(LIBAVCODEC_VERSION_MAJOR)
#define VT_SONAME_UTIL "libavutil.so." VT_STRINGIFY(LIBAVUTIL_VERSION_MAJOR)
#define VT_SONAME_RESAMPLE "libswresample.so." VT_STRINGIFY(LIBSWRESAMPLE_VERSION_MAJOR)

// The libraries, in the order they are loaded: each one's own dependencies first.
enum { VT_UTIL, VT_RESAMPLE, VT_CODEC, VT_FORMAT, VT_LIBRARIES };
static const char *const sonames[VT_LIBRARIES] = {
    [VT_UTIL] = VT_SONAME_UTIL, [VT_RESAMPLE] = VT_SONAME_RESAMPLE,
    [VT_CODEC] = VT_SONAME_CODEC, [VT_FORMAT] = VT_SONAME_FORMAT,
};

static struct {
#define VT_FIELD(library, result, name, parameters, arguments) __typeof__(&name) name;
#define VT_FIELD_VOID(library, name, parameters, arguments) __typeof__(&name) name;
    VT_AV_FUNCTIONS(VT_FIELD, VT_FIELD_VOID)
#undef VT_FIELD
#undef VT_FIELD_VOID
} av;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];
// The library named in `failure`, or libavformat.
static const char *failed_library = VT_SONAME_FORMAT;

static void load(void) {
    void *handles[VT_LIBRARIES];
    for (int library = 0; library < VT_LIBRARIES; library++) {
        handles[library] = dlopen(sonames[library], RTLD_NOW | RTLD_LOCAL);
        if (!handles[library]) {
            const char *reason = dlerror();
            failed_library = sonames[library];
            snprintf(failure, sizeof failure, "%s", reason ? reason : "unknown error");
            return;
        }
    }
#define VT_RESOLVE(library, result, name, parameters, arguments)                                   \
    av.name = (__typeof__(av.name))dlsym(handles[VT_##library], #name);                           \
    if (!av.name) {                                                                                \
        failed_library = sonames[VT_##library];                                                    \
        snprintf(failure, sizeof failure, "%s has no %s", sonames[VT_##library], #name);           \
        return;                                                                                    \
    }
#define VT_RESOLVE_VOID(library, name, parameters, arguments) VT_RESOLVE(library, void, name, parameters, arguments)
    VT_AV_FUNCTIONS(VT_RESOLVE, VT_RESOLVE_VOID)
#undef VT_RESOLVE
#undef VT_RESOLVE_VOID
    // vtrecord reports what fails once, in its own words; FFmpeg's log stays quiet.
    av.av_log_set_level(AV_LOG_QUIET);
    // So does libsrt's, which libavformat's SRT protocol brings in and which logs to standard
    // error by itself (a refused handshake is three lines). Looked up through libavformat's
    // handle, which searches its dependencies; a build without SRT simply has none.
    void (*srt_log_level)(int) = (void (*)(int))dlsym(handles[VT_FORMAT], "srt_setloglevel");
    if (srt_log_level) srt_log_level(LOG_CRIT);
}

int vt_av_load(char *error, size_t size) {
    if (pthread_once(&once, load) != 0) {
        snprintf(failure, sizeof failure, "cannot load %s", VT_SONAME_FORMAT);
    }
    if (failure[0] == '\0') return 0;
    if (error && size > 0) snprintf(error, size, "%s", failure);
    return -1;
}

const char *vt_av_library_name(void) { return failed_library; }

#define VT_DEFINE(library, result, name, parameters, arguments)                                    \
    result vt_##name parameters { return av.name arguments; }
#define VT_DEFINE_VOID(library, name, parameters, arguments)                                       \
    void vt_##name parameters { av.name arguments; }
VT_AV_FUNCTIONS(VT_DEFINE, VT_DEFINE_VOID)
#undef VT_DEFINE
#undef VT_DEFINE_VOID

enum AVPixelFormat vt_get_format_vaapi(AVCodecContext *context, const enum AVPixelFormat *formats) {
    for (const enum AVPixelFormat *format = formats; *format != AV_PIX_FMT_NONE; format++) {
        if (*format == AV_PIX_FMT_VAAPI) return *format;
    }
    if (context->opaque) *(int *)context->opaque = 1;
    return AV_PIX_FMT_NONE;
}
