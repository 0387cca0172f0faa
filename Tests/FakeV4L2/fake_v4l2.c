// A fake USB camera for tests on machines without V4L2: a shared library loaded with
// LD_PRELOAD that makes one device path (which does not exist on disk) look and behave like a
// uvcvideo capture node, so real clients (v4l2-ctl, ffmpeg, libv4l2, vtrecord) can be run
// against it unchanged.
//
// It replaces the libc entry points a V4L2 client uses (open*, close, dup, ioctl, mmap, munmap,
// poll, ppoll, select, pselect, read, the stat family, access) and syscall() for the numbers
// libv4l2 issues directly (SYS_openat, SYS_open, SYS_ioctl, SYS_mmap, SYS_munmap, SYS_close,
// SYS_read). Every open of the device is backed by a real descriptor of /dev/null, so fd
// numbers are real and unique and fcntl(F_SETFL, O_NONBLOCK) works; the state is kept per fd.
// open and fopen of /sys/dev/char/81:N/uevent give what the kernel would, because v4l2-ctl
// reads it to decide what kind of node it was given.
//
// Files: config.c reads the knobs below, device.c answers the ioctls, queue.c does buffers and
// streaming, timing.c when frames come due and their timestamps, mappings.c userspace
// mappings, pause.c FAKE_V4L2_PAUSE_AT, controls.c the controls, picture.c paints the frames,
// h264.c encodes the H264 format's, scene.c the mover and the light in them, report.c the exit
// report, intercept*.c are the replaced libc functions (and _exit, so the report is written by
// a process that leaves without running destructors), this file holds the shared state.
//
// Frames carry the vtrecord test pattern's frame code (FrameCode.swift) equal to the buffer's
// `sequence`, over a background that pans every frame (unless FAKE_V4L2_STILL). Frame n of a
// stream is due at STREAMON + (n+1) × interval (+ jitter); frames are made lazily when a client
// asks (DQBUF, poll, any ioctl), so there is no producer thread. A frame that comes due while
// userspace holds every buffer is dropped and its sequence number skipped, as the driver does.
// A buffer queued back (QBUF) is zeroed at once, as the camera would soon overwrite it, so a
// client that re-queues a buffer while something still reads it sees the picture (and its
// frame code) vanish.
//
// Knobs (environment variables, read once when the library loads):
//
//   FAKE_V4L2_DEVICE=/dev/video0   The path the fake camera answers at.
//   FAKE_V4L2_CARD=name            QUERYCAP card name (default "Fake UVC Camera").
//   FAKE_V4L2_FORMATS=table        Formats, sizes and rates offered, in ENUM order:
//                                  formats separated by ';', each FOURCC:WxH@fps/fps,...
//                                  e.g. "YUYV:640x480@30/15/5,1920x1080@5;MJPG:1920x1080@30".
//                                  FOURCC is YUYV, NV12, YU12, MJPG or H264; the first rate of
//                                  a size is the one S_FMT selects; the first format and size
//                                  are the power-on format. Sizes must be even and at least 64x64.
//                                  "webcam" gives a typical USB 2 camera: YUYV 640x480@30/15/5,
//                                  1280x720@10/5, 1920x1080@5 and MJPG at those sizes @30/15/5.
//                                  Default: YUYV, MJPG, NV12, YU12, each at 640x480, 1280x720
//                                  and 1920x1080 @30/15/5 (H264 only when named).
//                                  H264 is what a UVC H.264 camera gives: each buffer holds one
//                                  access unit in Annex B, encoded with libx264 (ultrafast,
//                                  zerolatency, one thread, constrained baseline) from the same
//                                  picture, so a decoder reads the frame code; no B-frames, an
//                                  IDR with SPS and PPS before it every 30 pictures and at the
//                                  start of every stream; sizeimage is width*height*3/2 + 64 KiB.
//                                  A camera offering H264 has the control "H264 I-Frame Period"
//                                  (V4L2_CID_MPEG_VIDEO_H264_I_PERIOD, 1…600, default 30); a
//                                  change takes effect at the next picture, which is an IDR.
//                                  FAKE_V4L2_PICTURE_RING does not apply to it.
//   FAKE_V4L2_MAX_BUFFERS=32       REQBUFS grants at most this many buffers (1…32).
//   FAKE_V4L2_UNPLUG_AFTER=N       The camera is unplugged when frame N of a stream comes due
//                                  (frames 0…N-1 were captured or dropped): DQBUF and
//                                  every other ioctl then fail with ENODEV, poll reports
//                                  POLLERR|POLLHUP, mmap fails, and open/stat/access of the path
//                                  fail with ENOENT. Happens once per process.
//   FAKE_V4L2_RECONNECT_MS=M       With UNPLUG_AFTER: the path reappears M ms after the unplug;
//                                  new opens get a camera in its power-on state (format, rate,
//                                  controls), old descriptors stay dead.
//   FAKE_V4L2_DELIVERED_FPS=F      Frames come at F per second (may be fractional) whatever
//                                  rate was negotiated; G_PARM still reports the negotiated one.
//   FAKE_V4L2_JITTER_US=J          Each frame comes due up to J µs late (a fixed pseudo-random
//                                  amount per sequence number; never out of order).
//   FAKE_V4L2_DROP_EVERY=N         The driver drops every Nth frame (sequence N-1, 2N-1, …):
//                                  those sequence numbers never reach userspace. An H264
//                                  camera has encoded them all the same, so the access
//                                  units after a lost one refer to it.
//   FAKE_V4L2_CORRUPT_JPEG_EVERY=N Every Nth MJPEG frame (same numbering) carries bytes that
//                                  are not a JPEG at all (no SOI marker).
//   FAKE_V4L2_JPEG_HOLE_EVERY=N    Every Nth MJPEG frame loses the second half of its scan but
//                                  keeps its end-of-image marker, as a transfer that dropped
//                                  packets in the middle leaves it: every marker is in place,
//                                  and only decoding finds the picture cut short.
//   FAKE_V4L2_CORRUPT_H264_EVERY=N Every Nth H264 access unit (same numbering) has the
//                                  forbidden_zero_bit set in the header of each of its slices,
//                                  as a bit flipped in a damaged transfer leaves it; its
//                                  parameter sets stay whole.
//   FAKE_V4L2_H264_HOLE_EVERY=N    Every Nth H264 access unit loses the middle third of its
//                                  last slice's data, as a transfer that dropped packets
//                                  leaves it: every NAL unit is well formed, and only decoding
//                                  finds the slice cut short.
//   FAKE_V4L2_SHORT_EVERY=N        Every Nth frame has bytesused half of what it should be
//                                  (raw formats: half the image size; MJPEG: a truncated JPEG).
//   FAKE_V4L2_ERROR_EVERY=N        Every Nth frame is dequeued with V4L2_BUF_FLAG_ERROR.
//   FAKE_V4L2_EIO_AFTER=N          When frame N comes due the stream breaks, as vb2 marks a
//                                  queue in error after a failed USB transfer: no more frames,
//                                  DQBUF fails with EIO (even with filled buffers waiting) and
//                                  poll reports POLLERR, until STREAMOFF; the device stays
//                                  plugged in and can be opened and streamed again. Once per
//                                  process.
//   FAKE_V4L2_RATE_CHANGE=N:F      From frame N on, frames come at F per second (may be
//                                  fractional): "45:15" halves a 30 fps camera after 1.5 s.
//                                  G_PARM still reports the negotiated rate.
//   FAKE_V4L2_TIMESTAMP_BACK_EVERY=N  Every Nth frame (sequence N-1, 2N-1, …) carries a
//                                  timestamp FAKE_V4L2_TIMESTAMP_BACK_MS (default 50) earlier
//                                  than the time it came due, so it can be earlier than the
//                                  frame before it; the frames after it are stamped as usual.
//   FAKE_V4L2_TIMESTAMP_JUMP_EVERY=N  At every Nth frame the timestamps step forward by
//                                  FAKE_V4L2_TIMESTAMP_JUMP_MS (default 500) and stay ahead, as a
//                                  clock that jumps: the frames still come at the usual rate.
//   FAKE_V4L2_PAUSE_AT=PHASE       The camera stops for FAKE_V4L2_PAUSE_MS (default 1000) the
//                                  first time a client enters PHASE, before the call does
//                                  anything: open, s_fmt, s_parm, reqbufs or streamon (the
//                                  ioctl), or dqbuf:N (the DQBUF that hands out the frame after
//                                  N frames were handed out, once a frame is ready). It writes
//                                  "fake-v4l2: paused at PHASE for M ms" to standard error as
//                                  the pause starts and "fake-v4l2: resumed after PHASE" as it
//                                  ends, so a test can signal the client while it is in that
//                                  phase. Signals do not cut the pause short. Once per process.
//                                  After the pause, "fake-v4l2: released the camera" once the
//                                  client has closed the device and unmapped every buffer.
//   FAKE_V4L2_SIGNAL_AT=N[,N…]     The DQBUF that hands out the frame with sequence N sends the
//                                  process SIGUSR1 (at most 16 frames): an event at a known
//                                  frame, as a motion sensor wired to the recorder would give.
//   FAKE_V4L2_BUSY=1               Another program owns the camera: S_FMT, S_PARM, S_INPUT and
//                                  REQBUFS fail with EBUSY.
//   FAKE_V4L2_LOCK_FILE=path       Stream ownership is also held as a flock on this file, so a
//                                  second process using the same file gets EBUSY like a second
//                                  process on a real camera (ownership is per process without).
//   FAKE_V4L2_OPEN_ERRNO=EACCES    open of the path fails with this errno (a name such as
//                                  EACCES, EBUSY, ENXIO, EPERM, EIO, or a number); with EACCES
//                                  access(R_OK|W_OK) fails too, as for a node without permission.
//   FAKE_V4L2_NOT_CAPTURE=1        The node is not a video capture device (like the metadata
//                                  node uvcvideo creates next to each camera): QUERYCAP reports
//                                  META_CAPTURE without VIDEO_CAPTURE, video ioctls fail.
//   FAKE_V4L2_JPEG_SUBSAMPLING=422 Chroma subsampling of MJPEG frames: 422 (default) or 420.
//   FAKE_V4L2_JPEG_QUALITY=85      libjpeg quality of MJPEG frames.
//   FAKE_V4L2_NOISE=A              Luma carries sensor-like noise of up to ±A (1…64) that
//                                  differs in every frame, as a real camera's does in dim
//                                  light: pictures an encoder cannot code cheaply. The frame
//                                  code stays clean.
//   FAKE_V4L2_STILL=1              A still scene, as a fixed security camera sees: the
//                                  background does not pan (the frame code still changes every
//                                  frame).
//   FAKE_V4L2_MOVER=START:END      Something moves through the scene: in frames with
//                                  START <= sequence < END a white square (luma 235, a sixth of
//                                  the picture's height on a side, vertically centred) crosses
//                                  the picture left to right, 4 pixels a frame, from the left
//                                  edge (again from the left edge after reaching the right
//                                  one); absent in every other frame.
//   FAKE_V4L2_LIGHT_RAMP=START:END:DELTA  The light changes: from frame START to frame END the
//                                  luma of the whole picture (mover included, frame code not)
//                                  shifts linearly by up to DELTA (-219…219, not 0), clipped to
//                                  16…235, and keeps the full shift after END. START = END is a
//                                  step at that frame. Noise lies over the shifted picture.
//   FAKE_V4L2_BLINK=PERIOD:ON      A lamp blinks: a white square (luma 235, a sixth of the
//                                  picture's height on a side, in the upper right quarter) is
//                                  lit in the first ON frames of every PERIOD, from frame 0.
//   FAKE_V4L2_PICTURE_RING=N       A camera whose pictures cost the process nothing, as a real
//                                  one makes them in hardware: N pictures are painted (and
//                                  packed or compressed) with frame codes 0…N-1 at STREAMON,
//                                  before the frame clock starts, and frame n is a copy of
//                                  picture n mod N (0: off).
//   FAKE_V4L2_FLASH=1              Frames fall on a grid through the whole seconds of
//                                  CLOCK_MONOTONIC (STREAMON's time is moved back to make it
//                                  so), and the frame on each second has its lower half white:
//                                  with the fake microphone beeping on whole seconds, sound and
//                                  picture of one instant, for measuring sync.
//   FAKE_V4L2_STREAMON_FILE=path   At each STREAMON, the stream's start (CLOCK_MONOTONIC ns) is
//                                  written there: frame n came due at start + (n+1) × interval,
//                                  so a client's delay can be told from the frame code alone.
//   FAKE_V4L2_REPORT=path          At exit, a process that tried to open the camera writes
//                                  key=value lines describing what it left behind:
//                                  open_handles, mapped_buffers, streaming, buffers_queued
//                                  (held by the driver), frames_delivered (successful DQBUFs),
//                                  frames_dropped (by the driver), last_sequence (-1: none),
//                                  opens (successful), unplugged (0/1), failed (0/1: the
//                                  EIO_AFTER fault happened), pause_reached (the PAUSE_AT phase,
//                                  or none), exit (exit: it returned from main or called exit;
//                                  _exit: it left without destructors, and the counts are what it
//                                  still held, which the kernel releases), pid. "%p" in the path
//                                  becomes the process id. A process killed by a signal it does
//                                  not handle writes no report.
//   FAKE_V4L2_TRACE=1              Log every call on the fake device to stderr, and each
//                                  control value set ("control Brightness = 20").
//
// Not emulated: USERPTR/DMABUF memory, CREATE_BUFS, EXPBUF, events, the multi-planar API,
// dup2/dup3/F_DUPFD of a fake descriptor (dup() is: GStreamer streams on one), and sharing
// state between processes beyond FAKE_V4L2_LOCK_FILE.
#define _GNU_SOURCE
#define DOUBLE_NAME "fake-v4l2"
#include "fake_v4l2.h"
#include "double_support.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

