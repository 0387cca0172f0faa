// The H264 format: the test pattern's I420 picture compressed with libx264, as a UVC H.264
// camera delivers it. Every frame is one access unit in Annex B; SPS and PPS come before every
// IDR; there are no B-frames, so decode order is display order and each picture given to the
// encoder comes straight back out. One encoder lives with the stream: it is opened at the first
// picture, closed at STREAMON (so a new stream starts with an IDR), STREAMOFF and when the
// stream's owner closes, and re-created when the picture size or the I period changes (the
// next picture is then an IDR).
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <string.h>
#include <x264.h>

static struct {
    x264_t *encoder;
    uint32_t width, height, i_period;
} h264;

void fv_h264_close(void) {
    if (h264.encoder != NULL) x264_encoder_close(h264.encoder);
    memset(&h264, 0, sizeof h264);
}

static bool open_encoder(uint32_t width, uint32_t height, uint32_t fps, uint32_t i_period) {
    fv_h264_close();
    x264_param_t param;
    if (x264_param_default_preset(&param, "ultrafast", "zerolatency") != 0) {
        fv_trace("x264_param_default_preset failed");
        return false;
    }
    param.i_threads = 1;
    param.i_width = (int)width;
    param.i_height = (int)height;
    param.i_csp = X264_CSP_I420;
    param.i_fps_num = fps > 0 ? fps : 30;
    param.i_fps_den = 1;
    param.i_keyint_max = (int)i_period;
    // A keyframe every i_period pictures and nowhere else, as a camera's fixed I period.
    param.i_scenecut_threshold = 0;
    param.i_bframe = 0;
    param.b_repeat_headers = 1;
    param.b_annexb = 1;
    param.i_log_level = X264_LOG_ERROR;
    if (x264_param_apply_profile(&param, "baseline") != 0) {
        fv_trace("x264_param_apply_profile(baseline) failed");
        return false;
    }
    h264.encoder = x264_encoder_open(&param);
    if (h264.encoder == NULL) {
        fv_trace("x264_encoder_open(%ux%u) failed", width, height);
        return false;
    }
    h264.width = width;
    h264.height = height;
    h264.i_period = i_period;
    return true;
}

size_t fv_h264_encode(uint8_t *y, uint8_t *u, uint8_t *v, uint32_t width, uint32_t height, uint32_t fps,
                      uint32_t i_period, uint32_t sequence, uint8_t *destination, size_t capacity) {
    if (h264.encoder == NULL || h264.width != width || h264.height != height || h264.i_period != i_period) {
        if (!open_encoder(width, height, fps, i_period)) return 0;
    }
    x264_picture_t input, output;
    x264_picture_init(&input);
    input.img.i_csp = X264_CSP_I420;
    input.img.i_plane = 3;
    input.img.plane[0] = y;
    input.img.plane[1] = u;
    input.img.plane[2] = v;
    input.img.i_stride[0] = (int)width;
    input.img.i_stride[1] = (int)(width / 2);
    input.img.i_stride[2] = (int)(width / 2);
    input.i_pts = sequence;
    x264_nal_t *nals;
    int nal_count;
    int size = x264_encoder_encode(h264.encoder, &nals, &nal_count, &input, &output);
    if (size < 0) {
        fv_trace("x264_encoder_encode failed for frame %u", sequence);
        return 0;
    }
    // zerolatency has no lookahead and no frame threads: a picture in is an access unit out.
    if (size == 0 || nal_count == 0) {
        fv_trace("x264 held frame %u back", sequence);
        return 0;
    }
    if ((size_t)size > capacity) {
        fv_trace("access unit of %d bytes does not fit a %zu-byte buffer", size, capacity);
        return 0;
    }
    // The NAL units of one call lie one after the other, start codes included.
    memcpy(destination, nals[0].p_payload, (size_t)size);
    return (size_t)size;
}
