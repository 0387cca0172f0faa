#ifndef VT_CAVFORMAT_SHIM_H
#define VT_CAVFORMAT_SHIM_H

// FFmpeg's muxers (libavformat): Matroska and MPEG-TS output.
#include <libavformat/avformat.h>
#include <libavformat/avio.h>
#include <libavcodec/avcodec.h>
#include <libavutil/avutil.h>
#include <libavutil/dict.h>
#include <libavutil/error.h>
#include <libavutil/mem.h>

// AVERROR(e) is a function-like macro; Swift sees only plain constants and functions.
static inline int vt_averror(int errnum) { return AVERROR(errnum); }

// The error libavformat returns when the custom I/O callbacks fail.
static inline int vt_averror_eio(void) { return AVERROR(EIO); }

static inline int64_t vt_av_nopts_value(void) { return AV_NOPTS_VALUE; }

static inline int vt_averror_eof(void) { return AVERROR_EOF; }

// av_err2str is a macro around a compound literal.
static inline void vt_av_strerror(int errnum, char *buffer, size_t size) { av_strerror(errnum, buffer, size); }

#endif