struct fv_state fv;
static pthread_mutex_t fv_mutex = PTHREAD_MUTEX_INITIALIZER;
static int64_t fv_loaded_at;

void fv_lock(void) {
    double_lock(&fv_mutex);
}

void fv_unlock(void) {
    double_unlock(&fv_mutex);
}

int64_t fv_now_ns(void) {
    struct timespec now;
    if (clock_gettime(CLOCK_MONOTONIC, &now) != 0) {
        dprintf(2, "fake-v4l2: clock_gettime: %s\n", strerror(errno));
        abort();
    }
    return (int64_t)now.tv_sec * 1000000000 + now.tv_nsec;
}

void fv_trace(const char *format, ...) {
    if (!fv.config.trace) return;
    va_list arguments;
    va_start(arguments, format);
    double_vprint(format, arguments);
    va_end(arguments);
}

static unsigned device_minor(void);
static char uevent_path[64];

void fv_state_init(void) {
    fv_read_config(&fv.config);
    fv_loaded_at = fv_now_ns();
    fv.last_sequence = -1;
    int length = snprintf(uevent_path, sizeof uevent_path, "/sys/dev/char/81:%u/uevent", device_minor());
    if (length < 0 || (size_t)length >= sizeof uevent_path) {
        dprintf(2, "fake-v4l2: uevent path does not fit\n");
        abort();
    }
    fv.device = calloc(1, sizeof *fv.device);
    if (fv.device == NULL) {
        dprintf(2, "fake-v4l2: out of memory\n");
        abort();
    }
    fv.device->generation = ++fv.generations;
    fv_device_init(fv.device);
}

