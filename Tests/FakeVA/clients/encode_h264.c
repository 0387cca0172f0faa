// A small, correct VA-API H.264 encoder client, to prove the fake driver before any real
// encoder is involved: it does its own reference bookkeeping (IPPP or IBP, two IDR periods),
// packs its own SPS, PPS and slice headers when the driver takes them, uploads a synthetic
// picture through vaDeriveImage (or vaCreateImage + vaPutImage when deriving fails), and writes
// what the driver coded. Given a fault, it feeds exactly one wrong value, so a test can see the
// driver catch it.
//
//   encode_h264 [--entropy cabac|cavlc] [--gop ippp|ibp] [--frames N] [--slices N]
//               [--rc cqp|cbr] [--poc-type 0|2] [--quality-levels N:L,…] [--timings]
//               [--fault NAME] OUTPUT
//
// Writes OUTPUT.h264 (the coded pictures, decode order) and OUTPUT.yuv (the input pictures,
// I420, display order). --quality-levels sends a VAEncMiscParameterTypeQualityLevel buffer with
// quality_level L along with picture N (decode order, from 0), for each N:L given, and nothing
// with the other pictures. --timings prints a line per picture on standard output,
//
//   timing: picture=N level=L submitted_min=A submitted_max=B took=T
//
// L the quality level in force (0 before any was sent); A and B (milliseconds) bound when the
// picture's vaEndPicture was called, counted from the first picture's vaEndPicture; T
// (milliseconds) from just before its vaEndPicture until its vaSyncSurface returned. A failed VA call prints "vaName: <error> (status 0xN)" and exits 1.
// Each coded buffer whose status has VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK prints
// "coded buffer overflow in picture N". The client does not look at EncMaxRefFrames, so with
// --gop ibp the driver's own check of it can be seen.
//
// Faults (at the third picture in decode order unless said otherwise): frame_num, poc
// (repeats the previous picture's POC), poc_lsb, idr_pic_id (the second IDR repeats the
// first's), ref_list (swaps RefPicList0[0] and [1]), ref_frames (leaves a used reference out of
// ReferenceFrames), slice_header (packed slice_qp_delta differs), sps (packed max_num_ref_frames
// differs), pps (packed pic_init_qp differs), rate_control (CBR with target_percentage 90), hrd
// (CBR without an HRD buffer), packed_type (an undeclared packed picture header), slice_qp (QP
// 56), recon_reuse (reconstructs into a surface holding a reference), slice_cover (the slices
// miss a macroblock).
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <va/va.h>
#include <va/va_drm.h>
#include <va/va_enc_h264.h>

enum { WIDTH = 176, HEIGHT = 144, RECON = 4, MAX_REFS = 2, GOP = 4, LOG2_MAX_FRAME_NUM = 4, LOG2_MAX_POC_LSB = 8,
       MAX_FRAMES = 64 };

static struct {
    bool cabac, bframes, cbr;
    unsigned poc_type;              // 0, or 2 (POC from frame_num; no B-frames)
    int frames, slices;
    int quality_level[MAX_FRAMES];  // sent with each picture (decode order); -1: none
    bool timings;
    const char *fault;
    const char *output;
} options = {.cabac = true, .frames = 8, .slices = 1, .fault = ""};

static VADisplay display;

static void check(VAStatus status, const char *call) {
    if (status == VA_STATUS_SUCCESS) return;
    fprintf(stderr, "%s: %s (status %#x)\n", call, vaErrorStr(status), status);
    exit(1);
}

static bool fault(const char *name) {
    return strcmp(options.fault, name) == 0;
}

// ---- bits, for the packed headers ----

struct bits {
    uint8_t data[256];
    size_t count;
};

static void put(struct bits *b, uint32_t value, unsigned n) {
    for (unsigned i = n; i > 0; i--) {
        if (b->count / 8 >= sizeof b->data) {
            fprintf(stderr, "packed header too long\n");
            exit(1);
        }
        uint8_t bit = (value >> (i - 1)) & 1;
        b->data[b->count / 8] = (uint8_t)(b->data[b->count / 8] | bit << (7 - b->count % 8));
        b->count++;
    }
}

static void put_ue(struct bits *b, uint32_t value) {
    unsigned length = 0;
    while (((uint64_t)value + 1) >> (length + 1)) length++;
    put(b, 0, length);
    put(b, value + 1, length + 1);
}

