#ifndef VT_CAVFORMAT_H
#define VT_CAVFORMAT_H

// FFmpeg's libavformat (the MPEG-TS muxer, and the demuxers behind remux and inspect) and
// libavcodec's H.264 decoder (the DecompressionSession, in software or through its VA-API
// hwaccel), loaded
// on first use instead of linked: libavformat brings in more than a hundred shared libraries
// (every codec FFmpeg is built with), and loading them cost every vtrecord run tens of
// milliseconds before its first frame, whether it wrote a raw stream or a transport stream.
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

// Loads libavformat (with libavcodec and libavutil) once, thread-safely, and silences FFmpeg's
// own log. Returns 0, or -1 with
// what failed written to `error` (NUL-terminated, at most `size` bytes).
int vt_av_load(char *error, size_t size);

// The soname loaded, for messages: "libavformat.so.59".
const char *vt_av_library_name(void);

int vt_avformat_open_input(AVFormatContext **context, const char *url, const AVInputFormat *format,
                           AVDictionary **options);
int vt_avformat_find_stream_info(AVFormatContext *context, AVDictionary **options);
int vt_av_find_best_stream(AVFormatContext *context, enum AVMediaType type, int wanted, int related,
                           const AVCodec **decoder, int flags);
void vt_avformat_close_input(AVFormatContext **context);
int vt_av_read_frame(AVFormatContext *context, AVPacket *packet);
int vt_avformat_seek_file(AVFormatContext *context, int stream, int64_t earliest, int64_t target, int64_t latest,
                          int flags);
int vt_avformat_alloc_output_context2(AVFormatContext **context, const AVOutputFormat *format,
                                      const char *name, const char *filename);
AVStream *vt_avformat_new_stream(AVFormatContext *context, const AVCodec *codec);
int vt_avformat_write_header(AVFormatContext *context, AVDictionary **options);
int vt_av_write_frame(AVFormatContext *context, AVPacket *packet);
int vt_av_write_trailer(AVFormatContext *context);
void vt_avformat_free_context(AVFormatContext *context);
AVIOContext *vt_avio_alloc_context(unsigned char *buffer, int size, int writable, void *opaque,
                                   int (*read)(void *, uint8_t *, int),
                                   int (*write)(void *, uint8_t *, int),
                                   int64_t (*seek)(void *, int64_t, int));
void vt_avio_flush(AVIOContext *context);
void vt_avio_context_free(AVIOContext **context);
AVPacket *vt_av_packet_alloc(void);
void vt_av_packet_free(AVPacket **packet);
void vt_av_packet_unref(AVPacket *packet);
void *vt_av_malloc(size_t size);
void vt_av_free(void *pointer);
int vt_av_dict_set(AVDictionary **dictionary, const char *key, const char *value, int flags);
void vt_av_strerror(int errnum, char *buffer, size_t size);
void *vt_av_mallocz(size_t size);
const AVCodec *vt_avcodec_find_decoder(enum AVCodecID id);
AVCodecContext *vt_avcodec_alloc_context3(const AVCodec *codec);
int vt_avcodec_open2(AVCodecContext *context, const AVCodec *codec, AVDictionary **options);
void vt_avcodec_free_context(AVCodecContext **context);
int vt_avcodec_send_packet(AVCodecContext *context, const AVPacket *packet);
int vt_avcodec_receive_frame(AVCodecContext *context, AVFrame *frame);
void vt_avcodec_flush_buffers(AVCodecContext *context);
AVFrame *vt_av_frame_alloc(void);
void vt_av_frame_free(AVFrame **frame);
void vt_av_frame_unref(AVFrame *frame);
void vt_av_frame_move_ref(AVFrame *destination, AVFrame *source);
const char *vt_av_get_pix_fmt_name(enum AVPixelFormat format);
int vt_av_hwdevice_ctx_create(AVBufferRef **device, enum AVHWDeviceType type, const char *name,
                              AVDictionary *options, int flags);
AVBufferRef *vt_av_buffer_ref(const AVBufferRef *buffer);
void vt_av_buffer_unref(AVBufferRef **buffer);
int vt_av_hwframe_transfer_data(AVFrame *destination, const AVFrame *source, int flags);

// Sound: the audio encoders (AAC, Opus, PCM) and libswresample, which converts the capture's
// samples to the encoder's format and rate and keeps the sound on the picture's clock
// (swr_set_compensation stretches or squeezes by a few samples a second, swr_inject_silence
// fills a gap, swr_drop_output drops an overlap). libswresample comes with libavcodec, so
// the same handle finds it.
const AVCodec *vt_avcodec_find_encoder_by_name(const char *name);
int vt_avcodec_send_frame(AVCodecContext *context, const AVFrame *frame);
int vt_avcodec_receive_packet(AVCodecContext *context, AVPacket *packet);
int vt_av_frame_get_buffer(AVFrame *frame, int align);
int vt_av_frame_make_writable(AVFrame *frame);
void vt_av_channel_layout_default(AVChannelLayout *layout, int channels);
void vt_av_channel_layout_uninit(AVChannelLayout *layout);
int vt_av_channel_layout_copy(AVChannelLayout *destination, const AVChannelLayout *source);
int vt_avcodec_parameters_from_context(AVCodecParameters *parameters, const AVCodecContext *context);
int vt_swr_alloc_set_opts2(struct SwrContext **context, const AVChannelLayout *out_layout,
                           enum AVSampleFormat out_format, int out_rate, const AVChannelLayout *in_layout,
                           enum AVSampleFormat in_format, int in_rate);
int vt_swr_init(struct SwrContext *context);
void vt_swr_free(struct SwrContext **context);
int vt_swr_convert(struct SwrContext *context, uint8_t **out, int out_count, const uint8_t **in, int in_count);
int vt_swr_set_compensation(struct SwrContext *context, int delta, int distance);
int vt_swr_inject_silence(struct SwrContext *context, int count);
int vt_swr_drop_output(struct SwrContext *context, int count);
int64_t vt_swr_get_delay(struct SwrContext *context, int64_t base);
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
