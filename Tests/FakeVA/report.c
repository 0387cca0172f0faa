// The JSON report (FAKE_VA_REPORT): written to a temporary file and renamed over the old one, so
// a reader never sees half a report, even of a client killed mid-write.
#define _GNU_SOURCE
#include "fake_va.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void json_string(FILE *file, const char *text) {
    fputc('"', file);
    for (const unsigned char *p = (const unsigned char *)text; *p != '\0'; p++) {
        if (*p == '"' || *p == '\\') {
            fprintf(file, "\\%c", *p);
        } else if (*p < 0x20) {
            fprintf(file, "\\u%04x", *p);
        } else {
            fputc(*p, file);
        }
    }
    fputc('"', file);
}

static void write_config(FILE *file) {
    const struct fva_config *config = &fva_stats.config;
    if (!fva_stats.have_config) {
        fprintf(file, "  \"config\": null,\n");
        return;
    }
    fprintf(file, "  \"config\": {\"profile\": \"%s\", \"entrypoint\": \"%s\", \"rate_control\": \"%s\", "
                  "\"packed_headers\": %u, \"requested_attributes\": [",
            fva_profile_name(config->profile), fva_entrypoint_name(config->entrypoint), fva_rc_name(config->rc_mode),
            config->packed_headers);
    for (unsigned i = 0; i < config->requested_count; i++) {
        fprintf(file, "%s{\"type\": %d, \"value\": %u}", i ? ", " : "", config->requested[i].type,
                config->requested[i].value);
    }
    fprintf(file, "]},\n");
}

static void write_misc(FILE *file) {
    const VAEncMiscParameterRateControl *rc = &fva_stats.rc;
    if (fva_stats.rc_count == 0) {
        fprintf(file, "  \"rate_control\": null,\n");
    } else {
        fprintf(file, "  \"rate_control\": {\"count\": %u, \"bits_per_second\": %u, \"target_percentage\": %u, "
                      "\"window_size\": %u, \"initial_qp\": %u, \"min_qp\": %u, \"max_qp\": %u, "
                      "\"basic_unit_size\": %u, \"icq_quality_factor\": %u, \"quality_factor\": %u, "
                      "\"target_frame_size\": %u, \"rc_flags\": {\"value\": %u, \"reset\": %u, "
                      "\"disable_frame_skip\": %u, \"disable_bit_stuffing\": %u, \"mb_rate_control\": %u, "
                      "\"temporal_id\": %u, \"frame_tolerance_mode\": %u}},\n",
                fva_stats.rc_count, rc->bits_per_second, rc->target_percentage, rc->window_size, rc->initial_qp,
                rc->min_qp, rc->max_qp, rc->basic_unit_size, rc->ICQ_quality_factor, rc->quality_factor,
                rc->target_frame_size, rc->rc_flags.value, rc->rc_flags.bits.reset, rc->rc_flags.bits.disable_frame_skip,
                rc->rc_flags.bits.disable_bit_stuffing, rc->rc_flags.bits.mb_rate_control, rc->rc_flags.bits.temporal_id,
                rc->rc_flags.bits.frame_tolerance_mode);
    }
    if (fva_stats.hrd_count == 0) {
        fprintf(file, "  \"hrd\": null,\n");
    } else {
        fprintf(file, "  \"hrd\": {\"count\": %u, \"buffer_size\": %u, \"initial_buffer_fullness\": %u},\n",
                fva_stats.hrd_count, fva_stats.hrd.buffer_size, fva_stats.hrd.initial_buffer_fullness);
    }
    if (fva_stats.frame_rate_count == 0) {
        fprintf(file, "  \"frame_rate\": null,\n");
    } else {
        // The framerate field: numerator in the low 16 bits, denominator in the high (0 means 1).
        uint32_t raw = fva_stats.frame_rate.framerate;
        uint32_t denominator = raw >> 16 ? raw >> 16 : 1;
        fprintf(file, "  \"frame_rate\": {\"count\": %u, \"framerate\": %u, \"numerator\": %u, \"denominator\": %u},\n",
                fva_stats.frame_rate_count, raw, raw & 0xffff, denominator);
    }
    if (fva_stats.quality_count == 0) {
        fprintf(file, "  \"quality_level\": null,\n");
    } else {
        fprintf(file, "  \"quality_level\": {\"count\": %u, \"quality_level\": %u},\n", fva_stats.quality_count,
                fva_stats.quality.quality_level);
    }
}

static void write_sequence(FILE *file) {
    const VAEncSequenceParameterBufferH264 *seq = &fva_stats.sequence;
    if (!fva_stats.have_sequence) {
        fprintf(file, "  \"sequence\": null,\n");
        return;
    }
    fprintf(file, "  \"sequence\": {\"bits_per_second\": %u, \"intra_period\": %u, \"intra_idr_period\": %u, "
                  "\"ip_period\": %u, \"max_num_ref_frames\": %u, \"time_scale\": %u, \"num_units_in_tick\": %u, "
                  "\"level_idc\": %u, \"width_in_mbs\": %u, \"height_in_mbs\": %u},\n",
            seq->bits_per_second, seq->intra_period, seq->intra_idr_period, seq->ip_period, seq->max_num_ref_frames,
            seq->time_scale, seq->num_units_in_tick, seq->level_idc, seq->picture_width_in_mbs,
            seq->picture_height_in_mbs);
}

