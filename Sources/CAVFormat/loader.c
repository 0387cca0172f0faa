#include "CAVFormat.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#define VT_STRINGIFY_(x) #x
#define VT_STRINGIFY(x) VT_STRINGIFY_(x)
// The major version the headers describe: a library of another major has another ABI.
#define VT_LIBAVFORMAT "libavformat.so." VT_STRINGIFY(LIBAVFORMAT_VERSION_MAJOR)

// Every FFmpeg function vtrecord calls; X(name) for each.
#define VT_AV_FUNCTIONS(X)                                                                        \
    X(avformat_open_input) X(avformat_find_stream_info) X(av_find_best_stream)                     \
    X(avformat_close_input) X(av_read_frame) X(avformat_seek_file) X(avformat_alloc_output_context2)                    \
    X(avformat_new_stream) X(avformat_write_header) X(av_write_frame) X(av_write_trailer)          \
    X(avformat_free_context) X(avio_alloc_context) X(avio_flush) X(avio_context_free)             \
    X(av_packet_alloc) X(av_packet_free) X(av_packet_unref) X(av_malloc) X(av_free)               \
    X(av_dict_set) X(av_log_set_level) X(av_strerror) X(av_mallocz)                              \
    X(avcodec_find_decoder) X(avcodec_alloc_context3) X(avcodec_open2) X(avcodec_free_context)    \
    X(avcodec_send_packet) X(avcodec_receive_frame) X(avcodec_flush_buffers) X(av_frame_alloc)    \
    X(av_frame_free) X(av_frame_unref) X(av_frame_move_ref) X(av_get_pix_fmt_name)                \
    X(av_hwdevice_ctx_create) X(av_buffer_ref) X(av_buffer_unref) X(av_hwframe_transfer_data)     \
    X(avcodec_find_encoder_by_name) X(avcodec_send_frame) X(avcodec_receive_packet)               \
    X(av_frame_get_buffer) X(av_frame_make_writable) X(av_channel_layout_default)                 \
    X(av_channel_layout_uninit) X(av_channel_layout_copy) X(avcodec_parameters_from_context)      \
    X(swr_alloc_set_opts2) X(swr_init) X(swr_free) X(swr_convert) X(swr_set_compensation)          \
    X(swr_inject_silence) X(swr_drop_output) X(swr_get_delay)

static struct {
#define VT_FIELD(name) __typeof__(&name) name;
    VT_AV_FUNCTIONS(VT_FIELD)
#undef VT_FIELD
} av;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static char failure[512];

