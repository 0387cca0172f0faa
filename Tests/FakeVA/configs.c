// Profiles, entrypoints and config attributes, as an H.264 driver answers them for encoding
// (EncSlice, EncSliceLP) and decoding (VLD); and vaCreateConfig, which refuses what was not
// offered with the status a real driver gives.
#include "fake_va.h"

#include <stdlib.h>
#include <string.h>

bool fva_profile_offered(VAProfile profile) {
    switch (profile) {
    case VAProfileH264ConstrainedBaseline: return fva_knobs.profile_baseline;
    case VAProfileH264Main: return fva_knobs.profile_main;
    case VAProfileH264High: return fva_knobs.profile_high;
    default: return false;
    }
}

static bool entrypoint_offered(VAEntrypoint entrypoint) {
    return (entrypoint == VAEntrypointEncSlice && fva_knobs.entry_slice)
        || (entrypoint == VAEntrypointEncSliceLP && fva_knobs.entry_lp)
        || (entrypoint == VAEntrypointVLD && fva_knobs.entry_vld);
}

bool fva_is_decode(const struct fva_config *config) {
    return config->entrypoint == VAEntrypointVLD;
}

VAStatus fva_QueryConfigProfiles(VADriverContextP ctx, VAProfile *profiles, int *count) {
    (void)ctx;
    fva_lock();
    fva_trace("vaQueryConfigProfiles");
    static const VAProfile all[] = {VAProfileH264ConstrainedBaseline, VAProfileH264Main, VAProfileH264High};
    int n = 0;
    for (size_t i = 0; i < sizeof all / sizeof all[0]; i++) {
        if (fva_profile_offered(all[i])) profiles[n++] = all[i];
    }
    *count = n;
    fva_unlock();
    return VA_STATUS_SUCCESS;
}

VAStatus fva_QueryConfigEntrypoints(VADriverContextP ctx, VAProfile profile, VAEntrypoint *entrypoints, int *count) {
    (void)ctx;
    fva_lock();
    fva_trace("vaQueryConfigEntrypoints(%s)", fva_profile_name(profile));
    VAStatus status = VA_STATUS_SUCCESS;
    int n = 0;
    if (fva_profile_offered(profile)) {
        // Decoding first, as iHD and radeonsi list it.
        if (fva_knobs.entry_vld) entrypoints[n++] = VAEntrypointVLD;
        if (fva_knobs.entry_slice) entrypoints[n++] = VAEntrypointEncSlice;
        if (fva_knobs.entry_lp) entrypoints[n++] = VAEntrypointEncSliceLP;
    } else {
        status = VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    }
    *count = n;
    fva_unlock();
    return status;
}

// The value a driver reports for one attribute of the decoding entrypoint.
static uint32_t decode_attribute_value(VAConfigAttribType type) {
    switch (type) {
    case VAConfigAttribRTFormat: return VA_RT_FORMAT_YUV420;
    case VAConfigAttribDecSliceMode: return VA_DEC_SLICE_MODE_NORMAL;
    case VAConfigAttribMaxPictureWidth: return fva_knobs.decode_max_width;
    case VAConfigAttribMaxPictureHeight: return fva_knobs.decode_max_height;
    default: return VA_ATTRIB_NOT_SUPPORTED;
    }
}

// The value a driver reports for one attribute of an offered profile and encode entrypoint.
static uint32_t attribute_value(VAConfigAttribType type) {
    switch (type) {
    case VAConfigAttribRTFormat: return VA_RT_FORMAT_YUV420;
    case VAConfigAttribRateControl: return fva_knobs.rc_modes;
    case VAConfigAttribEncPackedHeaders: return fva_knobs.packed_headers;
    case VAConfigAttribEncMaxRefFrames: return fva_knobs.max_ref_l0 | fva_knobs.max_ref_l1 << 16;
    case VAConfigAttribEncMaxSlices: return fva_knobs.max_slices;
    case VAConfigAttribEncSliceStructure: return VA_ENC_SLICE_STRUCTURE_ARBITRARY_MACROBLOCKS;
    case VAConfigAttribEncQualityRange: return fva_knobs.quality_range;
    case VAConfigAttribEncInterlaced: return VA_ENC_INTERLACED_NONE;
    case VAConfigAttribMaxPictureWidth: return 4096;
    case VAConfigAttribMaxPictureHeight: return 4096;
    default: return VA_ATTRIB_NOT_SUPPORTED;
    }
}