static void write_decode(FILE *file) {
    const struct fva_decode_stats *decode = &fva_stats.decode;
    fprintf(file, "  \"decode\": {\"profile\": ");
    if (decode->have_profile) {
        fprintf(file, "\"%s\"", fva_profile_name(decode->profile));
    } else {
        fprintf(file, "null");
    }
    fprintf(file, ", \"pictures\": %u, \"failed_pictures\": %u, \"i_slices\": %u, \"p_slices\": %u, "
                  "\"b_slices\": %u, \"cavlc_slices\": %u, \"cabac_slices\": %u, \"macroblocks\": %llu},\n",
            decode->pictures, decode->failed_pictures, decode->i_slices, decode->p_slices, decode->b_slices,
            decode->cavlc_slices, decode->cabac_slices, decode->macroblocks);
}

static void write_configs_made(FILE *file) {
    fprintf(file, "  \"configs_created\": %u,\n  \"configs\": [", fva_stats.configs_made_count);
    unsigned kept = fva_stats.configs_made_count < FVA_MAX_CONFIGS_KEPT ? fva_stats.configs_made_count
                                                                        : FVA_MAX_CONFIGS_KEPT;
    for (unsigned i = 0; i < kept; i++) {
        fprintf(file, "%s{\"profile\": \"%s\", \"entrypoint\": \"%s\"}", i ? ", " : "",
                fva_profile_name(fva_stats.configs_made[i].profile),
                fva_entrypoint_name(fva_stats.configs_made[i].entrypoint));
    }
    fprintf(file, "],\n");
}

static bool write_to(FILE *file) {
    fprintf(file, "{\n  \"pid\": %d,\n  \"terminated\": %s,\n  \"vendor\": ", (int)getpid(),
            fva_stats.terminated ? "true" : "false");
    json_string(file, fva_knobs.vendor);
    fprintf(file, ",\n");
    write_config(file);
    fprintf(file, "  \"frames\": %u,\n  \"idr_pictures\": %u,\n  \"i_slices\": %u,\n  \"p_slices\": %u,\n"
                  "  \"b_slices\": %u,\n",
            fva_stats.frames, fva_stats.idr, fva_stats.i_slices, fva_stats.p_slices, fva_stats.b_slices);
    fprintf(file, "  \"pictures_by_quality_level\": {");
    bool first = true;
    for (unsigned level = 0; level <= FVA_MAX_QUALITY; level++) {
        if (fva_stats.pictures_by_quality[level] == 0) continue;
        fprintf(file, "%s\"%u\": %u", first ? "" : ", ", level, fva_stats.pictures_by_quality[level]);
        first = false;
    }
    fprintf(file, "},\n");
    fprintf(file, "  \"last_qp\": {\"i\": %d, \"p\": %d, \"b\": %d},\n", fva_stats.last_qp[H264_SLICE_I],
            fva_stats.last_qp[H264_SLICE_P], fva_stats.last_qp[H264_SLICE_B]);
    fprintf(file, "  \"packed_headers\": {\"sequence\": %u, \"picture\": %u, \"slice\": %u, \"raw_data\": %u},\n",
            fva_stats.packed[VAEncPackedHeaderSequence], fva_stats.packed[VAEncPackedHeaderPicture],
            fva_stats.packed[VAEncPackedHeaderSlice], fva_stats.packed[VAEncPackedHeaderRawData]);
    write_misc(file);
    write_sequence(file);
    fprintf(file, "  \"images\": {\"derived\": %u, \"created\": %u, \"put\": %u, \"got\": %u},\n",
            fva_stats.images_derived, fva_stats.images_created, fva_stats.images_put, fva_stats.images_got);
    fprintf(file, "  \"coded_buffer_overflows\": %u,\n", fva_stats.overflows);
    write_decode(file);
    write_configs_made(file);
    if (fva_stats.terminated) {
        fprintf(file, "  \"live_objects\": {\"configs\": %u, \"contexts\": %u, \"surfaces\": %u, \"buffers\": %u, "
                      "\"images\": %u},\n",
                fva_stats.live_configs, fva_stats.live_contexts, fva_stats.live_surfaces, fva_stats.live_buffers,
                fva_stats.live_images);
    } else {
        fprintf(file, "  \"live_objects\": null,\n");
    }
    fprintf(file, "  \"violation_count\": %u,\n  \"violations\": [", fva_stats.violation_count);
    unsigned kept = fva_stats.violation_count < FVA_MAX_VIOLATIONS ? fva_stats.violation_count : FVA_MAX_VIOLATIONS;
    for (unsigned i = 0; i < kept; i++) {
        fprintf(file, "%s\n    ", i ? "," : "");
        json_string(file, fva_stats.violations[i]);
    }
    fprintf(file, "%s]\n}\n", kept ? "\n  " : "");
    return !ferror(file);
}

void fva_write_report(void) {
    if (fva_knobs.report[0] == '\0') return;
    char partial[PATH_MAX + 32];
    int length = snprintf(partial, sizeof partial, "%s.%d.partial", fva_knobs.report, (int)getpid());
    if (length < 0 || (size_t)length >= sizeof partial) {
        dprintf(2, "fake-va: report path too long\n");
        return;
    }
    FILE *file = fopen(partial, "w");
    if (file == NULL) {
        dprintf(2, "fake-va: %s: %s\n", partial, strerror(errno));
        return;
    }
    bool written = write_to(file);
    if (fclose(file) != 0 || !written) {
        dprintf(2, "fake-va: writing %s failed\n", partial);
        return;
    }
    if (rename(partial, fva_knobs.report) != 0) {
        dprintf(2, "fake-va: rename %s: %s\n", partial, strerror(errno));
    }
}
