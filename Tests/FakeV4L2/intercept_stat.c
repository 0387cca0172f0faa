// The stat family and access() for the device path: a character device node (major 81, the
// V4L2 major) while the camera is plugged in, ENOENT while it is not. Binaries built against
// glibc before 2.33 call the versioned __xstat family instead, so those are here too.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#define FV_EXPORT __attribute__((visibility("default")))

static int stat_device(struct stat *st) {
    fv_lock();
    fv_tick(fv_now_ns());
    bool present = fv_device_present();
    if (present) fv_fill_stat(st);
    fv_unlock();
    if (!present) {
        errno = ENOENT;
        return -1;
    }
    return 0;
}

static int fstatat_common(int dirfd, const char *path, struct stat *st, int flags) {
    fv_init();
    if (fv_names_device(dirfd, path)) return stat_device(st);
    if ((flags & AT_EMPTY_PATH) && path != NULL && path[0] == '\0' && fv_is_fake_fd(dirfd)) {
        fv_lock();
        fv_fill_stat(st);
        fv_unlock();
        return 0;
    }
    return fv_real.fstatat(dirfd, path, st, flags);
}

FV_EXPORT int stat(const char *restrict path, struct stat *restrict st) {
    return fstatat_common(AT_FDCWD, path, st, 0);
}
FV_EXPORT int lstat(const char *restrict path, struct stat *restrict st) {
    return fstatat_common(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}
FV_EXPORT int fstat(int fd, struct stat *st) {
    return fstatat_common(fd, "", st, AT_EMPTY_PATH);
}
FV_EXPORT int fstatat(int dirfd, const char *restrict path, struct stat *restrict st, int flags) {
    return fstatat_common(dirfd, path, st, flags);
}

// struct stat64 is struct stat on 64-bit Linux.
_Static_assert(sizeof(struct stat64) == sizeof(struct stat), "stat64 and stat share a layout");
FV_EXPORT int stat64(const char *restrict path, struct stat64 *restrict st) {
    return fstatat_common(AT_FDCWD, path, (struct stat *)st, 0);
}
FV_EXPORT int lstat64(const char *restrict path, struct stat64 *restrict st) {
    return fstatat_common(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}
FV_EXPORT int fstat64(int fd, struct stat64 *st) {
    return fstatat_common(fd, "", (struct stat *)st, AT_EMPTY_PATH);
}
FV_EXPORT int fstatat64(int dirfd, const char *restrict path, struct stat64 *restrict st, int flags) {
    return fstatat_common(dirfd, path, (struct stat *)st, flags);
}

// The versioned entry points binaries built against glibc before 2.33 call; the version
// argument is always the kernel layout on x86_64.
FV_EXPORT int __xstat(int version, const char *path, struct stat *st);
FV_EXPORT int __xstat64(int version, const char *path, struct stat64 *st);
FV_EXPORT int __lxstat(int version, const char *path, struct stat *st);
FV_EXPORT int __lxstat64(int version, const char *path, struct stat64 *st);
FV_EXPORT int __fxstat(int version, int fd, struct stat *st);
FV_EXPORT int __fxstat64(int version, int fd, struct stat64 *st);
FV_EXPORT int __fxstatat(int version, int dirfd, const char *path, struct stat *st, int flags);
FV_EXPORT int __fxstatat64(int version, int dirfd, const char *path, struct stat64 *st, int flags);
int __xstat(int version, const char *path, struct stat *st) {
    (void)version;
    return fstatat_common(AT_FDCWD, path, st, 0);
}
int __xstat64(int version, const char *path, struct stat64 *st) {
    (void)version;
    return fstatat_common(AT_FDCWD, path, (struct stat *)st, 0);
}
int __lxstat(int version, const char *path, struct stat *st) {
    (void)version;
    return fstatat_common(AT_FDCWD, path, st, AT_SYMLINK_NOFOLLOW);
}
int __lxstat64(int version, const char *path, struct stat64 *st) {
    (void)version;
    return fstatat_common(AT_FDCWD, path, (struct stat *)st, AT_SYMLINK_NOFOLLOW);
}
int __fxstat(int version, int fd, struct stat *st) {
    (void)version;
    return fstatat_common(fd, "", st, AT_EMPTY_PATH);
}
int __fxstat64(int version, int fd, struct stat64 *st) {
    (void)version;
    return fstatat_common(fd, "", (struct stat *)st, AT_EMPTY_PATH);
}
int __fxstatat(int version, int dirfd, const char *path, struct stat *st, int flags) {
    (void)version;
    return fstatat_common(dirfd, path, st, flags);
}
int __fxstatat64(int version, int dirfd, const char *path, struct stat64 *st, int flags) {
    (void)version;
    return fstatat_common(dirfd, path, (struct stat *)st, flags);
}

FV_EXPORT int statx(int dirfd, const char *restrict path, int flags, unsigned int mask,
                    struct statx *restrict out) {
    fv_init();
    bool by_fd = (flags & AT_EMPTY_PATH) && path[0] == '\0' && fv_is_fake_fd(dirfd);
    if (!by_fd && !fv_names_device(dirfd, path)) return fv_real.statx(dirfd, path, flags, mask, out);
    struct stat st;
    if (by_fd) {
        fv_lock();
        fv_fill_stat(&st);
        fv_unlock();
    } else if (stat_device(&st) != 0) {
        return -1;
    }
    memset(out, 0, sizeof *out);
    out->stx_mask = STATX_BASIC_STATS;
    out->stx_blksize = (uint32_t)st.st_blksize;
    out->stx_nlink = (uint32_t)st.st_nlink;
    out->stx_uid = st.st_uid;
    out->stx_gid = st.st_gid;
    out->stx_mode = (uint16_t)st.st_mode;
    out->stx_ino = st.st_ino;
    out->stx_atime.tv_sec = st.st_atim.tv_sec;
    out->stx_mtime.tv_sec = st.st_mtim.tv_sec;
    out->stx_ctime.tv_sec = st.st_ctim.tv_sec;
    out->stx_rdev_major = major(st.st_rdev);
    out->stx_rdev_minor = minor(st.st_rdev);
    out->stx_dev_major = major(st.st_dev);
    out->stx_dev_minor = minor(st.st_dev);
    return 0;
}

static int access_device(int mode) {
    struct stat st;
    if (stat_device(&st) != 0) return -1;
    if (mode == F_OK) return 0;
    if ((mode & X_OK) || ((mode & (R_OK | W_OK)) && fv.config.open_errno == EACCES)) {
        errno = EACCES;
        return -1;
    }
    return 0;
}

FV_EXPORT int access(const char *path, int mode) {
    if (fv_names_device(AT_FDCWD, path)) return access_device(mode);
    return fv_real.faccessat(AT_FDCWD, path, mode, 0);
}

FV_EXPORT int faccessat(int dirfd, const char *path, int mode, int flags) {
    if (fv_names_device(dirfd, path)) return access_device(mode);
    return fv_real.faccessat(dirfd, path, mode, flags);
}

FV_EXPORT int euidaccess(const char *path, int mode) {
    if (fv_names_device(AT_FDCWD, path)) return access_device(mode);
    return fv_real.faccessat(AT_FDCWD, path, mode, AT_EACCESS);
}

FV_EXPORT int eaccess(const char *path, int mode) {
    return euidaccess(path, mode);
}