static void put_se(struct bits *b, int32_t value) {
    put_ue(b, value > 0 ? 2 * (uint32_t)value - 1 : 2 * (uint32_t)-value);
}

static void trailing(struct bits *b) {
    put(b, 1, 1);
    while (b->count % 8) put(b, 0, 1);
}

// Start code, then the NAL unit with emulation prevention when `escape`.
static void append_nal(struct bits *out, const struct bits *nal, bool escape) {
    put(out, 1, 32);
    size_t bytes = (nal->count + 7) / 8;
    unsigned zeros = 0;
    for (size_t i = 0; i < bytes; i++) {
        bool whole = i + 1 < bytes || nal->count % 8 == 0;
        if (escape && i > 0 && zeros >= 2 && nal->data[i] <= 3) {
            put(out, 3, 8);
            zeros = 0;
        }
        unsigned n = whole ? 8 : nal->count % 8;
        put(out, nal->data[i] >> (8 - n), n);
        zeros = nal->data[i] == 0 ? zeros + 1 : 0;
    }
}

// ---- the stream's state, as the client keeps it ----

struct picture {
    int display;            // display order
    bool idr, reference;
    int type;               // 0 P, 1 B, 2 I
    uint32_t frame_num;
    int32_t poc;
};

struct ref {
    VASurfaceID surface;
    uint32_t frame_num;
    int32_t poc;
};

static VASurfaceID input, recon[RECON];
static struct ref dpb[MAX_REFS];
static int dpb_count;
static uint32_t prev_ref_frame_num;
static int idr_count;
static VAConfigID config;
static VAContextID context;
static VABufferID coded;
static uint32_t packed_headers;     // what the driver takes, of SEQUENCE | SLICE

static int width_mbs(void) { return (WIDTH + 15) / 16; }
static int height_mbs(void) { return (HEIGHT + 15) / 16; }

// ---- parameter buffers ----

static VAEncSequenceParameterBufferH264 sequence_params(void) {
    VAEncSequenceParameterBufferH264 seq = {
        .seq_parameter_set_id = 0, .level_idc = 30, .intra_period = GOP, .intra_idr_period = GOP,
        .ip_period = options.bframes ? 2 : 1, .bits_per_second = options.cbr ? 1000000 : 0,
        .max_num_ref_frames = MAX_REFS, .picture_width_in_mbs = (uint16_t)width_mbs(),
        .picture_height_in_mbs = (uint16_t)height_mbs(),
        .vui_parameters_present_flag = 1, .num_units_in_tick = 1, .time_scale = 50,
    };
    seq.seq_fields.bits.chroma_format_idc = 1;
    seq.seq_fields.bits.frame_mbs_only_flag = 1;
    seq.seq_fields.bits.direct_8x8_inference_flag = 1;
    seq.seq_fields.bits.log2_max_frame_num_minus4 = LOG2_MAX_FRAME_NUM - 4;
    seq.seq_fields.bits.pic_order_cnt_type = options.poc_type;
    seq.seq_fields.bits.log2_max_pic_order_cnt_lsb_minus4 = LOG2_MAX_POC_LSB - 4;
    seq.vui_fields.bits.timing_info_present_flag = 1;
    seq.vui_fields.bits.fixed_frame_rate_flag = 1;
    return seq;
}

static void write_sps(struct bits *out, const VAEncSequenceParameterBufferH264 *seq) {
    struct bits b = {0};
    put(&b, 0x67, 8);
    put(&b, 77, 8);                 // Main
    put(&b, 0, 8);
    put(&b, seq->level_idc, 8);
    put_ue(&b, 0);
    put_ue(&b, LOG2_MAX_FRAME_NUM - 4);
    put_ue(&b, options.poc_type);
    if (options.poc_type == 0) put_ue(&b, LOG2_MAX_POC_LSB - 4);
    put_ue(&b, fault("sps") ? MAX_REFS + 1 : MAX_REFS);
    put(&b, 0, 1);
    put_ue(&b, (uint32_t)width_mbs() - 1);
    put_ue(&b, (uint32_t)height_mbs() - 1);
    put(&b, 1, 1);                  // frame_mbs_only_flag
    put(&b, 1, 1);                  // direct_8x8_inference_flag
    put(&b, 0, 1);                  // no cropping
    put(&b, 1, 1);                  // vui
    put(&b, 0, 4);                  // aspect, overscan, video signal, chroma loc: none
    put(&b, 1, 1);                  // timing
    put(&b, seq->num_units_in_tick, 32);
    put(&b, seq->time_scale, 32);
    put(&b, 1, 1);
    put(&b, 0, 4);                  // no HRD, no pic_struct, no bitstream restriction
    trailing(&b);
    append_nal(out, &b, false);
}