void fv_copy_name(void *field, size_t capacity, const char *name) {
    size_t length = strnlen(name, capacity - 1);
    memcpy(field, name, length);
    ((char *)field)[length] = '\0';
}

// ---- the device node ----

bool fv_is_device_path(int dirfd, const char *path) {
    (void)dirfd;    // only absolute paths name the device
    return path != NULL && path[0] == '/' && strcmp(path, fv.config.device) == 0;
}

bool fv_device_present(void) {
    return fv.device != NULL;
}

void fv_tick(int64_t now) {
    if (fv.device != NULL) fv_advance(fv.device, now);
    if (fv.device == NULL && fv.config.reconnect_ns >= 0
        && now >= fv.unplugged_at_ns + fv.config.reconnect_ns) {
        struct fv_device *device = calloc(1, sizeof *device);
        if (device == NULL) return;     // stays unplugged; the next tick tries again
        device->generation = ++fv.generations;
        fv_device_init(device);
        fv.device = device;
        fv_trace("camera reconnected (generation %u)", device->generation);
    }
}

// The minor number follows the path's trailing digits, as /dev/videoN has minor N.
static unsigned device_minor(void) {
    const char *end = fv.config.device + strlen(fv.config.device);
    const char *digits = end;
    while (digits > fv.config.device && digits[-1] >= '0' && digits[-1] <= '9') digits--;
    return digits < end ? (unsigned)strtoul(digits, NULL, 10) % 256 : 0;
}

