// Buffers and streaming, as vb2 does them for uvcvideo: MMAP buffers in one memfd, a FIFO of
// queued buffers the "camera" fills as frames come due, a FIFO of done buffers for DQBUF.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

// ---- allocation ----

void fv_allocation_unref(struct fv_allocation *allocation) {
    if (!allocation->released || allocation->mapping_total > 0) return;
    if (fv_real.munmap(allocation->memory, allocation->total) != 0) {
        fv_trace("munmap(buffers): %s", strerror(errno));
    }
    if (fv_real.close(allocation->memfd) != 0) fv_trace("close(memfd): %s", strerror(errno));
    free(allocation);
}

static void reset_queue(struct fv_device *device) {
    for (unsigned i = 0; i < FV_MAX_BUFFERS; i++) {
        device->buffers[i].state = FV_BUF_DEQUEUED;
    }
    device->queued_count = 0;
    device->done_count = 0;
}

// Frees the buffers; memory userspace still has mapped stays until it is unmapped.
static void release_allocation(struct fv_device *device) {
    struct fv_allocation *allocation = device->allocation;
    if (allocation == NULL) return;
    device->allocation = NULL;
    device->queue_error = false;
    reset_queue(device);
    memset(device->buffers, 0, sizeof device->buffers);
    allocation->released = true;
    fv_allocation_unref(allocation);
}

static int allocate(struct fv_device *device, unsigned count) {
    long page = sysconf(_SC_PAGESIZE);
    if (page <= 0) page = 4096;
    size_t length = fv_sizeimage(device->format->fourcc, device->size->width, device->size->height);
    size_t stride = (length + (size_t)page - 1) / (size_t)page * (size_t)page;
    struct fv_allocation *allocation = calloc(1, sizeof *allocation);
    if (allocation == NULL) return -ENOMEM;
    allocation->memfd = memfd_create("fake-v4l2-buffers", MFD_CLOEXEC);
    if (allocation->memfd < 0) {
        int error = errno;
        free(allocation);
        return -error;
    }
    allocation->total = stride * count;
    allocation->count = count;
    allocation->length = length;
    allocation->stride = stride;
    int error = 0;
    if (ftruncate(allocation->memfd, (off_t)allocation->total) != 0) {
        error = errno;
    } else {
        allocation->memory = fv_real.mmap(NULL, allocation->total, PROT_READ | PROT_WRITE, MAP_SHARED,
                                          allocation->memfd, 0);
        if (allocation->memory == MAP_FAILED) error = errno;
    }
    if (error != 0) {
        if (fv_real.close(allocation->memfd) != 0) fv_trace("close(memfd): %s", strerror(errno));
        free(allocation);
        return -error;
    }
    device->allocation = allocation;
    memset(device->buffers, 0, sizeof device->buffers);
    reset_queue(device);
    return 0;
}

// ---- frames ----

static void unplug(struct fv_device *device, int64_t when) {
    device->gone = true;
    device->streaming = false;
    release_allocation(device);
    fv_dismiss(device);
    fv.device = NULL;
    fv.unplugged_at_ns = when;
    fv.ever_unplugged = true;
    fv_trace("camera unplugged after frame %llu", (unsigned long long)device->next_sequence);
    if (device->handles == 0) free(device);
}

// What the camera does with frame `sequence` when it comes due.
// Sets the forbidden_zero_bit in the header of every slice NAL unit (types 1 and 5) of an
// Annex B access unit: the first byte after each 00 00 01 start code.
static void corrupt_slices(uint8_t *unit, size_t size) {
    for (size_t i = 0; i + 3 < size; i++) {
        if (unit[i] != 0 || unit[i + 1] != 0 || unit[i + 2] != 1) continue;
        uint8_t type = unit[i + 3] & 0x1F;
        if (type == 1 || type == 5) unit[i + 3] |= 0x80;
        i += 2;
    }
}

// Takes the middle third out of the data of the last NAL unit of an Annex B access unit (its
// last slice): its header, the start of its data and its trailing bits stay. Returns the new size.
static size_t cut_last_slice(uint8_t *unit, size_t size) {
    size_t last = 0;
    for (size_t i = 0; i + 3 < size; i++) {
        if (unit[i] == 0 && unit[i + 1] == 0 && unit[i + 2] == 1) last = i + 3;
    }
    if (last == 0 || size - last < 12) return size;
    size_t third = (size - last) / 3;
    memmove(unit + last + third, unit + last + 2 * third, size - last - 2 * third);
    return size - third;
}