static void write_pps(struct bits *out, const VAEncPictureParameterBufferH264 *pic) {
    struct bits b = {0};
    put(&b, 0x68, 8);
    put_ue(&b, 0);
    put_ue(&b, 0);
    put(&b, pic->pic_fields.bits.entropy_coding_mode_flag, 1);
    put(&b, 0, 1);
    put_ue(&b, 0);
    put_ue(&b, pic->num_ref_idx_l0_active_minus1);
    put_ue(&b, pic->num_ref_idx_l1_active_minus1);
    put(&b, 0, 3);                  // no weighted prediction
    put_se(&b, (int32_t)pic->pic_init_qp - 26 + (fault("pps") ? 1 : 0));
    put_se(&b, 0);
    put_se(&b, 0);
    put(&b, 1, 1);                  // deblocking_filter_control_present_flag
    put(&b, 0, 2);
    trailing(&b);
    append_nal(out, &b, false);
}

static void write_slice_header(struct bits *out, const struct picture *p, const VAEncPictureParameterBufferH264 *pic,
                               const VAEncSliceParameterBufferH264 *slice) {
    struct bits b = {0};
    put(&b, (p->reference ? (p->idr ? 3u : 2u) : 0u) << 5 | (p->idr ? 5u : 1u), 8);
    put_ue(&b, slice->macroblock_address);
    put_ue(&b, slice->slice_type);
    put_ue(&b, 0);
    put(&b, pic->frame_num, LOG2_MAX_FRAME_NUM);
    if (p->idr) put_ue(&b, slice->idr_pic_id);
    if (options.poc_type == 0) put(&b, slice->pic_order_cnt_lsb, LOG2_MAX_POC_LSB);
    if (p->type == 1) put(&b, slice->direct_spatial_mv_pred_flag, 1);
    if (p->type != 2) {
        put(&b, 1, 1);              // num_ref_idx_active_override_flag
        put_ue(&b, slice->num_ref_idx_l0_active_minus1);
        if (p->type == 1) put_ue(&b, slice->num_ref_idx_l1_active_minus1);
        put(&b, 0, 1);              // ref_pic_list_modification_flag_l0
        if (p->type == 1) put(&b, 0, 1);
    }
    if (p->reference) {
        if (p->idr) {
            put(&b, 0, 2);
        } else {
            put(&b, 0, 1);          // sliding window
        }
    }
    if (options.cabac && p->type != 2) put_ue(&b, slice->cabac_init_idc);
    put_se(&b, slice->slice_qp_delta + (fault("slice_header") ? 1 : 0));
    put_ue(&b, slice->disable_deblocking_filter_idc);
    if (slice->disable_deblocking_filter_idc != 1) {
        put_se(&b, slice->slice_alpha_c0_offset_div2);
        put_se(&b, slice->slice_beta_offset_div2);
    }
    append_nal(out, &b, true);
}

static VAPictureH264 va_picture(const struct ref *ref) {
    return (VAPictureH264){.picture_id = ref->surface, .frame_idx = ref->frame_num,
                           .flags = VA_PICTURE_H264_SHORT_TERM_REFERENCE, .TopFieldOrderCnt = ref->poc,
                           .BottomFieldOrderCnt = ref->poc};
}

static VAPictureH264 no_picture(void) {
    return (VAPictureH264){.picture_id = VA_INVALID_SURFACE, .flags = VA_PICTURE_H264_INVALID};
}

static int by_frame_num_descending(const void *a, const void *b) {
    const struct ref *x = a, *y = b;
    return (int)y->frame_num - (int)x->frame_num;     // no wrap inside a GOP of 4
}

static int by_poc_descending(const void *a, const void *b) {
    const struct ref *x = a, *y = b;
    return y->poc - x->poc;
}

static int by_poc_ascending(const void *a, const void *b) {
    return -by_poc_descending(a, b);
}

static double now_ms(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        fprintf(stderr, "clock_gettime: %s\n", strerror(errno));
        exit(1);
    }
    return (double)now.tv_sec * 1e3 + (double)now.tv_nsec / 1e6;
}