void fv_fill_stat(struct stat *st) {
    memset(st, 0, sizeof *st);
    st->st_dev = makedev(0, 5);                 // devtmpfs
    st->st_ino = 1000 + device_minor();
    st->st_mode = S_IFCHR | 0660;
    st->st_nlink = 1;
    st->st_uid = 0;
    st->st_gid = 44;                            // the video group on Debian
    st->st_rdev = makedev(81, device_minor());  // the V4L2 character major
    st->st_blksize = 4096;
    struct timespec loaded = {
        .tv_sec = time(NULL) - (fv_now_ns() - fv_loaded_at) / 1000000000,
        .tv_nsec = 0,
    };
    st->st_atim = loaded;
    st->st_mtim = loaded;
    st->st_ctim = loaded;
}

const char *fv_uevent_path(void) {
    return uevent_path;
}

int fv_uevent(char *text, size_t capacity) {
    const char *name = fv.config.device;
    if (strncmp(name, "/dev/", 5) == 0) {
        name += 5;
    } else if (strrchr(name, '/') != NULL) {
        name = strrchr(name, '/') + 1;
    }
    int length = snprintf(text, capacity, "MAJOR=81\nMINOR=%u\nDEVNAME=%s\n", device_minor(), name);
    return length < (int)capacity ? length : (int)capacity - 1;
}