// An attribute passed to vaCreateConfig for decoding: the format, or a read-only value as reported.
static VAStatus check_decode_attribute(VAConfigAttrib attribute) {
    switch (attribute.type) {
    case VAConfigAttribRTFormat:
        return attribute.value & ~VA_RT_FORMAT_YUV420 || attribute.value == 0 ? VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT
                                                                              : VA_STATUS_SUCCESS;
    case VAConfigAttribDecSliceMode:
    case VAConfigAttribMaxPictureWidth:
    case VAConfigAttribMaxPictureHeight:
        return attribute.value == decode_attribute_value(attribute.type) ? VA_STATUS_SUCCESS
                                                                         : VA_STATUS_ERROR_INVALID_VALUE;
    default:
        return VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
    }
}

static VAStatus check_profile_entrypoint(VAProfile profile, VAEntrypoint entrypoint) {
    if (!fva_profile_offered(profile)) return VA_STATUS_ERROR_UNSUPPORTED_PROFILE;
    if (!entrypoint_offered(entrypoint)) return VA_STATUS_ERROR_UNSUPPORTED_ENTRYPOINT;
    return VA_STATUS_SUCCESS;
}

VAStatus fva_GetConfigAttributes(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                                 VAConfigAttrib *attributes, int count) {
    (void)ctx;
    fva_lock();
    fva_trace("vaGetConfigAttributes(%s, %s, %d)", fva_profile_name(profile), fva_entrypoint_name(entrypoint), count);
    VAStatus status = check_profile_entrypoint(profile, entrypoint);
    if (status == VA_STATUS_SUCCESS) {
        for (int i = 0; i < count; i++) {
            attributes[i].value = entrypoint == VAEntrypointVLD ? decode_attribute_value(attributes[i].type)
                                                                : attribute_value(attributes[i].type);
            fva_trace("  attribute %d = %#x", attributes[i].type, attributes[i].value);
        }
    }
    fva_unlock();
    return status;
}