// An H264 camera encodes every picture whether or not the driver has a buffer for it: the
// pictures after a lost access unit refer to it. The lost one is encoded here and let go.
static void encode_lost(struct fv_device *device, uint64_t sequence) {
    static uint8_t *scratch;
    static size_t capacity;
    size_t needed = device->allocation != NULL ? device->allocation->length : 0;
    if (needed == 0) return;
    if (capacity < needed) {
        uint8_t *grown = realloc(scratch, needed);
        if (grown == NULL) return;
        scratch = grown;
        capacity = needed;
    }
    (void)fv_paint(V4L2_PIX_FMT_H264, device->size->width, device->size->height, (uint32_t)sequence, false,
                   scratch, capacity);
}

static void produce(struct fv_device *device, uint64_t sequence, int64_t due) {
    if (fv_every(fv.config.drop_every, sequence) || device->queued_count == 0) {
        if (device->format->fourcc == V4L2_PIX_FMT_H264) encode_lost(device, sequence);
        fv.frames_dropped++;
        fv_trace("frame %llu dropped", (unsigned long long)sequence);
        return;
    }
    unsigned index = device->queued[0];
    device->queued_count--;
    memmove(device->queued, device->queued + 1, device->queued_count * sizeof device->queued[0]);
    struct fv_allocation *allocation = device->allocation;
    struct fv_buffer *buffer = &device->buffers[index];
    uint8_t *memory = allocation->memory + index * allocation->stride;
    uint32_t fourcc = device->format->fourcc;
    int64_t stamp = fv_timestamp_ns(sequence, due);
    bool flash = fv.config.flash && fv_is_flash(device, stamp);
    size_t used = fv_paint(fourcc, device->size->width, device->size->height, (uint32_t)sequence, flash,
                           memory, allocation->length);
    buffer->flags = used == 0 ? V4L2_BUF_FLAG_ERROR : 0;
    if (fourcc == V4L2_PIX_FMT_MJPEG && fv_every(fv.config.corrupt_jpeg_every, sequence)) {
        // Anything but 0xFF, so there is no marker at all, let alone a start of image.
        for (size_t i = 0; i < used; i++) memory[i] = (uint8_t)((i * 7 + sequence) & 0x7F);
    }
    if (fourcc == V4L2_PIX_FMT_MJPEG && fv_every(fv.config.jpeg_hole_every, sequence) && used > 4) {
        // Half the bytes, then the end of image: the headers before the scan stay whole.
        used /= 2;
        memory[used - 2] = 0xFF;
        memory[used - 1] = 0xD9;
    }
    if (fourcc == V4L2_PIX_FMT_H264 && fv_every(fv.config.corrupt_h264_every, sequence)) corrupt_slices(memory, used);
    if (fourcc == V4L2_PIX_FMT_H264 && fv_every(fv.config.h264_hole_every, sequence)) used = cut_last_slice(memory, used);
    if (fv_every(fv.config.short_every, sequence)) used /= 2;
    if (fv_every(fv.config.error_every, sequence)) buffer->flags |= V4L2_BUF_FLAG_ERROR;
    buffer->bytesused = (uint32_t)used;
    buffer->sequence = (uint32_t)sequence;
    buffer->timestamp.tv_sec = stamp / 1000000000;
    buffer->timestamp.tv_usec = (stamp % 1000000000) / 1000;
    buffer->state = FV_BUF_DONE;
    buffer->dirty = true;
    device->done[device->done_count++] = index;
}

void fv_advance(struct fv_device *device, int64_t now) {
    while (device->streaming && !device->gone && !device->queue_error && device->next_due_ns <= now) {
        uint64_t sequence = device->next_sequence;
        if (fv.config.unplug_after != 0 && !fv.ever_unplugged && sequence >= fv.config.unplug_after) {
            unplug(device, device->next_due_ns);
            return;
        }
        if (fv.config.eio_after != 0 && !fv.ever_failed && sequence >= fv.config.eio_after) {
            // vb2_queue_error(): the stream is broken until STREAMOFF; no more frames come.
            device->queue_error = true;
            fv.ever_failed = true;
            fv_trace("stream failed (EIO) at frame %llu", (unsigned long long)sequence);
            return;
        }
        produce(device, sequence, device->next_due_ns);
        device->next_sequence = sequence + 1;
        int64_t due = fv_due_ns(device, sequence + 1);
        if (due > device->next_due_ns) device->next_due_ns = due;
    }
}

// ---- buffer ioctls ----

