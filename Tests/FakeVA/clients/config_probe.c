// Asks the driver for configs, surfaces and images it should refuse, and one it should give,
// printing one line per call: "what: <vaErrorStr of the status>". A test compares the lines with
// what a real encode driver answers.
//
//   config_probe
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <va/va.h>
#include <va/va_drm.h>

static VADisplay display;

static VAStatus create(const char *what, VAProfile profile, VAEntrypoint entrypoint, VAConfigAttribType type,
                       uint32_t value) {
    VAConfigAttrib attribute = {.type = type, .value = value};
    VAConfigID config;
    VAStatus status = vaCreateConfig(display, profile, entrypoint, &attribute, 1, &config);
    printf("%s: %s\n", what, vaErrorStr(status));
    if (status == VA_STATUS_SUCCESS && vaDestroyConfig(display, config) != VA_STATUS_SUCCESS) {
        printf("vaDestroyConfig failed\n");
    }
    return status;
}

int main(void) {
    int fd = open("/dev/null", O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "/dev/null: %s\n", strerror(errno));
        return 1;
    }
    display = vaGetDisplayDRM(fd);
    int major, minor;
    if (display == NULL || vaInitialize(display, &major, &minor) != VA_STATUS_SUCCESS) {
        fprintf(stderr, "no VA display\n");
        return 1;
    }
    const VAProfile main = VAProfileH264Main;
    create("decoding entrypoint", main, VAEntrypointVLD, VAConfigAttribRTFormat, VA_RT_FORMAT_YUV420);
    create("HEVC profile", VAProfileHEVCMain, VAEntrypointEncSlice, VAConfigAttribRTFormat, VA_RT_FORMAT_YUV420);
    create("4:2:2", main, VAEntrypointEncSlice, VAConfigAttribRTFormat, VA_RT_FORMAT_YUV422);
    create("QVBR", main, VAEntrypointEncSlice, VAConfigAttribRateControl, VA_RC_QVBR);
    create("CBR and VBR at once", main, VAEntrypointEncSlice, VAConfigAttribRateControl, VA_RC_CBR | VA_RC_VBR);
    create("packed picture headers", main, VAEntrypointEncSlice, VAConfigAttribEncPackedHeaders,
           VA_ENC_PACKED_HEADER_PICTURE);
    create("ROI attribute", main, VAEntrypointEncSlice, VAConfigAttribEncROI, 1);
    create("CBR", main, VAEntrypointEncSlice, VAConfigAttribRateControl, VA_RC_CBR);

    VASurfaceID surface;
    VAStatus status = vaCreateSurfaces(display, VA_RT_FORMAT_YUV422, 64, 64, &surface, 1, NULL, 0);
    printf("4:2:2 surface: %s\n", vaErrorStr(status));
    status = vaCreateSurfaces(display, VA_RT_FORMAT_YUV420, 64, 64, &surface, 1, NULL, 0);
    printf("4:2:0 surface: %s\n", vaErrorStr(status));
    if (status == VA_STATUS_SUCCESS) {
        VAImage image;
        status = vaDeriveImage(display, surface, &image);
        printf("derived image: %s\n", vaErrorStr(status));
        if (status == VA_STATUS_SUCCESS) {
            printf("  pitches %u %u, chroma offset %u\n", image.pitches[0], image.pitches[1], image.offsets[1]);
            if (vaDestroyImage(display, image.image_id) != VA_STATUS_SUCCESS) printf("vaDestroyImage failed\n");
        }
        if (vaDestroySurfaces(display, &surface, 1) != VA_STATUS_SUCCESS) printf("vaDestroySurfaces failed\n");
    }
    if (vaTerminate(display) != VA_STATUS_SUCCESS || close(fd) != 0) {
        fprintf(stderr, "cleanup failed\n");
        return 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
