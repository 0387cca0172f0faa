#ifndef VT_CAVFORMAT_FUNCTIONS_H
#define VT_CAVFORMAT_FUNCTIONS_H

// Every FFmpeg function vtrecord calls, once: the header declares vt_<name> for each and the
// loader defines it (calling <name> through the pointer it resolved) from this list alone, so
// a new function is one line here. Each line gives the library that exports it, then its
// result, name, parameters and the arguments passed on, as FFmpeg's header declares them:
//   F(library, result, name, (parameters), (arguments))   a function with a result
//   V(library, name, (parameters), (arguments))           a function without one
// Libraries: FORMAT libavformat, CODEC libavcodec, UTIL libavutil, RESAMPLE libswresample.
#define VT_AV_FUNCTIONS(F, V)                                                                       \
    F(FORMAT, int, avformat_open_input,                                                             \
      (AVFormatContext **context, const char *url, const AVInputFormat *format, AVDictionary **options), \
      (context, url, format, options))                                                              \
    F(FORMAT, int, avformat_find_stream_info, (AVFormatContext *context, AVDictionary **options),   \
      (context, options))                                                                           \
    F(FORMAT, int, av_find_best_stream,                                                             \
      (AVFormatContext *context, enum AVMediaType type, int wanted, int related, const AVCodec **decoder, int flags), \
      (context, type, wanted, related, decoder, flags))                                             \
    V(FORMAT, avformat_close_input, (AVFormatContext **context), (context))                         \
    F(FORMAT, int, av_read_frame, (AVFormatContext *context, AVPacket *packet), (context, packet))   \
    F(FORMAT, int, avformat_seek_file,                                                              \
      (AVFormatContext *context, int stream, int64_t earliest, int64_t target, int64_t latest, int flags), \
      (context, stream, earliest, target, latest, flags))                                           \
    F(FORMAT, int, avformat_alloc_output_context2,                                                  \
      (AVFormatContext **context, const AVOutputFormat *format, const char *name, const char *filename), \
      (context, format, name, filename))                                                            \
    F(FORMAT, AVStream *, avformat_new_stream, (AVFormatContext *context, const AVCodec *codec), (context, codec)) \
    F(FORMAT, int, avformat_write_header, (AVFormatContext *context, AVDictionary **options), (context, options)) \
    F(FORMAT, int, av_write_frame, (AVFormatContext *context, AVPacket *packet), (context, packet)) \
    F(FORMAT, int, av_write_trailer, (AVFormatContext *context), (context))                         \
    V(FORMAT, avformat_free_context, (AVFormatContext *context), (context))                         \
    F(FORMAT, AVIOContext *, avio_alloc_context,                                                    \
      (unsigned char *buffer, int size, int writable, void *opaque, int (*read)(void *, uint8_t *, int), \
       int (*write)(void *, uint8_t *, int), int64_t (*seek)(void *, int64_t, int)),                \
      (buffer, size, writable, opaque, read, write, seek))                                          \
    V(FORMAT, avio_flush, (AVIOContext *context), (context))                                        \
    V(FORMAT, avio_context_free, (AVIOContext **context), (context))                                \
    F(FORMAT, int, avio_open2,                                                                      \
      (AVIOContext **context, const char *url, int flags, const AVIOInterruptCB *interrupt, AVDictionary **options), \
      (context, url, flags, interrupt, options))                                                    \
    F(FORMAT, int, avio_closep, (AVIOContext **context), (context))                                 \
    F(FORMAT, int, avformat_network_init, (void), ())                                               \
    F(CODEC, AVPacket *, av_packet_alloc, (void), ())                                               \
    V(CODEC, av_packet_free, (AVPacket **packet), (packet))                                         \
    V(CODEC, av_packet_unref, (AVPacket *packet), (packet))                                         \
    F(CODEC, const AVCodec *, avcodec_find_decoder, (enum AVCodecID id), (id))                     \
    F(CODEC, const AVCodec *, avcodec_find_encoder_by_name, (const char *name), (name))            \
    F(CODEC, AVCodecContext *, avcodec_alloc_context3, (const AVCodec *codec), (codec))            \
    F(CODEC, int, avcodec_open2, (AVCodecContext *context, const AVCodec *codec, AVDictionary **options), \
      (context, codec, options))                                                                    \
    V(CODEC, avcodec_free_context, (AVCodecContext **context), (context))                           \
    F(CODEC, int, avcodec_send_packet, (AVCodecContext *context, const AVPacket *packet), (context, packet)) \
    F(CODEC, int, avcodec_receive_frame, (AVCodecContext *context, AVFrame *frame), (context, frame)) \
    F(CODEC, int, avcodec_send_frame, (AVCodecContext *context, const AVFrame *frame), (context, frame)) \
    F(CODEC, int, avcodec_receive_packet, (AVCodecContext *context, AVPacket *packet), (context, packet)) \
    V(CODEC, avcodec_flush_buffers, (AVCodecContext *context), (context))                           \
    F(CODEC, int, avcodec_parameters_from_context,                                                  \
      (AVCodecParameters *parameters, const AVCodecContext *context), (parameters, context))        \
    F(UTIL, void *, av_malloc, (size_t size), (size))                                               \
    F(UTIL, void *, av_mallocz, (size_t size), (size))                                              \
    V(UTIL, av_free, (void *pointer), (pointer))                                                    \
    F(UTIL, int, av_dict_set, (AVDictionary **dictionary, const char *key, const char *value, int flags), \
      (dictionary, key, value, flags))                                                              \
    V(UTIL, av_dict_free, (AVDictionary **dictionary), (dictionary))                                \
    V(UTIL, av_log_set_level, (int level), (level))                                                 \
    F(UTIL, int, av_strerror, (int errnum, char *buffer, size_t size), (errnum, buffer, size))      \
    F(UTIL, AVFrame *, av_frame_alloc, (void), ())                                                  \
    V(UTIL, av_frame_free, (AVFrame **frame), (frame))                                              \
    V(UTIL, av_frame_unref, (AVFrame *frame), (frame))                                              \
    V(UTIL, av_frame_move_ref, (AVFrame *destination, AVFrame *source), (destination, source))      \
    F(UTIL, int, av_frame_get_buffer, (AVFrame *frame, int align), (frame, align))                 \
    F(UTIL, int, av_frame_make_writable, (AVFrame *frame), (frame))                                 \
    F(UTIL, const char *, av_get_pix_fmt_name, (enum AVPixelFormat format), (format))             \
    F(UTIL, int, av_hwdevice_ctx_create,                                                            \
      (AVBufferRef **device, enum AVHWDeviceType type, const char *name, AVDictionary *options, int flags), \
      (device, type, name, options, flags))                                                         \
    F(UTIL, AVBufferRef *, av_buffer_ref, (const AVBufferRef *buffer), (buffer))                   \
    V(UTIL, av_buffer_unref, (AVBufferRef **buffer), (buffer))                                      \
    F(UTIL, int, av_hwframe_transfer_data, (AVFrame *destination, const AVFrame *source, int flags), \
      (destination, source, flags))                                                                 \
    V(UTIL, av_channel_layout_default, (AVChannelLayout *layout, int channels), (layout, channels))  \
    V(UTIL, av_channel_layout_uninit, (AVChannelLayout *layout), (layout))                          \
    F(UTIL, int, av_channel_layout_copy, (AVChannelLayout *destination, const AVChannelLayout *source), \
      (destination, source))                                                                        \
    F(RESAMPLE, int, swr_alloc_set_opts2,                                                           \
      (struct SwrContext **context, AVChannelLayout *out_layout, enum AVSampleFormat out_format, int out_rate, \
       AVChannelLayout *in_layout, enum AVSampleFormat in_format, int in_rate, int log_offset, void *log_context), \
      (context, out_layout, out_format, out_rate, in_layout, in_format, in_rate, log_offset, log_context)) \
    F(RESAMPLE, int, swr_init, (struct SwrContext *context), (context))                             \
    V(RESAMPLE, swr_free, (struct SwrContext **context), (context))                                 \
    F(RESAMPLE, int, swr_convert,                                                                   \
      (struct SwrContext *context, uint8_t **out, int out_count, const uint8_t **in, int in_count), \
      (context, out, out_count, in, in_count))                                                      \
    F(RESAMPLE, int, swr_set_compensation, (struct SwrContext *context, int delta, int distance),  \
      (context, delta, distance))                                                                   \
    F(RESAMPLE, int, swr_inject_silence, (struct SwrContext *context, int count), (context, count)) \
    F(RESAMPLE, int, swr_drop_output, (struct SwrContext *context, int count), (context, count))   \
    F(RESAMPLE, int64_t, swr_get_delay, (struct SwrContext *context, int64_t base), (context, base))

#endif