static VABufferID buffer(VABufferType type, size_t size, const void *data) {
    VABufferID id;
    check(vaCreateBuffer(display, context, type, (unsigned)size, 1, (void *)data, &id), "vaCreateBuffer");
    return id;
}

static void packed(VABufferID *list, int *count, uint32_t type, const struct bits *b, bool escaped) {
    VAEncPackedHeaderParameterBuffer parameters = {.type = type, .bit_length = (uint32_t)b->count,
                                                   .has_emulation_bytes = escaped};
    list[(*count)++] = buffer(VAEncPackedHeaderParameterBufferType, sizeof parameters, &parameters);
    list[(*count)++] = buffer(VAEncPackedHeaderDataBufferType, (b->count + 7) / 8, b->data);
}

static void misc(VABufferID *list, int *count, VAEncMiscParameterType type, const void *data, size_t size) {
    uint8_t storage[sizeof(VAEncMiscParameterBuffer) + 64] = {0};
    VAEncMiscParameterBuffer *header = (VAEncMiscParameterBuffer *)storage;
    header->type = type;
    memcpy(header->data, data, size);
    list[(*count)++] = buffer(VAEncMiscParameterBufferType, sizeof(VAEncMiscParameterBuffer) + size, storage);
}

// ---- the input picture ----

static uint8_t luma(int x, int y, int frame) {
    if (y >= 32 && y < 40) return (uint8_t)(x % 4);       // runs of 00 00 01: emulation prevention
    return (uint8_t)(x * 3 + y * 2 + frame * 7);
}

static uint8_t chroma(int x, int y, int frame, int plane) {
    return (uint8_t)(plane ? y * 5 + frame * 3 : x * 4 + frame * 11);
}

static void upload(int frame, FILE *yuv) {
    VAImage image;
    bool derived = vaDeriveImage(display, input, &image) == VA_STATUS_SUCCESS;
    if (!derived) {
        VAImageFormat nv12 = {.fourcc = VA_FOURCC_NV12, .byte_order = VA_LSB_FIRST, .bits_per_pixel = 12};
        check(vaCreateImage(display, &nv12, WIDTH, HEIGHT, &image), "vaCreateImage");
    }
    uint8_t *data;
    check(vaMapBuffer(display, image.buf, (void **)&data), "vaMapBuffer");
    static uint8_t planes[WIDTH * HEIGHT * 3 / 2];
    for (int y = 0; y < HEIGHT; y++) {
        for (int x = 0; x < WIDTH; x++) {
            uint8_t value = luma(x, y, frame);
            data[image.offsets[0] + (size_t)y * image.pitches[0] + x] = value;
            planes[y * WIDTH + x] = value;
        }
    }
    for (int y = 0; y < HEIGHT / 2; y++) {
        for (int x = 0; x < WIDTH / 2; x++) {
            for (int plane = 0; plane < 2; plane++) {
                uint8_t value = chroma(x, y, frame, plane);
                data[image.offsets[1] + (size_t)y * image.pitches[1] + 2 * x + plane] = value;
                planes[WIDTH * HEIGHT + plane * WIDTH * HEIGHT / 4 + y * WIDTH / 2 + x] = value;
            }
        }
    }
    check(vaUnmapBuffer(display, image.buf), "vaUnmapBuffer");
    if (!derived) check(vaPutImage(display, input, image.image_id, 0, 0, WIDTH, HEIGHT, 0, 0, WIDTH, HEIGHT), "vaPutImage");
    check(vaDestroyImage(display, image.image_id), "vaDestroyImage");
    if (fwrite(planes, 1, sizeof planes, yuv) != sizeof planes) {
        fprintf(stderr, "write: %s\n", strerror(errno));
        exit(1);
    }
}

// ---- one picture ----

static VASurfaceID free_recon(void) {
    for (int i = 0; i < RECON; i++) {
        bool used = false;
        for (int j = 0; j < dpb_count; j++) used |= dpb[j].surface == recon[i];
        if (!used) return recon[i];
    }
    fprintf(stderr, "no free reconstructed surface\n");
    exit(1);
}