// ---- handles ----

struct fv_handle *fv_handle_for(int fd) {
    if (fd < 0 || fd >= FV_MAX_FD) return NULL;
    return __atomic_load_n(&fv.handles[fd], __ATOMIC_ACQUIRE);
}

bool fv_is_fake_fd(int fd) {
    return fv_handle_for(fd) != NULL;
}

int fv_open_handle(int backing_fd) {
    if (backing_fd >= FV_MAX_FD) {
        if (fv_real.close(backing_fd) != 0) fv_trace("close(%d): %s", backing_fd, strerror(errno));
        errno = EMFILE;
        return -1;
    }
    struct fv_handle *handle = calloc(1, sizeof *handle);
    if (handle == NULL) {
        if (fv_real.close(backing_fd) != 0) fv_trace("close(%d): %s", backing_fd, strerror(errno));
        errno = ENOMEM;
        return -1;
    }
    handle->device = fv.device;
    handle->descriptors = 1;
    fv.device->handles++;
    fv.open_handles++;
    fv.opens++;
    __atomic_store_n(&fv.handles[backing_fd], handle, __ATOMIC_RELEASE);
    return backing_fd;
}

void fv_close_handle(int fd) {
    struct fv_handle *handle = fv_handle_for(fd);
    if (handle == NULL) return;
    __atomic_store_n(&fv.handles[fd], NULL, __ATOMIC_RELEASE);
    if (--handle->descriptors > 0) return;
    fv_release_handle(handle);
    struct fv_device *device = handle->device;
    device->handles--;
    if (device->gone && device->handles == 0) free(device);
    fv.open_handles--;
    free(handle);
}

int fv_dup_handle(int fd, int new_fd) {
    struct fv_handle *handle = fv_handle_for(fd);
    if (handle == NULL || new_fd >= FV_MAX_FD) {
        if (fv_real.close(new_fd) != 0) fv_trace("close(%d): %s", new_fd, strerror(errno));
        errno = handle == NULL ? EBADF : EMFILE;
        return -1;
    }
    handle->descriptors++;
    __atomic_store_n(&fv.handles[new_fd], handle, __ATOMIC_RELEASE);
    return new_fd;
}
