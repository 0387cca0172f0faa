#ifndef VT_CAVFORMAT_H
#define VT_CAVFORMAT_H

// FFmpeg's libraries, loaded on first use instead of linked: libavformat (the MPEG-TS muxer,
// and the demuxers behind remux, inspect, verify and thumbnail), libavcodec (the H.264
// decoder behind the DecompressionSession, in software or through its VA-API hwaccel, and the
// sound encoders), libavutil and libswresample (the sound's conversion). libavformat brings
// in more than a hundred shared libraries (every codec FFmpeg is built with), and loading them
// cost every vtrecord run tens of milliseconds before its first frame, whether or not it used
// them.
//
// Call vt_av_load() before any vt_ function below; each of those calls the FFmpeg function of
// the same name without the prefix.
#include <stddef.h>
#include <stdint.h>
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>
#include <libavutil/frame.h>
#include <libavutil/pixdesc.h>
#include <libavutil/buffer.h>
#include <libavutil/hwcontext.h>
#include <libavutil/channel_layout.h>
#include <libavutil/samplefmt.h>
#include <libswresample/swresample.h>

#include "CAVFormatFunctions.h"

// Loads libavformat, libavcodec, libavutil and libswresample, each by its name and the major
// version these headers describe, once, thread-safely, and silences FFmpeg's own log. Returns
// 0, or -1 with what failed written to `error` (NUL-terminated, at most `size` bytes).
int vt_av_load(char *error, size_t size);

// The soname of the library that could not be loaded (for the package to name), else
// libavformat's: "libavformat.so.59".
const char *vt_av_library_name(void);

// vt_<name> for each function of CAVFormatFunctions.h.
#define VT_DECLARE(library, result, name, parameters, arguments) result vt_##name parameters;
#define VT_DECLARE_VOID(library, name, parameters, arguments) void vt_##name parameters;
VT_AV_FUNCTIONS(VT_DECLARE, VT_DECLARE_VOID)
#undef VT_DECLARE
#undef VT_DECLARE_VOID

static inline int vt_averror_eagain(void) { return AVERROR(EAGAIN); }

// The decoder's get_format for VA-API decoding (a C function, as libavcodec calls it): VA-API
// surfaces when libavcodec's hwaccel offers them; otherwise no format, so the picture fails
// rather than being decoded in software unseen, and `*(int *)context->opaque` (when set) is
// made 1 to say why.
enum AVPixelFormat vt_get_format_vaapi(AVCodecContext *context, const enum AVPixelFormat *formats);

// AVERROR(e) and the like are function-like macros; Swift sees only plain constants and functions.
static inline int vt_averror(int errnum) { return AVERROR(errnum); }
// The error libavformat is given when the custom I/O callbacks fail.
static inline int vt_averror_eio(void) { return AVERROR(EIO); }
static inline int vt_averror_eof(void) { return AVERROR_EOF; }
static inline int64_t vt_av_nopts_value(void) { return AV_NOPTS_VALUE; }

#endif