static void encode(const struct picture *p, int index, FILE *out) {
    bool faulty = index == 2;
    int32_t poc = p->poc;
    static int32_t previous_poc;
    if (faulty && fault("poc")) poc = previous_poc;
    previous_poc = poc;

    VABufferID list[64];
    int count = 0;
    VAEncSequenceParameterBufferH264 seq = sequence_params();
    if (p->idr) {
        list[count++] = buffer(VAEncSequenceParameterBufferType, sizeof seq, &seq);
        if (options.cbr) {
            VAEncMiscParameterRateControl rc = {.bits_per_second = 1000000, .target_percentage = 100,
                                                .window_size = 1000};
            if (fault("rate_control")) rc.target_percentage = 90;
            misc(list, &count, VAEncMiscParameterTypeRateControl, &rc, sizeof rc);
            VAEncMiscParameterHRD hrd = {.buffer_size = 1000000, .initial_buffer_fullness = 500000};
            if (!fault("hrd")) misc(list, &count, VAEncMiscParameterTypeHRD, &hrd, sizeof hrd);
        }
        VAEncMiscParameterFrameRate rate = {.framerate = 25};
        misc(list, &count, VAEncMiscParameterTypeFrameRate, &rate, sizeof rate);
    }

    VASurfaceID target = free_recon();
    if (faulty && fault("recon_reuse") && dpb_count > 0) target = dpb[0].surface;
    VAEncPictureParameterBufferH264 pic = {
        .CurrPic = {.picture_id = target, .frame_idx = p->frame_num, .TopFieldOrderCnt = poc, .BottomFieldOrderCnt = poc},
        .coded_buf = coded, .frame_num = (uint16_t)p->frame_num, .pic_init_qp = 26,
    };
    if (faulty && fault("frame_num")) pic.frame_num++, pic.CurrPic.frame_idx++;
    pic.pic_fields.bits.idr_pic_flag = p->idr;
    pic.pic_fields.bits.reference_pic_flag = p->reference;
    pic.pic_fields.bits.entropy_coding_mode_flag = options.cabac;
    pic.pic_fields.bits.deblocking_filter_control_present_flag = 1;
    for (int i = 0; i < 16; i++) pic.ReferenceFrames[i] = no_picture();
    int references = p->idr ? 0 : dpb_count;
    for (int i = 0; i < references; i++) pic.ReferenceFrames[i] = va_picture(&dpb[i]);
    if (faulty && fault("ref_frames") && references > 0) {
        // Leaves out the most recent reference, which every P and B picture uses.
        int newest = 0;
        for (int i = 1; i < references; i++) if (dpb[i].frame_num > dpb[newest].frame_num) newest = i;
        pic.ReferenceFrames[newest] = pic.ReferenceFrames[references - 1];
        pic.ReferenceFrames[references - 1] = no_picture();
    }

    // Reference lists in the default order (8.2.4.2).
    struct ref l0[MAX_REFS], l1[MAX_REFS];
    int n0 = 0, n1 = 0;
    if (p->type == 0) {
        memcpy(l0, dpb, sizeof dpb[0] * (size_t)dpb_count);
        n0 = dpb_count;
        qsort(l0, (size_t)n0, sizeof l0[0], by_frame_num_descending);
    } else if (p->type == 1) {
        for (int i = 0; i < dpb_count; i++) {
            if (dpb[i].poc < p->poc) l0[n0++] = dpb[i]; else l1[n1++] = dpb[i];
        }
        qsort(l0, (size_t)n0, sizeof l0[0], by_poc_descending);
        qsort(l1, (size_t)n1, sizeof l1[0], by_poc_ascending);
        n0 = n0 > 1 ? 1 : n0;
        n1 = n1 > 1 ? 1 : n1;
    }

    struct bits headers = {0};
    if (p->idr && (packed_headers & VA_ENC_PACKED_HEADER_SEQUENCE)) {
        // SPS and PPS apart and without emulation prevention, which the driver then adds: a
        // packed header without it is one NAL unit. (Slice headers come with it.)
        write_sps(&headers, &seq);
        packed(list, &count, VAEncPackedHeaderSequence, &headers, false);
        memset(&headers, 0, sizeof headers);
        write_pps(&headers, &pic);
        packed(list, &count, VAEncPackedHeaderSequence, &headers, false);
    }
    if (faulty && fault("packed_type")) {
        struct bits aud = {0};
        put(&aud, 1, 32);
        put(&aud, 0x09, 8);
        put(&aud, 0xf0, 8);
        packed(list, &count, VAEncPackedHeaderPicture, &aud, true);
    }
    list[count++] = buffer(VAEncPictureParameterBufferType, sizeof pic, &pic);

    int total = width_mbs() * height_mbs();
    for (int s = 0; s < options.slices; s++) {
        int first = total * s / options.slices, end = total * (s + 1) / options.slices;
        VAEncSliceParameterBufferH264 slice = {
            .macroblock_address = (uint32_t)first, .num_macroblocks = (uint32_t)(end - first),
            .slice_type = (uint8_t)p->type, .idr_pic_id = (uint16_t)(idr_count - 1),
            .pic_order_cnt_lsb = (uint16_t)(options.poc_type == 0 ? poc % (1 << LOG2_MAX_POC_LSB) : 0),
            .direct_spatial_mv_pred_flag = 1,
            .num_ref_idx_active_override_flag = 1,
        };
        if (fault("idr_pic_id") && p->idr && idr_count == 2) slice.idr_pic_id = 0;
        if (faulty && fault("poc_lsb")) slice.pic_order_cnt_lsb += 2;
        if (faulty && fault("slice_qp")) slice.slice_qp_delta = 30;
        if (faulty && fault("slice_cover") && s + 1 == options.slices) slice.num_macroblocks--;
        for (int i = 0; i < 32; i++) slice.RefPicList0[i] = slice.RefPicList1[i] = no_picture();
        for (int i = 0; i < n0; i++) slice.RefPicList0[i] = va_picture(&l0[i]);
        for (int i = 0; i < n1; i++) slice.RefPicList1[i] = va_picture(&l1[i]);
        if (faulty && fault("ref_list") && n0 > 1) {
            VAPictureH264 first_ref = slice.RefPicList0[0];
            slice.RefPicList0[0] = slice.RefPicList0[1];
            slice.RefPicList0[1] = first_ref;
        }
        slice.num_ref_idx_l0_active_minus1 = (uint8_t)(n0 > 0 ? n0 - 1 : 0);
        slice.num_ref_idx_l1_active_minus1 = (uint8_t)(n1 > 0 ? n1 - 1 : 0);
        if (packed_headers & VA_ENC_PACKED_HEADER_SLICE) {
            struct bits header = {0};
            write_slice_header(&header, p, &pic, &slice);
            packed(list, &count, VAEncPackedHeaderSlice, &header, true);
        }
        list[count++] = buffer(VAEncSliceParameterBufferType, sizeof slice, &slice);
    }

    static unsigned level_in_force;
    if (options.quality_level[index] >= 0) {
        VAEncMiscParameterBufferQualityLevel quality = {.quality_level = (uint32_t)options.quality_level[index]};
        misc(list, &count, VAEncMiscParameterTypeQualityLevel, &quality, sizeof quality);
        level_in_force = quality.quality_level;
    }

    check(vaBeginPicture(display, context, input), "vaBeginPicture");
    check(vaRenderPicture(display, context, list, count), "vaRenderPicture");
    double before = now_ms();
    check(vaEndPicture(display, context), "vaEndPicture");
    double after = now_ms();
    check(vaSyncSurface(display, input), "vaSyncSurface");
    if (options.timings) {
        static double first_before, first_after;
        if (index == 0) first_before = before, first_after = after;
        printf("timing: picture=%d level=%u submitted_min=%.3f submitted_max=%.3f took=%.3f\n", index, level_in_force,
               before - first_after, after - first_before, now_ms() - before);
    }
    for (int i = 0; i < count; i++) check(vaDestroyBuffer(display, list[i]), "vaDestroyBuffer");

    VACodedBufferSegment *segment;
    check(vaMapBuffer(display, coded, (void **)&segment), "vaMapBuffer");
    for (; segment != NULL; segment = segment->next) {
        if (segment->status & VA_CODED_BUF_STATUS_SLICE_OVERFLOW_MASK) {
            fprintf(stderr, "coded buffer overflow in picture %d\n", index);
        }
        if (fwrite(segment->buf, 1, segment->size, out) != segment->size) {
            fprintf(stderr, "write: %s\n", strerror(errno));
            exit(1);
        }
    }
    check(vaUnmapBuffer(display, coded), "vaUnmapBuffer");

    if (p->reference) {
        if (p->idr) dpb_count = 0;
        if (dpb_count == MAX_REFS) {
            int oldest = 0;
            for (int i = 1; i < dpb_count; i++) if (dpb[i].frame_num < dpb[oldest].frame_num) oldest = i;
            dpb[oldest] = dpb[--dpb_count];
        }
        dpb[dpb_count++] = (struct ref){target, p->frame_num, p->poc};
        prev_ref_frame_num = p->frame_num;
    }
}