static void load(void) {
    // The dependencies (libavcodec, libavutil) come with it; dlsym looks through them too, so
    // the decoder's functions are found through the same handle.
    void *library = dlopen(VT_LIBAVFORMAT, RTLD_NOW | RTLD_LOCAL);
    if (!library) {
        const char *reason = dlerror();
        snprintf(failure, sizeof failure, "%s", reason ? reason : VT_LIBAVFORMAT ": unknown error");
        return;
    }
#define VT_RESOLVE(name)                                                                           \
    av.name = (__typeof__(av.name))dlsym(library, #name);                                          \
    if (!av.name) {                                                                                \
        snprintf(failure, sizeof failure, "%s has no %s", VT_LIBAVFORMAT, #name);                  \
        return;                                                                                    \
    }
    VT_AV_FUNCTIONS(VT_RESOLVE)
#undef VT_RESOLVE
    // vtrecord reports what fails once, in its own words; FFmpeg's log stays quiet.
    av.av_log_set_level(AV_LOG_QUIET);
}

int vt_av_load(char *error, size_t size) {
    if (pthread_once(&once, load) != 0) {
        snprintf(failure, sizeof failure, "cannot load %s", VT_LIBAVFORMAT);
    }
    if (failure[0] == '\0') return 0;
    if (error && size > 0) snprintf(error, size, "%s", failure);
    return -1;
}

const char *vt_av_library_name(void) { return VT_LIBAVFORMAT; }

int vt_avformat_open_input(AVFormatContext **context, const char *url, const AVInputFormat *format,
                           AVDictionary **options) {
    return av.avformat_open_input(context, url, format, options);
}
int vt_avformat_find_stream_info(AVFormatContext *context, AVDictionary **options) {
    return av.avformat_find_stream_info(context, options);
}
int vt_av_find_best_stream(AVFormatContext *context, enum AVMediaType type, int wanted, int related,
                           const AVCodec **decoder, int flags) {
    return av.av_find_best_stream(context, type, wanted, related, decoder, flags);
}
void vt_avformat_close_input(AVFormatContext **context) { av.avformat_close_input(context); }
int vt_av_read_frame(AVFormatContext *context, AVPacket *packet) { return av.av_read_frame(context, packet); }
int vt_avformat_seek_file(AVFormatContext *context, int stream, int64_t earliest, int64_t target, int64_t latest,
                          int flags) {
    return av.avformat_seek_file(context, stream, earliest, target, latest, flags);
}
int vt_avformat_alloc_output_context2(AVFormatContext **context, const AVOutputFormat *format,
                                      const char *name, const char *filename) {
    return av.avformat_alloc_output_context2(context, format, name, filename);
}
AVStream *vt_avformat_new_stream(AVFormatContext *context, const AVCodec *codec) {
    return av.avformat_new_stream(context, codec);
}
int vt_avformat_write_header(AVFormatContext *context, AVDictionary **options) {
    return av.avformat_write_header(context, options);
}
int vt_av_write_frame(AVFormatContext *context, AVPacket *packet) { return av.av_write_frame(context, packet); }
int vt_av_write_trailer(AVFormatContext *context) { return av.av_write_trailer(context); }
void vt_avformat_free_context(AVFormatContext *context) { av.avformat_free_context(context); }
AVIOContext *vt_avio_alloc_context(unsigned char *buffer, int size, int writable, void *opaque,
                                   int (*read)(void *, uint8_t *, int),
                                   int (*write)(void *, uint8_t *, int),
                                   int64_t (*seek)(void *, int64_t, int)) {
    return av.avio_alloc_context(buffer, size, writable, opaque, read, write, seek);
}
void vt_avio_flush(AVIOContext *context) { av.avio_flush(context); }
void vt_avio_context_free(AVIOContext **context) { av.avio_context_free(context); }
AVPacket *vt_av_packet_alloc(void) { return av.av_packet_alloc(); }
void vt_av_packet_free(AVPacket **packet) { av.av_packet_free(packet); }
void vt_av_packet_unref(AVPacket *packet) { av.av_packet_unref(packet); }
void *vt_av_malloc(size_t size) { return av.av_malloc(size); }
void vt_av_free(void *pointer) { av.av_free(pointer); }
int vt_av_dict_set(AVDictionary **dictionary, const char *key, const char *value, int flags) {
    return av.av_dict_set(dictionary, key, value, flags);
}
void vt_av_strerror(int errnum, char *buffer, size_t size) {
    if (av.av_strerror(errnum, buffer, size) < 0) snprintf(buffer, size, "error %d", errnum);
}
void *vt_av_mallocz(size_t size) { return av.av_mallocz(size); }
const AVCodec *vt_avcodec_find_decoder(enum AVCodecID id) { return av.avcodec_find_decoder(id); }
AVCodecContext *vt_avcodec_alloc_context3(const AVCodec *codec) { return av.avcodec_alloc_context3(codec); }
int vt_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options) {
    return av.avcodec_open2(context, codec, options);
}
void vt_avcodec_free_context(AVCodecContext **context) { av.avcodec_free_context(context); }
int vt_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet) {
    return av.avcodec_send_packet(context, packet);
}
int vt_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame) {
    return av.avcodec_receive_frame(context, frame);
}
void vt_avcodec_flush_buffers(AVCodecContext *context) { av.avcodec_flush_buffers(context); }
AVFrame *vt_av_frame_alloc(void) { return av.av_frame_alloc(); }
void vt_av_frame_free(AVFrame **frame) { av.av_frame_free(frame); }
void vt_av_frame_unref(AVFrame *frame) { av.av_frame_unref(frame); }
void vt_av_frame_move_ref(AVFrame *destination, AVFrame *source) { av.av_frame_move_ref(destination, source); }
const char *vt_av_get_pix_fmt_name(enum AVPixelFormat format) { return av.av_get_pix_fmt_name(format); }
int vt_av_hwdevice_ctx_create(AVBufferRef **device, enum AVHWDeviceType type, const char *name,
                              AVDictionary *options, int flags) {
    return av.av_hwdevice_ctx_create(device, type, name, options, flags);
}
AVBufferRef *vt_av_buffer_ref(const AVBufferRef *buffer) { return av.av_buffer_ref(buffer); }
void vt_av_buffer_unref(AVBufferRef **buffer) { av.av_buffer_unref(buffer); }
int vt_av_hwframe_transfer_data(AVFrame *destination, const AVFrame *source, int flags) {
    return av.av_hwframe_transfer_data(destination, source, flags);
}

