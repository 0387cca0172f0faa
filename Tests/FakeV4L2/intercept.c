// The libc entry points the fake camera replaces. Each one handles the fake path or a fake
// descriptor and hands everything else to the next definition (libc's) unchanged. Inside this
// library only fv_real.* is called for these functions, never the replaced names, so nothing
// recurses.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include "fake_v4l2.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define FV_EXPORT __attribute__((visibility("default")))

struct fv_real fv_real;
static pthread_once_t once = PTHREAD_ONCE_INIT;

static void *next(const char *name) {
    void *symbol = dlsym(RTLD_NEXT, name);
    if (symbol == NULL) {
        dprintf(2, "fake-v4l2: no next definition of %s: %s\n", name, dlerror());
        abort();
    }
    return symbol;
}

// POSIX's way to store dlsym's answer in a function pointer.
#define RESOLVE(pointer, name) (*(void **)&(pointer) = next(name))

static void resolve(void) {
    RESOLVE(fv_real.open, "open");
    RESOLVE(fv_real.close, "close");
    RESOLVE(fv_real.dup, "dup");
    RESOLVE(fv_real.ioctl, "ioctl");
    RESOLVE(fv_real.mmap, "mmap");
    RESOLVE(fv_real.munmap, "munmap");
    RESOLVE(fv_real.ppoll, "ppoll");
    RESOLVE(fv_real.read, "read");
    RESOLVE(fv_real.syscall, "syscall");
    RESOLVE(fv_real.openat, "openat");
    RESOLVE(fv_real.fstatat, "fstatat");
    RESOLVE(fv_real.statx, "statx");
    RESOLVE(fv_real.faccessat, "faccessat");
    RESOLVE(fv_real.fopen, "fopen");
    RESOLVE(fv_real.fopen64, "fopen64");
    RESOLVE(fv_real.select, "select");
    RESOLVE(fv_real.pselect, "pselect");
    RESOLVE(fv_real.exit_now, "_exit");
    fv_state_init();
}

void fv_init(void) {
    int error = pthread_once(&once, resolve);
    if (error != 0) {
        dprintf(2, "fake-v4l2: pthread_once: %s\n", strerror(error));
        abort();
    }
}

__attribute__((constructor)) static void load(void) {
    fv_init();
}

// ---- open ----

bool fv_names_device(int dirfd, const char *path) {
    fv_init();
    return fv_is_device_path(dirfd, path);
}

static int open_device(const char *path, int flags) {
    fv_lock();
    fv.open_attempts++;
    (void)fv_pause_at(FV_PHASE_OPEN);     // nothing is held yet that the pause could change
    fv_tick(fv_now_ns());
    int result = -1;
    if (!fv_device_present()) {
        errno = ENOENT;
    } else if (fv.config.open_errno != 0) {
        errno = fv.config.open_errno;
    } else if (flags & O_DIRECTORY) {
        errno = ENOTDIR;
    } else if ((flags & O_CREAT) && (flags & O_EXCL)) {
        errno = EEXIST;
    } else {
        int backing = fv_real.openat(AT_FDCWD, "/dev/null", O_RDWR | (flags & (O_NONBLOCK | O_CLOEXEC)));
        if (backing >= 0) result = fv_open_handle(backing);
    }
    int error = errno;
    fv_trace("open(%s) = %d%s%s", path, result, result < 0 ? " " : "", result < 0 ? strerror(error) : "");
    fv_unlock();
    errno = error;
    return result;
}

// The node's sysfs uevent file, which v4l2-ctl reads to learn that the node is a video
// device: a memfd holding what the kernel would write there.
static int open_uevent(void) {
    fv_lock();
    fv_tick(fv_now_ns());
    bool present = fv_device_present();
    fv_unlock();
    if (!present) {
        errno = ENOENT;
        return -1;
    }
    char text[PATH_MAX + 64];
    int length = fv_uevent(text, sizeof text);
    int fd = memfd_create("fake-v4l2-uevent", MFD_CLOEXEC);
    if (fd < 0) return -1;
    if (write(fd, text, (size_t)length) != length || lseek(fd, 0, SEEK_SET) != 0) {
        int error = errno;
        if (fv_real.close(fd) != 0) fv_trace("close(uevent): %s", strerror(errno));
        errno = error != 0 ? error : EIO;
        return -1;
    }
    return fd;
}

