#ifndef VT_CX264_SHIM_H
#define VT_CX264_SHIM_H

// x264.h uses intN_t without including <stdint.h>.
#include <stdint.h>
#include <stdarg.h>
#include <stdio.h>
#include <x264.h>

// x264_encoder_open is a macro that pastes the build number onto the symbol; calling it from C
// keeps the Swift code independent of the installed x264 build.
static inline x264_t *vt_x264_encoder_open(x264_param_t *param) {
    return x264_encoder_open(param);
}

// x264's log callback receives a va_list, which Swift cannot format; the shim formats the
// message and hands the finished line to a plain callback.
typedef void (*vt_x264_log_fn)(void *context, int level, const char *message);

typedef struct vt_x264_log_sink {
    vt_x264_log_fn fn;
    void *context;
} vt_x264_log_sink;

static void vt_x264_log_trampoline(void *private_data, int level, const char *format, va_list args) {
    const vt_x264_log_sink *sink = (const vt_x264_log_sink *)private_data;
    char line[1024];
    int n = vsnprintf(line, sizeof line, format, args);
    if (n < 0) return;
    sink->fn(sink->context, level, line);
}

// Routes x264's messages to `sink`, which must outlive the encoder.
static inline void vt_x264_param_set_log(x264_param_t *param, vt_x264_log_sink *sink, int level) {
    param->pf_log = vt_x264_log_trampoline;
    param->p_log_private = sink;
    param->i_log_level = level;
}

// x264's preset and tune name tables are arrays ending in NULL; Swift sees them as tuples,
// so the shim indexes them.
static inline const char *vt_x264_preset_name(int index) {
    return x264_preset_names[index];
}
static inline const char *vt_x264_tune_name(int index) {
    return x264_tune_names[index];
}

#endif