const AVCodec *vt_avcodec_find_encoder_by_name(const char *name) { return av.avcodec_find_encoder_by_name(name); }
int vt_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame) { return av.avcodec_send_frame(context, frame); }
int vt_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet) {
    return av.avcodec_receive_packet(context, packet);
}
int vt_av_frame_get_buffer(AVFrame *frame, int align) { return av.av_frame_get_buffer(frame, align); }
int vt_av_frame_make_writable(AVFrame *frame) { return av.av_frame_make_writable(frame); }
void vt_av_channel_layout_default(AVChannelLayout *layout, int channels) { av.av_channel_layout_default(layout, channels); }
void vt_av_channel_layout_uninit(AVChannelLayout *layout) { av.av_channel_layout_uninit(layout); }
int vt_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source) {
    return av.av_channel_layout_copy(destination, source);
}
int vt_avcodec_parameters_from_context(AVCodecParameters *parameters, const AVCodecContext *context) {
    return av.avcodec_parameters_from_context(parameters, context);
}
int vt_swr_alloc_set_opts2(struct SwrContext **context, const AVChannelLayout *out_layout,
                           enum AVSampleFormat out_format, int out_rate, const AVChannelLayout *in_layout,
                           enum AVSampleFormat in_format, int in_rate) {
    return av.swr_alloc_set_opts2(context, out_layout, out_format, out_rate, in_layout, in_format, in_rate, 0, NULL);
}
int vt_swr_init(struct SwrContext *context) { return av.swr_init(context); }
void vt_swr_free(struct SwrContext **context) { av.swr_free(context); }
int vt_swr_convert(struct SwrContext *context, uint8_t **out, int out_count, const uint8_t **in, int in_count) {
    return av.swr_convert(context, out, out_count, in, in_count);
}
int vt_swr_set_compensation(struct SwrContext *context, int delta, int distance) {
    return av.swr_set_compensation(context, delta, distance);
}
int vt_swr_inject_silence(struct SwrContext *context, int count) { return av.swr_inject_silence(context, count); }
int vt_swr_drop_output(struct SwrContext *context, int count) { return av.swr_drop_output(context, count); }
int64_t vt_swr_get_delay(struct SwrContext *context, int64_t base) { return av.swr_get_delay(context, base); }

enum AVPixelFormat vt_get_format_vaapi(AVCodecContext *context, const enum AVPixelFormat *formats) {
    for (const enum AVPixelFormat *format = formats; *format != AV_PIX_FMT_NONE; format++) {
        if (*format == AV_PIX_FMT_VAAPI) return *format;
    }
    if (context->opaque) *(int *)context->opaque = 1;
    return AV_PIX_FMT_NONE;
}