// Decode order: each GOP of GOP frames starts with an IDR; with B-frames each P is followed by
// the B before it.
static int plan(struct picture *pictures) {
    int n = 0;
    for (int start = 0; start < options.frames; start += GOP) {
        int end = start + GOP < options.frames ? start + GOP : options.frames;
        pictures[n++] = (struct picture){.display = start, .idr = true, .reference = true, .type = 2};
        int next = start + 1;
        while (next < end) {
            if (options.bframes && next + 1 < end) {
                pictures[n++] = (struct picture){.display = next + 1, .reference = true, .type = 0};
                pictures[n++] = (struct picture){.display = next, .reference = false, .type = 1};
                next += 2;
            } else {
                pictures[n++] = (struct picture){.display = next, .reference = true, .type = 0};
                next++;
            }
        }
    }
    // frame_num and POC, as the client's bookkeeping assigns them.
    uint32_t ref_frame_num = 0;
    int idr_display = 0;
    for (int i = 0; i < n; i++) {
        if (pictures[i].idr) {
            pictures[i].frame_num = 0;
            idr_display = pictures[i].display;
        } else {
            pictures[i].frame_num = (ref_frame_num + 1) % (1u << LOG2_MAX_FRAME_NUM);
        }
        if (pictures[i].reference) ref_frame_num = pictures[i].frame_num;
        // Type 2 counts frame_num (no wrap within a GOP); with only reference pictures it is the
        // same as type 0's display order.
        pictures[i].poc = options.poc_type == 2 ? 2 * (int32_t)pictures[i].frame_num
                                                : 2 * (pictures[i].display - idr_display);
    }
    return n;
}

