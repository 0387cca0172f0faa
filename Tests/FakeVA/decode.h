// The decode side of a context (VAEntrypointVLD): the buffers of one picture as libavcodec's
// vaapi_h264.c renders them, and the decoding at vaEndPicture (decode.c).
#ifndef FAKE_VA_DECODE_H
#define FAKE_VA_DECODE_H

#include "fake_va.h"

// One slice: its parameters and its bytes of the slice data buffer, as rendered (a NAL unit
// from its header byte, emulation prevention bytes still in).
struct fva_decode_slice {
    VASliceParameterBufferH264 params;
    uint8_t *data;
    size_t size;
};

struct fva_decode {
    unsigned pictures;              // vaBeginPicture calls so far: the number in violation lines
    bool have_picture_params, have_iq_matrix;
    VAPictureParameterBufferH264 params;
    VAIQMatrixBufferH264 iq_matrix;
    struct fva_decode_slice *slices;
    unsigned slice_count, slice_capacity;
    // Slice parameters waiting for the slice data buffer they describe.
    VASliceParameterBufferH264 *pending;
    unsigned pending_count;
};

struct fva_decode *fva_decode_new(void);
void fva_decode_free(struct fva_decode *decode);
// vaBeginPicture: forget the last picture's buffers.
void fva_decode_begin(struct fva_decode *decode);
// vaRenderPicture of one buffer (already checked to be live, of this context and unmapped).
bool fva_decode_render(struct fva_decode *decode, const struct fva_buffer *buffer, VABufferID id);
// vaEndPicture: checks the picture's buffers and decodes it into the render target `target`.
VAStatus fva_decode_end(struct fva_driver *driver, struct fva_context *context, VASurfaceID target);
bool fva_decode_buffer_type(VABufferType type);

#endif
