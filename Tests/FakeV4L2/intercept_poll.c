// poll, ppoll, select and pselect over sets that mix the fake camera's descriptors with real
// ones (a wake-up pipe, a socket): the real ones go to the kernel, the fake ones are judged here.
#undef _FORTIFY_SOURCE
#define _GNU_SOURCE
#define _LARGEFILE64_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <stdlib.h>
#include <sys/select.h>

#define FV_EXPORT __attribute__((visibility("default")))

// Waits like ppoll on a set mixing fake and real descriptors. The fake entries are hidden
// from the kernel (fd -1) and judged here; the kernel waits on the rest for at most as long as
// it takes the next frame to come due, then the fake ones are judged again.
static int poll_mixed(struct pollfd *fds, nfds_t count, const struct timespec *timeout,
                      const sigset_t *mask) {
    bool any = false;
    for (nfds_t i = 0; i < count && !any; i++) any = fv_is_fake_fd(fds[i].fd);
    if (!any) return fv_real.ppoll(fds, count, timeout, mask);

    // Per entry: its descriptor, and for fake ones the events judged here.
    struct saved { int fd; short revents; } *saved = malloc(count * sizeof *saved);
    if (saved == NULL) {
        errno = ENOMEM;
        return -1;
    }
    int64_t deadline = timeout == NULL
        ? INT64_MAX : fv_now_ns() + (int64_t)timeout->tv_sec * 1000000000 + timeout->tv_nsec;
    int result;
    for (bool last_look = false;; ) {
        int ready = 0;
        int64_t next_change = INT64_MAX;
        fv_lock();
        int64_t now = fv_now_ns();
        fv_tick(now);
        for (nfds_t i = 0; i < count; i++) {
            saved[i].fd = fds[i].fd;
            saved[i].revents = 0;
            if (!fv_is_fake_fd(fds[i].fd)) continue;
            int64_t change;
            saved[i].revents = fv_poll_events(fds[i].fd, fds[i].events, &change);
            if (change < next_change) next_change = change;
            if (saved[i].revents != 0) ready++;
            fds[i].fd = -1;     // the kernel ignores negative descriptors
        }
        fv_unlock();
        int64_t until = ready > 0 || last_look ? now : (deadline < next_change ? deadline : next_change);
        int64_t wait = until > now ? until - now : 0;
        struct timespec slice = {.tv_sec = wait / 1000000000, .tv_nsec = wait % 1000000000};
        int real = fv_real.ppoll(fds, count, until == INT64_MAX ? NULL : &slice, mask);
        int error = errno;
        for (nfds_t i = 0; i < count; i++) {
            if (fds[i].fd != saved[i].fd) fds[i].revents = saved[i].revents;
            fds[i].fd = saved[i].fd;
        }
        if (real < 0) {
            errno = error;
            result = -1;
            break;
        }
        if (real > 0 || ready > 0 || last_look) {
            result = real + ready;
            break;
        }
        // A frame may come due exactly at the deadline: judge once more without waiting.
        last_look = fv_now_ns() >= deadline;
    }
    free(saved);
    return result;
}

FV_EXPORT int poll(struct pollfd *fds, nfds_t count, int timeout_ms) {
    fv_init();
    struct timespec timeout = {.tv_sec = timeout_ms / 1000, .tv_nsec = (timeout_ms % 1000) * 1000000L};
    return poll_mixed(fds, count, timeout_ms < 0 ? NULL : &timeout, NULL);
}

FV_EXPORT int ppoll(struct pollfd *fds, nfds_t count, const struct timespec *timeout, const sigset_t *mask) {
    fv_init();
    return poll_mixed(fds, count, timeout, mask);
}

FV_EXPORT int __poll_chk(struct pollfd *fds, nfds_t count, int timeout_ms, size_t capacity) {
    if (capacity / sizeof *fds < count) abort();
    return poll(fds, count, timeout_ms);
}