// "N:L,N:L,…" into options.quality_level; false when it does not parse.
static bool parse_quality_levels(const char *text) {
    for (const char *p = text;;) {
        char *end;
        errno = 0;
        long picture = strtol(p, &end, 10);
        if (errno != 0 || end == p || *end != ':' || picture < 0 || picture >= MAX_FRAMES) return false;
        p = end + 1;
        long level = strtol(p, &end, 10);
        if (errno != 0 || end == p || level < 0 || level > 100) return false;
        options.quality_level[picture] = (int)level;
        p = end;
        if (*p == '\0') return true;
        if (*p++ != ',') return false;
    }
}

static void parse(int argc, char **argv) {
    for (int i = 0; i < MAX_FRAMES; i++) options.quality_level[i] = -1;
    bool quality_parsed = true;
    for (int i = 1; i < argc; i++) {
        const char *value = i + 1 < argc ? argv[i + 1] : NULL;
        if (strcmp(argv[i], "--entropy") == 0 && value) {
            options.cabac = strcmp(value, "cabac") == 0;
        } else if (strcmp(argv[i], "--gop") == 0 && value) {
            options.bframes = strcmp(value, "ibp") == 0;
        } else if (strcmp(argv[i], "--frames") == 0 && value) {
            options.frames = atoi(value);
        } else if (strcmp(argv[i], "--slices") == 0 && value) {
            options.slices = atoi(value);
        } else if (strcmp(argv[i], "--rc") == 0 && value) {
            options.cbr = strcmp(value, "cbr") == 0;
        } else if (strcmp(argv[i], "--poc-type") == 0 && value) {
            options.poc_type = (unsigned)atoi(value);
        } else if (strcmp(argv[i], "--quality-levels") == 0 && value) {
            quality_parsed = parse_quality_levels(value);
        } else if (strcmp(argv[i], "--timings") == 0) {
            options.timings = true;
            continue;
        } else if (strcmp(argv[i], "--fault") == 0 && value) {
            options.fault = value;
        } else if (argv[i][0] != '-' && options.output == NULL) {
            options.output = argv[i];
            continue;
        } else {
            options.output = NULL;
            break;
        }
        i++;
    }
    if (options.output == NULL || options.frames < 1 || options.frames > MAX_FRAMES || options.slices < 1
        || options.slices > 8 || (options.poc_type != 0 && options.poc_type != 2) || (options.poc_type == 2 && options.bframes)
        || !quality_parsed) {
        fprintf(stderr, "usage: encode_h264 [--entropy cabac|cavlc] [--gop ippp|ibp] [--frames N] [--slices N] "
                        "[--rc cqp|cbr] [--poc-type 0|2] [--quality-levels N:L,…] [--timings] [--fault NAME] OUTPUT\n");
        exit(2);
    }
    if (fault("rate_control") || fault("hrd")) options.cbr = true;
}

