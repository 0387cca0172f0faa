#ifndef VT_CLINUX_SHIM_H
#define VT_CLINUX_SHIM_H

#include <malloc.h>
#include <stddef.h>
#include <sys/prctl.h>

// Linux calls that Swift's Glibc module leaves out because glibc declares them only under
// _GNU_SOURCE. The prototypes are glibc's own.

int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);

// SYNC_FILE_RANGE_WRITE: start writing the range's dirty pages, without waiting for them.
static inline int vt_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, 2);
}

// sched_getaffinity(2) with glibc's arguments (pid_t is int, cpu_set_t a bit mask).
int sched_getaffinity(int pid, size_t cpusetsize, void *mask);

// The CPUs this process may run on (taskset, a cpuset), as x264 counts them; 0 if unknown.
static inline int vt_usable_cores(void) {
    unsigned long mask[16] = {0};
    if (sched_getaffinity(0, sizeof mask, mask) != 0) return 0;
    int count = 0;
    for (unsigned i = 0; i < sizeof mask / sizeof mask[0]; i++) count += __builtin_popcountl(mask[i]);
    return count;
}

// Names the calling thread as /proc/PID/task/TID/comm shows it (what pthread_setname_np does
// for the calling thread; prctl is variadic, which Swift cannot call). 0, or -1 and errno.
static inline int vt_name_this_thread(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL);
}

// mallopt(M_MMAP_THRESHOLD, bytes): allocations of `bytes` or more are mapped on their own and
// unmapped when freed, and the threshold no longer rises after frees (glibc's default does,
// up to 32 MiB). 1 on success, 0 on failure.
static inline int vt_map_allocations_from(int bytes) {
    return mallopt(M_MMAP_THRESHOLD, bytes);
}

#endif