static void describe_buffer(const struct fv_device *device, unsigned index, struct v4l2_buffer *out) {
    const struct fv_allocation *allocation = device->allocation;
    const struct fv_buffer *buffer = &device->buffers[index];
    memset(out, 0, sizeof *out);
    out->index = index;
    out->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    out->memory = V4L2_MEMORY_MMAP;
    out->field = V4L2_FIELD_NONE;
    out->m.offset = (uint32_t)(index * allocation->stride);
    out->length = (uint32_t)allocation->length;
    out->flags = V4L2_BUF_FLAG_TIMESTAMP_MONOTONIC | V4L2_BUF_FLAG_TSTAMP_SRC_SOE;
    if (allocation->mappings[index] > 0) out->flags |= V4L2_BUF_FLAG_MAPPED;
    if (buffer->state == FV_BUF_QUEUED) out->flags |= V4L2_BUF_FLAG_QUEUED;
    if (buffer->state != FV_BUF_QUEUED) {
        out->flags |= buffer->flags;
        out->bytesused = buffer->bytesused;
        out->sequence = buffer->sequence;
        out->timestamp = buffer->timestamp;
    }
    if (buffer->state == FV_BUF_DONE) out->flags |= V4L2_BUF_FLAG_DONE;
}

static int check_buffer(const struct fv_handle *handle, const struct v4l2_buffer *buffer) {
    const struct fv_device *device = handle->device;
    if (device->owner != handle) return -EBUSY;
    if (buffer->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
    if (device->allocation == NULL || buffer->index >= device->allocation->count) return -EINVAL;
    return 0;
}

int fv_reqbufs(struct fv_handle *handle, struct v4l2_requestbuffers *request) {
    struct fv_device *device = handle->device;
    int error = fv_acquire(handle);
    if (error != 0) return error;
    if (request->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || request->memory != V4L2_MEMORY_MMAP) {
        return -EINVAL;
    }
    request->capabilities = V4L2_BUF_CAP_SUPPORTS_MMAP | V4L2_BUF_CAP_SUPPORTS_ORPHANED_BUFS;
    request->flags = 0;
    memset(request->reserved, 0, sizeof request->reserved);
    if (device->streaming) return -EBUSY;
    release_allocation(device);
    if (request->count == 0) {
        fv_dismiss(device);
        return 0;
    }
    unsigned count = request->count < fv.config.max_buffers ? request->count : fv.config.max_buffers;
    error = allocate(device, count);
    if (error != 0) return error;
    request->count = count;
    return 0;
}

int fv_querybuf(struct fv_handle *handle, struct v4l2_buffer *buffer) {
    int error = check_buffer(handle, buffer);
    if (error != 0) return error;
    describe_buffer(handle->device, buffer->index, buffer);
    return 0;
}

int fv_qbuf(struct fv_handle *handle, struct v4l2_buffer *buffer) {
    int error = check_buffer(handle, buffer);
    if (error != 0) return error;
    if (buffer->memory != V4L2_MEMORY_MMAP) return -EINVAL;
    struct fv_device *device = handle->device;
    struct fv_buffer *state = &device->buffers[buffer->index];
    if (state->state != FV_BUF_DEQUEUED) return -EINVAL;
    if (state->dirty) {
        // The buffer is the driver's again: a consumer still reading it sees the picture go.
        struct fv_allocation *allocation = device->allocation;
        memset(allocation->memory + buffer->index * allocation->stride, 0, allocation->length);
        state->dirty = false;
    }
    state->state = FV_BUF_QUEUED;
    state->flags = 0;
    state->bytesused = 0;
    device->queued[device->queued_count++] = buffer->index;
    describe_buffer(device, buffer->index, buffer);
    return 0;
}

static bool nonblocking(int fd) {
    int flags = fcntl(fd, F_GETFL);
    return flags >= 0 && (flags & O_NONBLOCK) != 0;
}

// Sleeps until CLOCK_MONOTONIC reaches the deadline. Reading a timerfd is interrupted by a
// signal exactly as a blocking DQBUF is: EINTR, unless the handler has SA_RESTART.
static int wait_until(int64_t deadline) {
    if (deadline < 1) deadline = 1;
    struct itimerspec when = {
        .it_value = {.tv_sec = deadline / 1000000000, .tv_nsec = deadline % 1000000000},
    };
    int timer = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);
    if (timer >= 0 && timerfd_settime(timer, TFD_TIMER_ABSTIME, &when, NULL) == 0) {
        uint64_t expirations;
        ssize_t got = fv_real.read(timer, &expirations, sizeof expirations);
        int error = got < 0 ? errno : 0;
        if (fv_real.close(timer) != 0) fv_trace("close(timerfd): %s", strerror(errno));
        return -error;
    }
    if (timer >= 0 && fv_real.close(timer) != 0) fv_trace("close(timerfd): %s", strerror(errno));
    int error = clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &when.it_value, NULL);
    return -error;
}