VAStatus fva_CreateConfig(VADriverContextP ctx, VAProfile profile, VAEntrypoint entrypoint,
                          VAConfigAttrib *attributes, int count, VAConfigID *id) {
    fva_lock();
    fva_trace("vaCreateConfig(%s, %s, %d attributes)", fva_profile_name(profile), fva_entrypoint_name(entrypoint),
              count);
    VAStatus status = check_profile_entrypoint(profile, entrypoint);
    struct fva_config *config = calloc(1, sizeof *config);
    if (config == NULL) fva_out_of_memory();
    config->profile = profile;
    config->entrypoint = entrypoint;
    config->rt_format = VA_RT_FORMAT_YUV420;
    // Without a RateControl attribute encode drivers default to constant QP; decoding has none.
    config->rc_mode = (fva_knobs.rc_modes & VA_RC_CQP) ? VA_RC_CQP : fva_knobs.rc_modes & -fva_knobs.rc_modes;
    if (entrypoint == VAEntrypointVLD) config->rc_mode = VA_RC_NONE;
    for (int i = 0; status == VA_STATUS_SUCCESS && i < count; i++) {
        VAConfigAttrib attribute = attributes[i];
        fva_trace("  attribute %d = %#x", attribute.type, attribute.value);
        if (config->requested_count < FVA_MAX_REQUESTED) config->requested[config->requested_count++] = attribute;
        if (entrypoint == VAEntrypointVLD) {
            status = check_decode_attribute(attribute);
            continue;
        }
        switch (attribute.type) {
        case VAConfigAttribRTFormat:
            if (attribute.value & ~VA_RT_FORMAT_YUV420 || attribute.value == 0) {
                status = VA_STATUS_ERROR_UNSUPPORTED_RT_FORMAT;
            }
            break;
        case VAConfigAttribRateControl:
            // Exactly one mode, and one the driver offered.
            if ((attribute.value & (attribute.value - 1)) != 0 || (attribute.value & fva_knobs.rc_modes) == 0) {
                status = VA_STATUS_ERROR_INVALID_VALUE;
            } else {
                config->rc_mode = attribute.value;
            }
            break;
        case VAConfigAttribEncPackedHeaders:
            if (attribute.value & ~fva_knobs.packed_headers) {
                status = VA_STATUS_ERROR_INVALID_VALUE;
            } else {
                config->packed_headers = attribute.value;
            }
            break;
        case VAConfigAttribEncQualityRange:
        case VAConfigAttribEncMaxRefFrames:
        case VAConfigAttribEncMaxSlices:
        case VAConfigAttribEncSliceStructure:
        case VAConfigAttribEncInterlaced:
            // Read-only attributes: passing back what was reported is harmless.
            if (attribute.value != attribute_value(attribute.type)) status = VA_STATUS_ERROR_INVALID_VALUE;
            break;
        default:
            status = VA_STATUS_ERROR_ATTR_NOT_SUPPORTED;
            break;
        }
    }
    if (status != VA_STATUS_SUCCESS) {
        fva_trace("vaCreateConfig: %s", vaErrorStr(status));
        free(config);
        fva_unlock();
        return status;
    }
    *id = fva_table_insert(&fva_driver(ctx)->configs, config);
    if (*id == VA_INVALID_ID) {
        free(config);
        status = VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    } else {
        if (fva_stats.configs_made_count < FVA_MAX_CONFIGS_KEPT) {
            fva_stats.configs_made[fva_stats.configs_made_count] = (struct fva_config_made){profile, entrypoint};
        }
        fva_stats.configs_made_count++;
    }
    fva_unlock();
    return status;
}

VAStatus fva_DestroyConfig(VADriverContextP ctx, VAConfigID id) {
    fva_lock();
    fva_trace("vaDestroyConfig(%#x)", id);
    struct fva_config *config = fva_table_take(&fva_driver(ctx)->configs, id);
    free(config);
    fva_unlock();
    return config != NULL ? VA_STATUS_SUCCESS : VA_STATUS_ERROR_INVALID_CONFIG;
}

VAStatus fva_QueryConfigAttributes(VADriverContextP ctx, VAConfigID id, VAProfile *profile,
                                   VAEntrypoint *entrypoint, VAConfigAttrib *attributes, int *count) {
    fva_lock();
    fva_trace("vaQueryConfigAttributes(%#x)", id);
    struct fva_config *config = fva_table_get(&fva_driver(ctx)->configs, id);
    if (config == NULL) {
        fva_unlock();
        return VA_STATUS_ERROR_INVALID_CONFIG;
    }
    *profile = config->profile;
    *entrypoint = config->entrypoint;
    int n = 0;
    attributes[n++] = (VAConfigAttrib){VAConfigAttribRTFormat, config->rt_format};
    if (fva_is_decode(config)) {
        attributes[n++] = (VAConfigAttrib){VAConfigAttribDecSliceMode, VA_DEC_SLICE_MODE_NORMAL};
    } else {
        attributes[n++] = (VAConfigAttrib){VAConfigAttribRateControl, config->rc_mode};
        attributes[n++] = (VAConfigAttrib){VAConfigAttribEncPackedHeaders, config->packed_headers};
    }
    *count = n;
    fva_unlock();
    return VA_STATUS_SUCCESS;
}
