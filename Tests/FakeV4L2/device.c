// The ioctl interface of the fake camera, as uvcvideo answers it: capabilities, formats and
// sizes, frame rates, the single input, stream ownership and the dispatch of every request.
// Buffers and streaming live in queue.c, controls in controls.c.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

// QUERYCAP's version field: the kernel release a uvcvideo build reports.
static const uint32_t kernel_version = (6u << 16) | (1u << 8);

void fv_device_init(struct fv_device *device) {
    const struct fv_format *format = &fv.config.formats[0];
    device->format = format;
    device->size = &format->sizes[0];
    device->fps = device->size->rates[0];
    device->lock_fd = -1;
    fv_controls_reset(device);
}

// ---- ownership (uvcvideo's "privileges") ----

// The first handle to change the format or rate, or to allocate buffers, owns the stream
// until it frees the buffers or closes; any other handle gets EBUSY there.
int fv_acquire(struct fv_handle *handle) {
    struct fv_device *device = handle->device;
    if (fv.config.busy) return -EBUSY;
    if (device->owner == handle) return 0;
    if (device->owner != NULL) return -EBUSY;
    if (fv.config.lock_file[0] != '\0') {
        int fd = fv_real.open(fv.config.lock_file, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
        if (fd < 0) {
            int error = errno;
            fv_trace("cannot open lock file %s: %s", fv.config.lock_file, strerror(error));
            return -error;
        }
        if (flock(fd, LOCK_EX | LOCK_NB) != 0) {
            int error = errno;
            if (fv_real.close(fd) != 0) fv_trace("close(lock file): %s", strerror(errno));
            return error == EWOULDBLOCK ? -EBUSY : -error;
        }
        device->lock_fd = fd;
    }
    device->owner = handle;
    return 0;
}

void fv_dismiss(struct fv_device *device) {
    device->owner = NULL;
    if (device->lock_fd >= 0) {
        if (fv_real.close(device->lock_fd) != 0) fv_trace("close(lock file): %s", strerror(errno));
        device->lock_fd = -1;
    }
}

// ---- capabilities and formats ----

static int querycap(struct v4l2_capability *cap) {
    memset(cap, 0, sizeof *cap);
    fv_copy_name(cap->driver, sizeof cap->driver, "uvcvideo");
    fv_copy_name(cap->card, sizeof cap->card, fv.config.card);
    fv_copy_name(cap->bus_info, sizeof cap->bus_info, "usb-0000:00:14.0-1");
    cap->version = kernel_version;
    if (fv.config.not_capture) {
        cap->device_caps = V4L2_CAP_META_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_EXT_PIX_FORMAT;
        cap->capabilities = cap->device_caps | V4L2_CAP_DEVICE_CAPS;
    } else {
        // capabilities describes the whole camera, which also has a metadata node.
        cap->device_caps = V4L2_CAP_VIDEO_CAPTURE | V4L2_CAP_STREAMING | V4L2_CAP_EXT_PIX_FORMAT;
        cap->capabilities = cap->device_caps | V4L2_CAP_META_CAPTURE | V4L2_CAP_DEVICE_CAPS;
    }
    return 0;
}

static const struct fv_format *find_format(uint32_t fourcc) {
    for (unsigned i = 0; i < fv.config.format_count; i++) {
        if (fv.config.formats[i].fourcc == fourcc) return &fv.config.formats[i];
    }
    return NULL;
}

static const struct fv_size *find_size(const struct fv_format *format, uint32_t width, uint32_t height) {
    for (unsigned i = 0; i < format->size_count; i++) {
        if (format->sizes[i].width == width && format->sizes[i].height == height) return &format->sizes[i];
    }
    return NULL;
}

// uvcvideo's choice: the size whose area differs least from the request.
static const struct fv_size *nearest_size(const struct fv_format *format, uint32_t width, uint32_t height) {
    const struct fv_size *best = &format->sizes[0];
    uint64_t best_distance = UINT64_MAX;
    for (unsigned i = 0; i < format->size_count; i++) {
        uint64_t w = format->sizes[i].width, h = format->sizes[i].height;
        uint64_t overlap = (w < width ? w : width) * (h < height ? h : height);
        uint64_t distance = w * h + (uint64_t)width * height - 2 * overlap;
        if (distance < best_distance) {
            best_distance = distance;
            best = &format->sizes[i];
        }
    }
    return best;
}

static void describe_format(const struct fv_format *format, const struct fv_size *size,
                            struct v4l2_pix_format *pix) {
    memset(pix, 0, sizeof *pix);
    pix->width = size->width;
    pix->height = size->height;
    pix->pixelformat = format->fourcc;
    pix->field = V4L2_FIELD_NONE;
    pix->bytesperline = fv_bytesperline(format->fourcc, size->width);
    pix->sizeimage = fv_sizeimage(format->fourcc, size->width, size->height);
    pix->colorspace = V4L2_COLORSPACE_SRGB;
    pix->priv = V4L2_PIX_FMT_PRIV_MAGIC;
}

static int enum_fmt(struct v4l2_fmtdesc *desc) {
    if (desc->type != V4L2_BUF_TYPE_VIDEO_CAPTURE || desc->index >= fv.config.format_count) return -EINVAL;
    const struct fv_format *format = &fv.config.formats[desc->index];
    uint32_t index = desc->index;
    memset(desc, 0, sizeof *desc);
    desc->index = index;
    desc->type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    desc->pixelformat = format->fourcc;
    desc->flags = format->fourcc == V4L2_PIX_FMT_MJPEG || format->fourcc == V4L2_PIX_FMT_H264
        ? V4L2_FMT_FLAG_COMPRESSED : 0;
    fv_copy_name(desc->description, sizeof desc->description, fv_format_description(format->fourcc));
    return 0;
}

static int g_fmt(const struct fv_device *device, struct v4l2_format *f) {
    if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
    describe_format(device->format, device->size, &f->fmt.pix);
    return 0;
}

// TRY_FMT and S_FMT: an unknown pixel format becomes the power-on one, the size the nearest.
static void try_fmt(struct v4l2_format *f, const struct fv_format **format, const struct fv_size **size) {
    *format = find_format(f->fmt.pix.pixelformat);
    if (*format == NULL) *format = &fv.config.formats[0];
    *size = nearest_size(*format, f->fmt.pix.width, f->fmt.pix.height);
    describe_format(*format, *size, &f->fmt.pix);
}

static int s_fmt(struct fv_handle *handle, struct v4l2_format *f) {
    if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
    int error = fv_acquire(handle);
    if (error != 0) return error;
    const struct fv_format *format;
    const struct fv_size *size;
    try_fmt(f, &format, &size);
    struct fv_device *device = handle->device;
    if (device->allocation != NULL) return -EBUSY;
    device->format = format;
    device->size = size;
    device->fps = size->rates[0];       // a new format starts at its default rate
    return 0;
}

static int enum_framesizes(struct v4l2_frmsizeenum *e) {
    const struct fv_format *format = find_format(e->pixel_format);
    if (format == NULL || e->index >= format->size_count) return -EINVAL;
    const struct fv_size *size = &format->sizes[e->index];
    memset(e->reserved, 0, sizeof e->reserved);
    e->type = V4L2_FRMSIZE_TYPE_DISCRETE;
    e->discrete.width = size->width;
    e->discrete.height = size->height;
    return 0;
}

static int enum_frameintervals(struct v4l2_frmivalenum *e) {
    const struct fv_format *format = find_format(e->pixel_format);
    if (format == NULL) return -EINVAL;
    const struct fv_size *size = find_size(format, e->width, e->height);
    if (size == NULL || e->index >= size->rate_count) return -EINVAL;
    memset(e->reserved, 0, sizeof e->reserved);
    e->type = V4L2_FRMIVAL_TYPE_DISCRETE;
    e->discrete.numerator = 1;
    e->discrete.denominator = size->rates[e->index];
    return 0;
}

// ---- frame rate ----

static void describe_parm(const struct fv_device *device, struct v4l2_streamparm *p) {
    memset(&p->parm, 0, sizeof p->parm);
    p->parm.capture.capability = V4L2_CAP_TIMEPERFRAME;
    p->parm.capture.timeperframe.numerator = 1;
    p->parm.capture.timeperframe.denominator = device->fps;
}

static int g_parm(const struct fv_device *device, struct v4l2_streamparm *p) {
    if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
    describe_parm(device, p);
    return 0;
}

// The supported interval nearest the requested one wins and is written back.
static int s_parm(struct fv_handle *handle, struct v4l2_streamparm *p) {
    int error = fv_acquire(handle);
    if (error != 0) return error;
    if (p->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
    struct fv_device *device = handle->device;
    if (device->streaming) return -EBUSY;
    struct v4l2_fract requested = p->parm.capture.timeperframe;
    int64_t wanted = requested.denominator == 0
        ? INT64_MAX : (int64_t)requested.numerator * 1000000000 / requested.denominator;
    int64_t best_distance = INT64_MAX;
    for (unsigned i = 0; i < device->size->rate_count; i++) {
        int64_t interval = 1000000000 / device->size->rates[i];
        int64_t distance = interval > wanted ? interval - wanted : wanted - interval;
        if (distance < best_distance) {
            best_distance = distance;
            device->fps = device->size->rates[i];
        }
    }
    describe_parm(device, p);
    return 0;
}

// ---- input ----

static int enuminput(struct v4l2_input *input) {
    if (input->index != 0) return -EINVAL;
    memset(input, 0, sizeof *input);
    fv_copy_name(input->name, sizeof input->name, "Camera 1");
    input->type = V4L2_INPUT_TYPE_CAMERA;
    return 0;
}

static int s_input(struct fv_handle *handle, const int *index) {
    int error = fv_acquire(handle);
    if (error != 0) return error;
    return *index == 0 ? 0 : -EINVAL;
}

// ---- dispatch ----

// Requests that a metadata node answers with EINVAL (wrong buffer type) rather than ENOTTY.
static bool takes_buffer_type(unsigned long request) {
    switch (request) {
    case VIDIOC_ENUM_FMT: case VIDIOC_G_FMT: case VIDIOC_S_FMT: case VIDIOC_TRY_FMT:
    case VIDIOC_REQBUFS: case VIDIOC_QUERYBUF: case VIDIOC_QBUF: case VIDIOC_DQBUF:
    case VIDIOC_STREAMON: case VIDIOC_STREAMOFF: case VIDIOC_G_PARM: case VIDIOC_S_PARM:
        return true;
    default:
        return false;
    }
}

static int dispatch(struct fv_handle *handle, unsigned long request, void *arg) {
    struct fv_device *device = handle->device;
    if (fv.config.not_capture && request != VIDIOC_QUERYCAP) {
        return takes_buffer_type(request) ? -EINVAL : -ENOTTY;
    }
    switch (request) {
    case VIDIOC_QUERYCAP: return querycap(arg);
    case VIDIOC_ENUM_FMT: return enum_fmt(arg);
    case VIDIOC_G_FMT: return g_fmt(device, arg);
    case VIDIOC_TRY_FMT: {
        struct v4l2_format *f = arg;
        if (f->type != V4L2_BUF_TYPE_VIDEO_CAPTURE) return -EINVAL;
        const struct fv_format *format;
        const struct fv_size *size;
        try_fmt(f, &format, &size);
        return 0;
    }
    case VIDIOC_S_FMT: return s_fmt(handle, arg);
    case VIDIOC_ENUM_FRAMESIZES: return enum_framesizes(arg);
    case VIDIOC_ENUM_FRAMEINTERVALS: return enum_frameintervals(arg);
    case VIDIOC_G_PARM: return g_parm(device, arg);
    case VIDIOC_S_PARM: return s_parm(handle, arg);
    case VIDIOC_ENUMINPUT: return enuminput(arg);
    case VIDIOC_G_INPUT: *(int *)arg = 0; return 0;
    case VIDIOC_S_INPUT: return s_input(handle, arg);
    case VIDIOC_REQBUFS: return fv_reqbufs(handle, arg);
    case VIDIOC_QUERYBUF: return fv_querybuf(handle, arg);
    case VIDIOC_QBUF: return fv_qbuf(handle, arg);
    case VIDIOC_STREAMON: return fv_streamon(handle, arg);
    case VIDIOC_STREAMOFF: return fv_streamoff(handle, arg);
    case VIDIOC_QUERYCTRL: case VIDIOC_QUERY_EXT_CTRL: case VIDIOC_QUERYMENU:
    case VIDIOC_G_CTRL: case VIDIOC_S_CTRL:
    case VIDIOC_G_EXT_CTRLS: case VIDIOC_S_EXT_CTRLS: case VIDIOC_TRY_EXT_CTRLS:
        return fv_control_ioctl(device, request, arg);
    default:
        return -ENOTTY;
    }
}

static enum fv_phase phase_of(unsigned long request) {
    switch (request) {
    case VIDIOC_S_FMT: return FV_PHASE_S_FMT;
    case VIDIOC_S_PARM: return FV_PHASE_S_PARM;
    case VIDIOC_REQBUFS: return FV_PHASE_REQBUFS;
    case VIDIOC_STREAMON: return FV_PHASE_STREAMON;
    default: return FV_PHASE_NONE;
    }
}

// FAKE_V4L2_PAUSE_AT: the pause comes before the call does anything, as in a slow driver.
static int pause_then_dispatch(int fd, struct fv_handle *handle, unsigned long request, void *arg) {
    if (fv_pause_at(phase_of(request))) {
        if (fv_handle_for(fd) != handle) return -EBADF;     // closed during the pause
        fv_tick(fv_now_ns());
        if (handle->device->gone) return -ENODEV;
    }
    return dispatch(handle, request, arg);
}

int fv_ioctl(int fd, unsigned long request, void *arg) {
    // The kernel's ioctl takes its command as an unsigned int: a client that passes it through
    // a signed int (Motion's xioctl does) has it sign-extended to 64 bits on the way, and works
    // on a real camera all the same.
    request = (unsigned int)request;
    fv_lock();
    struct fv_handle *handle = fv_handle_for(fd);
    int result;
    if (handle == NULL) {
        result = -EBADF;
    } else {
        fv_tick(fv_now_ns());
        if (handle->device->gone) {
            result = -ENODEV;
        } else if (arg == NULL && _IOC_SIZE(request) != 0) {
            result = -EFAULT;
        } else if (request == VIDIOC_DQBUF) {
            result = fv_dqbuf(fd, handle, arg);
        } else {
            result = pause_then_dispatch(fd, handle, request, arg);
        }
    }
    fv_trace("ioctl(%d, %s) = %s", fd, fv_ioctl_name(request), result < 0 ? strerror(-result) : "0");
    fv_unlock();
    if (result < 0) {
        errno = -result;
        return -1;
    }
    return result;
}

const char *fv_ioctl_name(unsigned long request) {
    static const struct { unsigned long request; const char *name; } names[] = {
#define NAME(r) {r, #r}
        NAME(VIDIOC_QUERYCAP), NAME(VIDIOC_ENUM_FMT), NAME(VIDIOC_G_FMT), NAME(VIDIOC_S_FMT),
        NAME(VIDIOC_TRY_FMT), NAME(VIDIOC_ENUM_FRAMESIZES), NAME(VIDIOC_ENUM_FRAMEINTERVALS),
        NAME(VIDIOC_G_PARM), NAME(VIDIOC_S_PARM), NAME(VIDIOC_ENUMINPUT), NAME(VIDIOC_G_INPUT),
        NAME(VIDIOC_S_INPUT), NAME(VIDIOC_REQBUFS), NAME(VIDIOC_QUERYBUF), NAME(VIDIOC_QBUF),
        NAME(VIDIOC_DQBUF), NAME(VIDIOC_STREAMON), NAME(VIDIOC_STREAMOFF), NAME(VIDIOC_QUERYCTRL),
        NAME(VIDIOC_QUERY_EXT_CTRL), NAME(VIDIOC_QUERYMENU), NAME(VIDIOC_G_CTRL), NAME(VIDIOC_S_CTRL),
        NAME(VIDIOC_G_EXT_CTRLS), NAME(VIDIOC_S_EXT_CTRLS), NAME(VIDIOC_TRY_EXT_CTRLS),
        NAME(VIDIOC_G_STD), NAME(VIDIOC_ENUMSTD), NAME(VIDIOC_G_PRIORITY), NAME(VIDIOC_S_PRIORITY),
        NAME(VIDIOC_G_SELECTION), NAME(VIDIOC_CROPCAP), NAME(VIDIOC_G_CROP), NAME(VIDIOC_CREATE_BUFS),
        NAME(VIDIOC_EXPBUF), NAME(VIDIOC_SUBSCRIBE_EVENT), NAME(VIDIOC_UNSUBSCRIBE_EVENT),
        NAME(VIDIOC_DQEVENT), NAME(VIDIOC_LOG_STATUS), NAME(VIDIOC_G_DV_TIMINGS),
        NAME(VIDIOC_ENUMAUDIO), NAME(VIDIOC_G_AUDIO), NAME(VIDIOC_G_TUNER), NAME(VIDIOC_G_JPEGCOMP),
        NAME(VIDIOC_G_FBUF), NAME(VIDIOC_G_OUTPUT), NAME(VIDIOC_ENUMOUTPUT), NAME(VIDIOC_G_EDID),
        NAME(VIDIOC_QUERYSTD), NAME(VIDIOC_PREPARE_BUF), NAME(VIDIOC_ENUM_FREQ_BANDS),
#undef NAME
    };
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        if (names[i].request == request) return names[i].name;
    }
    static __thread char unknown[32];
    return snprintf(unknown, sizeof unknown, "0x%08lx", request) > 0 ? unknown : "an unknown ioctl";
}
