#ifndef VT_CLINUX_SHIM_H
#define VT_CLINUX_SHIM_H

// Linux calls that Swift's Glibc module leaves out because glibc declares them only under
// _GNU_SOURCE. The prototypes are glibc's own.

int sync_file_range(int fd, long long offset, long long nbytes, unsigned int flags);

// SYNC_FILE_RANGE_WRITE: start writing the range's dirty pages, without waiting for them.
static inline int vt_start_writeback(int fd, long long offset, long long length) {
    return sync_file_range(fd, offset, length, 2);
}

#endif