FV_EXPORT int __ppoll_chk(struct pollfd *fds, nfds_t count, const struct timespec *timeout,
                          const sigset_t *mask, size_t capacity) {
    if (capacity / sizeof *fds < count) abort();
    return ppoll(fds, count, timeout, mask);
}

// select through poll_mixed, with the kernel's mapping of poll events onto the three sets.
static int select_mixed(int nfds, fd_set *readable, fd_set *writable, fd_set *exceptional,
                        const struct timespec *timeout, const sigset_t *mask, bool *handled) {
    *handled = false;
    if (nfds < 0 || nfds > FD_SETSIZE) return 0;
    bool any = false;
    int count = 0;
    for (int fd = 0; fd < nfds; fd++) {
        bool wanted = (readable && FD_ISSET(fd, readable)) || (writable && FD_ISSET(fd, writable))
            || (exceptional && FD_ISSET(fd, exceptional));
        if (!wanted) continue;
        count++;
        any = any || fv_is_fake_fd(fd);
    }
    if (!any) return 0;
    *handled = true;
    struct pollfd fds[count];
    int n = 0;
    for (int fd = 0; fd < nfds; fd++) {
        short events = 0;
        if (readable && FD_ISSET(fd, readable)) events |= POLLIN;
        if (writable && FD_ISSET(fd, writable)) events |= POLLOUT;
        if (exceptional && FD_ISSET(fd, exceptional)) events |= POLLPRI;
        if (events != 0) fds[n++] = (struct pollfd){.fd = fd, .events = events};
    }
    int result = poll_mixed(fds, (nfds_t)n, timeout, mask);
    if (result < 0) return -1;
    for (int i = 0; i < n; i++) {
        if (fds[i].revents & POLLNVAL) {
            errno = EBADF;
            return -1;
        }
    }
    int set = 0;
    for (int i = 0; i < n; i++) {
        int fd = fds[i].fd;
        short revents = fds[i].revents;
        if (readable && FD_ISSET(fd, readable)) {
            if (revents & (POLLIN | POLLRDNORM | POLLHUP | POLLERR)) set++; else FD_CLR(fd, readable);
        }
        if (writable && FD_ISSET(fd, writable)) {
            if (revents & (POLLOUT | POLLWRNORM | POLLERR)) set++; else FD_CLR(fd, writable);
        }
        if (exceptional && FD_ISSET(fd, exceptional)) {
            if (revents & POLLPRI) set++; else FD_CLR(fd, exceptional);
        }
    }
    return set;
}

FV_EXPORT int select(int nfds, fd_set *readable, fd_set *writable, fd_set *exceptional,
                     struct timeval *timeout) {
    fv_init();
    struct timespec limit;
    if (timeout != NULL) limit = (struct timespec){.tv_sec = timeout->tv_sec, .tv_nsec = timeout->tv_usec * 1000};
    int64_t start = fv_now_ns();
    bool handled;
    int result = select_mixed(nfds, readable, writable, exceptional, timeout ? &limit : NULL, NULL, &handled);
    if (!handled) return fv_real.select(nfds, readable, writable, exceptional, timeout);
    if (timeout != NULL) {
        // Linux reports the time left.
        int64_t left = (int64_t)limit.tv_sec * 1000000000 + limit.tv_nsec - (fv_now_ns() - start);
        if (left < 0) left = 0;
        timeout->tv_sec = left / 1000000000;
        timeout->tv_usec = (left % 1000000000) / 1000;
    }
    return result;
}

FV_EXPORT int pselect(int nfds, fd_set *readable, fd_set *writable, fd_set *exceptional,
                      const struct timespec *timeout, const sigset_t *mask) {
    fv_init();
    bool handled;
    int result = select_mixed(nfds, readable, writable, exceptional, timeout, mask, &handled);
    if (handled) return result;
    return fv_real.pselect(nfds, readable, writable, exceptional, timeout, mask);
}
