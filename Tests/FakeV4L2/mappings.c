// Userspace mappings of the driver's buffers: which buffers each process has mapped, so an
// allocation freed by REQBUFS(0) or close() lives on while it is still mapped (vb2's orphaned
// buffers), and the exit report can count what a client left mapped.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

struct fv_mapping {
    void *address;
    size_t length;
    struct fv_allocation *allocation;
    unsigned index;
    struct fv_mapping *next;
};

static struct fv_mapping *mappings;
static unsigned mapping_total;

unsigned fv_mapping_count(void) {
    return __atomic_load_n(&mapping_total, __ATOMIC_ACQUIRE);
}

void *fv_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset) {
    fv_lock();
    void *result = MAP_FAILED;
    int error = 0;
    struct fv_handle *handle = fv_handle_for(fd);
    if (handle == NULL) {
        error = EBADF;
        goto done;
    }
    fv_tick(fv_now_ns());
    struct fv_device *device = handle->device;
    struct fv_allocation *allocation = device->allocation;
    if (device->gone) {
        error = ENODEV;
    } else if (allocation == NULL || (flags & MAP_SHARED) == 0 || (protection & PROT_READ) == 0
               || length == 0 || offset < 0 || (size_t)offset % allocation->stride != 0
               || (size_t)offset / allocation->stride >= allocation->count || length > allocation->stride) {
        error = EINVAL;
    }
    if (error != 0) goto done;
    struct fv_mapping *mapping = calloc(1, sizeof *mapping);
    if (mapping == NULL) {
        error = ENOMEM;
        goto done;
    }
    result = fv_real.mmap(address, length, protection, flags, allocation->memfd, offset);
    if (result == MAP_FAILED) {
        error = errno;
        free(mapping);
        goto done;
    }
    mapping->address = result;
    mapping->length = length;
    mapping->allocation = allocation;
    mapping->index = (unsigned)((size_t)offset / allocation->stride);
    mapping->next = mappings;
    mappings = mapping;
    allocation->mappings[mapping->index]++;
    allocation->mapping_total++;
    __atomic_store_n(&mapping_total, mapping_total + 1, __ATOMIC_RELEASE);
done:
    fv_trace("mmap(fd %d, offset %lld, %zu bytes) = %s", fd, (long long)offset, length,
             error != 0 ? strerror(error) : "ok");
    fv_unlock();
    if (error != 0) errno = error;
    return result;
}

// After a successful munmap: forget the buffers it unmapped (any mapping starting in the range).
void fv_forget_mapping(void *address, size_t length) {
    fv_lock();
    uint8_t *start = address;
    for (struct fv_mapping **link = &mappings; *link != NULL;) {
        struct fv_mapping *mapping = *link;
        uint8_t *at = mapping->address;
        if (at >= start && at < start + length) {
            *link = mapping->next;
            struct fv_allocation *allocation = mapping->allocation;
            allocation->mappings[mapping->index]--;
            allocation->mapping_total--;
            __atomic_store_n(&mapping_total, mapping_total - 1, __ATOMIC_RELEASE);
            fv_trace("munmap(buffer %u)", mapping->index);
            free(mapping);
            fv_allocation_unref(allocation);
        } else {
            link = &mapping->next;
        }
    }
    fv_note_release();
    fv_unlock();
}