int fv_dqbuf(int fd, struct fv_handle *handle, struct v4l2_buffer *buffer) {
    for (;;) {
        struct fv_device *device = handle->device;
        if (device->gone) return -ENODEV;
        if (device->owner != handle) return -EBUSY;
        if (buffer->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || buffer->memory != V4L2_MEMORY_MMAP) {
            return -EINVAL;
        }
        if (!device->streaming) return -EINVAL;
        // As vb2 does, a broken stream fails even with filled buffers still waiting.
        if (device->queue_error) return -EIO;
        if (device->done_count > 0) {
            if (fv_pause_at(FV_PHASE_DQBUF)) {
                if (fv_handle_for(fd) != handle) return -EBADF;     // closed during the pause
                fv_tick(fv_now_ns());
                continue;
            }
            unsigned index = device->done[0];
            device->done_count--;
            memmove(device->done, device->done + 1, device->done_count * sizeof device->done[0]);
            device->buffers[index].state = FV_BUF_DEQUEUED;
            describe_buffer(device, index, buffer);
            fv.frames_delivered++;
            fv.last_sequence = buffer->sequence;
            for (unsigned i = 0; i < fv.config.signal_count; i++) {
                // The process learns of the frame as it takes it, as from a sensor wired to it.
                if (fv.config.signal_at[i] == buffer->sequence && kill(getpid(), SIGUSR1) != 0) {
                    fv_trace("kill(SIGUSR1): %s", strerror(errno));
                }
            }
            return 0;
        }
        if (nonblocking(fd)) return -EAGAIN;
        int64_t deadline = device->next_due_ns;
        fv_unlock();
        int error = wait_until(deadline);
        fv_lock();
        if (fv_handle_for(fd) != handle) return -EBADF;     // closed meanwhile by another thread
        if (error != 0) return error;
        fv_tick(fv_now_ns());
    }
}

static int check_stream_type(const struct fv_handle *handle, const int *type) {
    if (handle->device->owner != handle) return -EBUSY;
    return *type == V4L2_BUF_TYPE_VIDEO_CAPTURE ? 0 : -EINVAL;
}

int fv_streamon(struct fv_handle *handle, const int *type) {
    int error = check_stream_type(handle, type);
    if (error != 0) return error;
    struct fv_device *device = handle->device;
    if (device->allocation == NULL) return -EINVAL;
    if (device->streaming) return 0;
    fv_prepare_ring(device->format->fourcc, device->size->width, device->size->height, device->allocation->length);
    device->streaming = true;
    device->start_ns = fv.config.flash ? fv_aligned_start_ns(device, fv_now_ns()) : fv_now_ns();
    device->next_sequence = 0;
    device->next_due_ns = fv_due_ns(device, 0);
    fv_h264_close();
    fv_write_streamon(device->start_ns);
    return 0;
}

// Stops the stream and gives every buffer back to userspace, filled or not.
int fv_streamoff(struct fv_handle *handle, const int *type) {
    int error = check_stream_type(handle, type);
    if (error != 0) return error;
    struct fv_device *device = handle->device;
    device->streaming = false;
    device->queue_error = false;
    fv_h264_close();
    reset_queue(device);
    return 0;
}

void fv_release_handle(struct fv_handle *handle) {
    struct fv_device *device = handle->device;
    if (device->owner != handle) return;
    device->streaming = false;
    device->queue_error = false;
    fv_h264_close();
    release_allocation(device);
    fv_dismiss(device);
}

short fv_poll_events(int fd, short requested, int64_t *next_change_ns) {
    *next_change_ns = INT64_MAX;
    struct fv_handle *handle = fv_handle_for(fd);
    if (handle == NULL) return POLLNVAL;
    struct fv_device *device = handle->device;
    if (device->gone) return POLLERR | POLLHUP;
    if (!device->streaming || device->queue_error) return POLLERR;
    *next_change_ns = device->next_due_ns;
    return device->done_count > 0 ? (short)(requested & (POLLIN | POLLRDNORM)) : 0;
}
