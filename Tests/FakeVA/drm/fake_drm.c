// libfakedrm.so, preloaded next to the fake VA driver: libva-drm asks libdrm whether the
// descriptor it was given is a DRM node (drmGetNodeTypeFromFd) and which kernel driver is behind
// it (drmGetVersion). These answers make any descriptor, such as one of /dev/null, pass for a
// render node of a driver called "fake"; LIBVA_DRIVER_NAME=fake then picks fake_drv_video.so.
// Meant for machines without a GPU: every descriptor gets these answers, real DRM nodes too.
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <xf86drm.h>

__attribute__((visibility("default"))) int drmGetNodeTypeFromFd(int fd) {
    if (fd < 0) {
        errno = EBADF;
        return -1;
    }
    return DRM_NODE_RENDER;
}

__attribute__((visibility("default"))) drmVersionPtr drmGetVersion(int fd) {
    static const char name[] = "fake", date[] = "20240101", description[] = "vtrecord test double";
    if (fd < 0) {
        errno = EBADF;
        return NULL;
    }
    drmVersionPtr version = calloc(1, sizeof *version);
    if (version == NULL) return NULL;
    version->version_major = 1;
    version->name_len = (int)strlen(name);
    version->date_len = (int)strlen(date);
    version->desc_len = (int)strlen(description);
    version->name = strdup(name);
    version->date = strdup(date);
    version->desc = strdup(description);
    if (version->name == NULL || version->date == NULL || version->desc == NULL) {
        drmFreeVersion(version);
        return NULL;
    }
    return version;
}

__attribute__((visibility("default"))) void drmFreeVersion(drmVersionPtr version) {
    if (version == NULL) return;
    free(version->name);
    free(version->date);
    free(version->desc);
    free(version);
}