static bool names_uevent(const char *path) {
    fv_init();
    return path != NULL && strcmp(path, fv_uevent_path()) == 0;
}

static FILE *fopen_uevent(const char *mode) {
    if (strchr(mode, 'w') != NULL || strchr(mode, 'a') != NULL || strchr(mode, '+') != NULL) {
        errno = EACCES;
        return NULL;
    }
    int fd = open_uevent();
    if (fd < 0) return NULL;
    FILE *file = fdopen(fd, "r");
    if (file == NULL) {
        int error = errno;
        if (fv_real.close(fd) != 0) fv_trace("close(uevent): %s", strerror(errno));
        errno = error;
    }
    return file;
}

FV_EXPORT FILE *fopen(const char *restrict path, const char *restrict mode) {
    if (names_uevent(path)) return fopen_uevent(mode);
    return fv_real.fopen(path, mode);
}

FV_EXPORT FILE *fopen64(const char *restrict path, const char *restrict mode) {
    if (names_uevent(path)) return fopen_uevent(mode);
    return fv_real.fopen64(path, mode);
}

static mode_t mode_argument(int flags, va_list arguments) {
    return (flags & (O_CREAT | O_TMPFILE)) ? (mode_t)va_arg(arguments, int) : 0;
}

// open, open64, openat and openat64 differ only in the directory and O_LARGEFILE.
static int open_at(int dirfd, const char *path, int flags, mode_t mode) {
    if (fv_names_device(dirfd, path)) return open_device(path, flags & ~O_LARGEFILE);
    if (names_uevent(path)) return open_uevent();
    return fv_real.openat(dirfd, path, flags, mode);
}

#define FV_MODE_ARGUMENT(flags, mode)              \
    va_list arguments;                             \
    va_start(arguments, flags);                    \
    mode_t mode = mode_argument(flags, arguments); \
    va_end(arguments)

FV_EXPORT int open(const char *path, int flags, ...) {
    FV_MODE_ARGUMENT(flags, mode);
    return open_at(AT_FDCWD, path, flags, mode);
}

FV_EXPORT int open64(const char *path, int flags, ...) {
    FV_MODE_ARGUMENT(flags, mode);
    return open_at(AT_FDCWD, path, flags | O_LARGEFILE, mode);
}

FV_EXPORT int openat(int dirfd, const char *path, int flags, ...) {
    FV_MODE_ARGUMENT(flags, mode);
    return open_at(dirfd, path, flags, mode);
}

FV_EXPORT int openat64(int dirfd, const char *path, int flags, ...) {
    FV_MODE_ARGUMENT(flags, mode);
    return open_at(dirfd, path, flags | O_LARGEFILE, mode);
}

// The _FORTIFY_SOURCE variants, called when the mode argument is known to be absent.
FV_EXPORT int __open_2(const char *path, int flags) { return open(path, flags); }
FV_EXPORT int __open64_2(const char *path, int flags) { return open64(path, flags); }
FV_EXPORT int __openat_2(int dirfd, const char *path, int flags) { return openat(dirfd, path, flags); }
FV_EXPORT int __openat64_2(int dirfd, const char *path, int flags) { return openat64(dirfd, path, flags); }

// ---- close, ioctl, read ----

static int close_fd(int fd) {
    if (fv_is_fake_fd(fd)) {
        fv_lock();
        fv_close_handle(fd);
        fv_trace("close(%d)", fd);
        fv_note_release();
        fv_unlock();
    }
    return fv_real.close(fd);
}

FV_EXPORT int close(int fd) {
    fv_init();
    return close_fd(fd);
}

// GStreamer's v4l2src streams on a dup() of the descriptor it configured the device with.
FV_EXPORT int dup(int fd) {
    fv_init();
    if (!fv_is_fake_fd(fd)) return fv_real.dup(fd);
    fv_lock();
    int copy = fv_real.dup(fd);
    if (copy >= 0) copy = fv_dup_handle(fd, copy);
    fv_trace("dup(%d) = %d", fd, copy);
    fv_unlock();
    return copy;
}