static FILE *create(const char *suffix) {
    char path[4096];
    int length = snprintf(path, sizeof path, "%s%s", options.output, suffix);
    if (length < 0 || (size_t)length >= sizeof path) {
        fprintf(stderr, "%s: path too long\n", options.output);
        exit(2);
    }
    FILE *file = fopen(path, "wb");
    if (file == NULL) {
        fprintf(stderr, "%s: %s\n", path, strerror(errno));
        exit(1);
    }
    return file;
}

int main(int argc, char **argv) {
    parse(argc, argv);
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "/dev/null: %s\n", strerror(errno));
        return 1;
    }
    display = vaGetDisplayDRM(fd);
    if (display == NULL) {
        fprintf(stderr, "vaGetDisplayDRM: no display\n");
        return 1;
    }
    int major, minor;
    check(vaInitialize(display, &major, &minor), "vaInitialize");

    VAEntrypoint entrypoints[8];
    int entrypoint_count;
    check(vaQueryConfigEntrypoints(display, VAProfileH264Main, entrypoints, &entrypoint_count),
          "vaQueryConfigEntrypoints");
    VAEntrypoint entrypoint = entrypoints[0];
    for (int i = 0; i < entrypoint_count; i++) if (entrypoints[i] == VAEntrypointEncSlice) entrypoint = entrypoints[i];

    VAConfigAttrib offered[2] = {{.type = VAConfigAttribRateControl}, {.type = VAConfigAttribEncPackedHeaders}};
    check(vaGetConfigAttributes(display, VAProfileH264Main, entrypoint, offered, 2), "vaGetConfigAttributes");
    packed_headers = offered[1].value == VA_ATTRIB_NOT_SUPPORTED
        ? 0 : offered[1].value & (VA_ENC_PACKED_HEADER_SEQUENCE | VA_ENC_PACKED_HEADER_SLICE);
    VAConfigAttrib attributes[3] = {
        {.type = VAConfigAttribRTFormat, .value = VA_RT_FORMAT_YUV420},
        {.type = VAConfigAttribRateControl, .value = options.cbr ? VA_RC_CBR : VA_RC_CQP},
        {.type = VAConfigAttribEncPackedHeaders, .value = packed_headers},
    };
    check(vaCreateConfig(display, VAProfileH264Main, entrypoint, attributes, 3, &config), "vaCreateConfig");
    check(vaCreateSurfaces(display, VA_RT_FORMAT_YUV420, WIDTH, HEIGHT, &input, 1, NULL, 0), "vaCreateSurfaces");
    check(vaCreateSurfaces(display, VA_RT_FORMAT_YUV420, WIDTH, HEIGHT, recon, RECON, NULL, 0), "vaCreateSurfaces");
    check(vaCreateContext(display, config, WIDTH, HEIGHT, VA_PROGRESSIVE, recon, RECON, &context), "vaCreateContext");
    check(vaCreateBuffer(display, context, VAEncCodedBufferType, WIDTH * HEIGHT * 2 + 4096, 1, NULL, &coded),
          "vaCreateBuffer");

    FILE *out = create(".h264"), *yuv = create(".yuv");
    static struct picture pictures[MAX_FRAMES];
    int count = plan(pictures);
    // The encoder sees pictures in decode order; OUTPUT.yuv has them in display order.
    for (int i = 0; i < count; i++) {
        if (pictures[i].idr) idr_count++;
        if (fseek(yuv, (long)pictures[i].display * WIDTH * HEIGHT * 3 / 2, SEEK_SET) != 0) {
            fprintf(stderr, "seek: %s\n", strerror(errno));
            return 1;
        }
        upload(pictures[i].display, yuv);
        encode(&pictures[i], i, out);
    }
    if (fclose(out) != 0 || fclose(yuv) != 0) {
        fprintf(stderr, "close: %s\n", strerror(errno));
        return 1;
    }
    check(vaDestroyBuffer(display, coded), "vaDestroyBuffer");
    check(vaDestroyContext(display, context), "vaDestroyContext");
    check(vaDestroySurfaces(display, recon, RECON), "vaDestroySurfaces");
    check(vaDestroySurfaces(display, &input, 1), "vaDestroySurfaces");
    check(vaDestroyConfig(display, config), "vaDestroyConfig");
    check(vaTerminate(display), "vaTerminate");
    if (close(fd) != 0) {
        fprintf(stderr, "close: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