FV_EXPORT int ioctl(int fd, unsigned long request, ...) {
    fv_init();
    va_list arguments;
    va_start(arguments, request);
    void *argument = va_arg(arguments, void *);
    va_end(arguments);
    if (fv_is_fake_fd(fd)) return fv_ioctl(fd, request, argument);
    return fv_real.ioctl(fd, request, argument);
}

// uvcvideo has no read() I/O.
FV_EXPORT ssize_t read(int fd, void *buffer, size_t count) {
    fv_init();
    if (fv_is_fake_fd(fd)) {
        errno = EINVAL;
        return -1;
    }
    return fv_real.read(fd, buffer, count);
}

FV_EXPORT ssize_t __read_chk(int fd, void *buffer, size_t count, size_t capacity) {
    if (count > capacity) abort();     // what glibc's check does: a buffer overflow
    return read(fd, buffer, count);
}

// ---- mmap ----

FV_EXPORT void *mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    fv_init();
    if ((flags & MAP_ANONYMOUS) == 0 && fv_is_fake_fd(fd)) {
        return fv_mmap(address, length, protection, flags, fd, offset);
    }
    return fv_real.mmap(address, length, protection, flags, fd, offset);
}

FV_EXPORT void *mmap64(void *address, size_t length, int protection, int flags, int fd, off64_t offset) {
    return mmap(address, length, protection, flags, fd, (off_t)offset);
}

FV_EXPORT int munmap(void *address, size_t length) {
    fv_init();
    int result = fv_real.munmap(address, length);
    if (result == 0 && fv_mapping_count() > 0) {
        int saved = errno;
        fv_forget_mapping(address, length);
        errno = saved;
    }
    return result;
}
// ---- _exit: a process leaving without destructors still writes its report ----

FV_EXPORT void _exit(int status) {
    fv_write_report("_exit");
    fv_real.exit_now(status);
}

FV_EXPORT void _Exit(int status) {
    _exit(status);
}

// ---- syscall(): libv4l2 makes these calls directly ----

FV_EXPORT long syscall(long number, ...) {
    fv_init();
    va_list arguments;
    va_start(arguments, number);
    long a[6];
    for (int i = 0; i < 6; i++) a[i] = va_arg(arguments, long);
    va_end(arguments);
    if ((number == SYS_ioctl || number == SYS_close || number == SYS_read) && fv_is_fake_fd((int)a[0])) {
        fv_trace("syscall(SYS_%s)", number == SYS_ioctl ? "ioctl" : number == SYS_close ? "close" : "read");
    }
    switch (number) {
    case SYS_open:
        if (fv_names_device(AT_FDCWD, (const char *)a[0])) return open_device((const char *)a[0], (int)a[1]);
        break;
    case SYS_openat:
        if (fv_names_device((int)a[0], (const char *)a[1])) return open_device((const char *)a[1], (int)a[2]);
        break;
    case SYS_close:
        if (fv_is_fake_fd((int)a[0])) return close_fd((int)a[0]);
        break;
    case SYS_ioctl:
        if (fv_is_fake_fd((int)a[0])) return fv_ioctl((int)a[0], (unsigned long)a[1], (void *)a[2]);
        break;
    case SYS_read:
        if (fv_is_fake_fd((int)a[0])) {
            errno = EINVAL;
            return -1;
        }
        break;
    case SYS_mmap:
        if ((a[3] & MAP_ANONYMOUS) == 0 && fv_is_fake_fd((int)a[4])) {
            return (long)fv_mmap((void *)a[0], (size_t)a[1], (int)a[2], (int)a[3], (int)a[4], (off_t)a[5]);
        }
        break;
    case SYS_munmap: {
        long result = fv_real.syscall(number, a[0], a[1]);
        if (result == 0 && fv_mapping_count() > 0) {
            int saved = errno;
            fv_forget_mapping((void *)a[0], (size_t)a[1]);
            errno = saved;
        }
        return result;
    }
    default:
        break;
    }
    return fv_real.syscall(number, a[0], a[1], a[2], a[3], a[4], a[5]);
}
