// Shared declarations of the fake V4L2 camera (see fake_v4l2.c for what it is and its knobs).
// Everything here is internal to the preloaded library; nothing is exported but the libc
// entry points in intercept.c.
#ifndef FAKE_V4L2_H
#define FAKE_V4L2_H

#include <limits.h>
#include <linux/videodev2.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/select.h>
#include <sys/stat.h>
#include <sys/types.h>

#define FV_HIDDEN __attribute__((visibility("hidden")))

enum {
    FV_MAX_FORMATS = 8,
    FV_MAX_SIZES = 16,
    FV_MAX_RATES = 8,
    // vb2's VB2_MAX_FRAME: REQBUFS never grants more.
    FV_MAX_BUFFERS = 32,
    // File descriptors above this are never handed out as fake handles.
    FV_MAX_FD = 4096,
};

// ---- configuration (read once from the environment) ----

// Where FAKE_V4L2_PAUSE_AT stops the camera.
enum fv_phase {
    FV_PHASE_NONE, FV_PHASE_OPEN, FV_PHASE_S_FMT, FV_PHASE_S_PARM, FV_PHASE_REQBUFS, FV_PHASE_STREAMON,
    FV_PHASE_DQBUF,
};

struct fv_size {
    uint32_t width, height;
    unsigned rate_count;
    // Frames per second, in the order ENUM_FRAMEINTERVALS lists them; rates[0] is the default
    // S_FMT selects.
    uint32_t rates[FV_MAX_RATES];
};

struct fv_format {
    uint32_t fourcc;
    unsigned size_count;
    struct fv_size sizes[FV_MAX_SIZES];
};

#define FV_MAX_SIGNALS 16

struct fv_config {
    char device[PATH_MAX];
    char card[32];
    struct fv_format formats[FV_MAX_FORMATS];
    unsigned format_count;
    unsigned max_buffers;
    uint64_t unplug_after;          // 0: never
    int64_t reconnect_ns;           // < 0: never
    double delivered_fps;           // 0: the negotiated rate
    uint32_t jitter_us;
    uint32_t drop_every, corrupt_jpeg_every, jpeg_hole_every, corrupt_h264_every, h264_hole_every, short_every, error_every;
    uint64_t eio_after;             // 0: never
    uint64_t rate_change_frame;     // with rate_change_fps > 0: from this frame on...
    double rate_change_fps;         // ...frames come at this rate
    uint32_t timestamp_back_every, timestamp_jump_every;
    int64_t timestamp_back_ns, timestamp_jump_ns;
    enum fv_phase pause_phase;
    uint64_t pause_frame;           // FV_PHASE_DQBUF: frames handed out before the pause
    int64_t pause_ns;
    bool busy;
    int open_errno;                 // 0: opens succeed
    bool not_capture;
    int jpeg_subsampling;           // TJSAMP_422 or TJSAMP_420
    int jpeg_quality;
    uint32_t noise;                 // 0: clean pictures
    bool still;                     // the background does not pan
    bool mover;                     // a square crosses the picture in frames mover_start…mover_end-1
    uint32_t mover_start, mover_end;
    bool light_ramp;                // the scene's luma shifts by light_delta over light_start…light_end
    uint32_t light_start, light_end;
    int light_delta;
    bool blink;                     // a lamp is lit in the first blink_on frames of every blink_period
    uint32_t blink_period, blink_on;
    uint32_t picture_ring;          // 0: every frame painted; N: N pictures made once, in turn
    bool flash;                     // frames on a grid through whole seconds; those flash white
    uint32_t signal_at[FV_MAX_SIGNALS];   // FAKE_V4L2_SIGNAL_AT: sequences that raise SIGUSR1
    unsigned signal_count;
    bool trace;
    char report[PATH_MAX];
    char streamon_file[PATH_MAX];   // "": none
    char lock_file[PATH_MAX];
};

// ---- runtime state ----

enum fv_buffer_state { FV_BUF_DEQUEUED, FV_BUF_QUEUED, FV_BUF_DONE };

struct fv_buffer {
    enum fv_buffer_state state;
    bool dirty;                     // holds (or held) a picture since allocation
    uint32_t bytesused, flags, sequence;
    struct timeval timestamp;
};

// The memory behind one REQBUFS. It outlives REQBUFS(0) or close() while userspace still has
// buffers mapped (vb2's orphaned buffers), so it is counted apart from the device.
struct fv_allocation {
    int memfd;
    uint8_t *memory;                // the driver's own mapping of every buffer
    size_t total;
    unsigned count;
    size_t length;                  // sizeimage, as QUERYBUF reports it
    size_t stride;                  // length rounded up to whole pages: buffer i is at i*stride
    unsigned mappings[FV_MAX_BUFFERS];
    unsigned mapping_total;
    bool released;                  // no longer the device's queue
};

struct fv_handle;

// One appearance of the camera, from plug-in to unplug. A reconnect creates a new one in its
// power-on state; handles opened before keep pointing at the old one and get ENODEV.
struct fv_device {
    unsigned generation;
    bool gone;
    unsigned handles;               // open handles pointing here
    const struct fv_format *format;
    const struct fv_size *size;
    uint32_t fps;
    struct fv_handle *owner;        // the handle that owns the stream (uvcvideo "privileges")
    int lock_fd;                    // flock held while owned, when FAKE_V4L2_LOCK_FILE is set
    struct fv_allocation *allocation;
    struct fv_buffer buffers[FV_MAX_BUFFERS];
    unsigned queued[FV_MAX_BUFFERS], queued_count;      // FIFO of buffer indexes
    unsigned done[FV_MAX_BUFFERS], done_count;          // FIFO of buffer indexes
    bool streaming;
    bool queue_error;               // vb2's q->error: DQBUF fails with EIO until STREAMOFF
    int64_t start_ns;               // CLOCK_MONOTONIC at STREAMON
    uint64_t next_sequence;
    int64_t next_due_ns;
    int64_t controls[16];           // current values, indexed like the control table
};

// One open file description of the device; dup() gives it a second descriptor.
struct fv_handle {
    struct fv_device *device;
    unsigned descriptors;           // fds pointing here: the last close releases it
};

struct fv_state {
    struct fv_config config;
    struct fv_device *device;       // the plugged-in camera, or NULL while unplugged
    int64_t unplugged_at_ns;
    unsigned generations;
    struct fv_handle *handles[FV_MAX_FD];
    unsigned open_handles;
    uint64_t open_attempts, opens, frames_delivered, frames_dropped;
    int64_t last_sequence;
    bool ever_unplugged;
    bool ever_failed;               // FAKE_V4L2_EIO_AFTER happened (once per process)
    bool pause_reached;             // FAKE_V4L2_PAUSE_AT happened (once per process)
    bool reported;                  // the exit report is written
};

// ---- config.c ----

FV_HIDDEN void fv_read_config(struct fv_config *config);

// ---- pause.c ----

// Parses FAKE_V4L2_PAUSE_AT into the configuration.
FV_HIDDEN void fv_parse_pause(const char *text, struct fv_config *config);
FV_HIDDEN const char *fv_phase_name(enum fv_phase phase);
// Called with the lock held where the client enters `phase`: pauses (lock dropped) the first
// time the configured phase is reached, and says whether it did, so the caller can look again
// at state that may have changed meanwhile.
FV_HIDDEN bool fv_pause_at(enum fv_phase phase);
// Called with the lock held after a close or an munmap: once a pause has happened and the
// client has given the camera back (no descriptor open, no buffer mapped), writes
// "fake-v4l2: released the camera" to standard error, once.
FV_HIDDEN void fv_note_release(void);

// ---- timing.c ----

// True for sequence n-1, 2n-1, … (every nth frame); never when n is 0.
FV_HIDDEN bool fv_every(uint32_t n, uint64_t sequence);
// FAKE_V4L2_FLASH: a STREAMON time at or before `now` from which the frames fall on whole
// seconds of CLOCK_MONOTONIC; and whether a frame stamped `timestamp` is the one on a second.
FV_HIDDEN int64_t fv_aligned_start_ns(const struct fv_device *device, int64_t now);
FV_HIDDEN bool fv_is_flash(const struct fv_device *device, int64_t timestamp);
// When frame `sequence` of the running stream comes due (CLOCK_MONOTONIC ns).
FV_HIDDEN int64_t fv_due_ns(const struct fv_device *device, uint64_t sequence);
// The timestamp a frame that came due at `due` carries.
FV_HIDDEN int64_t fv_timestamp_ns(uint64_t sequence, int64_t due);

// ---- report.c ----

// Writes the exit report, once; `how` is "exit" (destructor) or "_exit".
FV_HIDDEN void fv_write_report(const char *how);
FV_HIDDEN void fv_write_streamon(int64_t start_ns);

// ---- fake_v4l2.c: state and handles ----

FV_HIDDEN extern struct fv_state fv;
// Reads the knobs and powers the camera on; called once, from fv_init().
FV_HIDDEN void fv_state_init(void);
FV_HIDDEN void fv_lock(void);
FV_HIDDEN void fv_unlock(void);
FV_HIDDEN int64_t fv_now_ns(void);
FV_HIDDEN void fv_trace(const char *format, ...) __attribute__((format(printf, 1, 2)));
// Copies a name into a fixed V4L2 field, cut to fit and NUL-terminated, as drivers do.
FV_HIDDEN void fv_copy_name(void *field, size_t capacity, const char *name);
FV_HIDDEN bool fv_is_fake_fd(int fd);
FV_HIDDEN bool fv_is_device_path(int dirfd, const char *path);
// Brings the camera up to date with the clock: frames that came due, unplug, reconnect.
FV_HIDDEN void fv_tick(int64_t now);
FV_HIDDEN bool fv_device_present(void);
FV_HIDDEN void fv_fill_stat(struct stat *st);
// /sys/dev/char/81:N/uevent for the node, and what it holds.
FV_HIDDEN const char *fv_uevent_path(void);
FV_HIDDEN int fv_uevent(char *text, size_t capacity);
FV_HIDDEN int fv_open_handle(int backing_fd);
FV_HIDDEN void fv_close_handle(int fd);
// Makes `new_fd` (a dup of `fd`'s backing descriptor) a second descriptor of the same handle;
// closes new_fd and fails with EMFILE when it is beyond the table.
FV_HIDDEN int fv_dup_handle(int fd, int new_fd);
FV_HIDDEN struct fv_handle *fv_handle_for(int fd);

// ---- device.c: the ioctl interface ----
// Handlers return 0 or a negative errno, as in the kernel; fv_ioctl sets errno.

FV_HIDDEN int fv_ioctl(int fd, unsigned long request, void *arg);
FV_HIDDEN const char *fv_ioctl_name(unsigned long request);
FV_HIDDEN void fv_device_init(struct fv_device *device);
// Makes the handle the stream's owner, or fails with -EBUSY when another handle owns it.
FV_HIDDEN int fv_acquire(struct fv_handle *handle);
FV_HIDDEN void fv_dismiss(struct fv_device *device);

// ---- queue.c: buffers, streaming and frame timing ----

FV_HIDDEN int fv_reqbufs(struct fv_handle *handle, struct v4l2_requestbuffers *request);
FV_HIDDEN int fv_querybuf(struct fv_handle *handle, struct v4l2_buffer *buffer);
FV_HIDDEN int fv_qbuf(struct fv_handle *handle, struct v4l2_buffer *buffer);
// May drop the lock while it waits for a frame.
FV_HIDDEN int fv_dqbuf(int fd, struct fv_handle *handle, struct v4l2_buffer *buffer);
FV_HIDDEN int fv_streamon(struct fv_handle *handle, const int *type);
FV_HIDDEN int fv_streamoff(struct fv_handle *handle, const int *type);
// Frees an allocation once it is released and no longer mapped.
FV_HIDDEN void fv_allocation_unref(struct fv_allocation *allocation);
// Fills frames that came due into queued buffers, or drops them; unplugs when it is time.
FV_HIDDEN void fv_advance(struct fv_device *device, int64_t now);
// What closing a handle does to the stream it owns.
FV_HIDDEN void fv_release_handle(struct fv_handle *handle);
// Poll events for a fake fd, and when the next frame could change them (INT64_MAX: never).
FV_HIDDEN short fv_poll_events(int fd, short requested, int64_t *next_change_ns);
// ---- mappings.c ----

// mmap of a fake fd (errno set on failure), and forgetting a mapping after munmap.
FV_HIDDEN void *fv_mmap(void *address, size_t length, int protection, int flags, int fd, off_t offset);
FV_HIDDEN void fv_forget_mapping(void *address, size_t length);
FV_HIDDEN unsigned fv_mapping_count(void);

// ---- controls.c ----

FV_HIDDEN void fv_controls_reset(struct fv_device *device);
FV_HIDDEN int fv_control_ioctl(struct fv_device *device, unsigned long request, void *arg);
// The current value of a control the camera has (0 for one it lacks).
FV_HIDDEN int32_t fv_control_value(const struct fv_device *device, uint32_t id);

// ---- scene.c: what happens in front of the camera ----

// FAKE_V4L2_MOVER: draws the moving square into an I420 picture when frame `sequence` has it.
FV_HIDDEN void fv_draw_mover(uint8_t *y, uint8_t *u, uint8_t *v, uint32_t width, uint32_t height,
                             uint32_t sequence);
// FAKE_V4L2_LIGHT_RAMP: shifts the luma plane by the light's change at frame `sequence`.
FV_HIDDEN void fv_apply_light(uint8_t *y, uint32_t width, uint32_t height, uint32_t sequence);
FV_HIDDEN void fv_draw_blink(uint8_t *y, uint32_t width, uint32_t height, uint32_t sequence);

// ---- picture.c: the test pattern and its formats ----

// Paints frame `sequence` in the device's current format into `destination` (capacity
// bytes) and returns the bytes used, or 0 when encoding failed. A `flash` frame has its
// lower half white.
FV_HIDDEN size_t fv_paint(uint32_t fourcc, uint32_t width, uint32_t height, uint32_t sequence,
                          bool flash, uint8_t *destination, size_t capacity);
// Makes the FAKE_V4L2_PICTURE_RING pictures of this format (pictures of up to `capacity`
// bytes) now, so the stream that follows only copies them.
FV_HIDDEN void fv_prepare_ring(uint32_t fourcc, uint32_t width, uint32_t height, size_t capacity);
FV_HIDDEN uint32_t fv_bytesperline(uint32_t fourcc, uint32_t width);
FV_HIDDEN uint32_t fv_sizeimage(uint32_t fourcc, uint32_t width, uint32_t height);
FV_HIDDEN const char *fv_format_description(uint32_t fourcc);

// ---- h264.c: the H264 format's encoder, one for the running stream ----

// Compresses an I420 picture into one Annex B access unit in `destination`, with an IDR every
// `i_period` pictures; returns its size, or 0 when encoding failed or it does not fit. Opens
// the encoder when there is none or the size or I period changed.
FV_HIDDEN size_t fv_h264_encode(uint8_t *y, uint8_t *u, uint8_t *v, uint32_t width, uint32_t height,
                                uint32_t fps, uint32_t i_period, uint32_t sequence, uint8_t *destination,
                                size_t capacity);
// Closes the encoder, if open: the next picture starts a new stream with an IDR.
FV_HIDDEN void fv_h264_close(void);

// ---- intercept*.c: the real libc functions behind the ones this library replaces ----

struct fv_real {
    int (*open)(const char *, int, ...);
    int (*close)(int);
    int (*dup)(int);
    int (*ioctl)(int, unsigned long, ...);
    void *(*mmap)(void *, size_t, int, int, int, off_t);
    int (*munmap)(void *, size_t);
    int (*ppoll)(struct pollfd *, nfds_t, const struct timespec *, const sigset_t *);
    ssize_t (*read)(int, void *, size_t);
    long (*syscall)(long, ...);
    int (*openat)(int, const char *, int, ...);
    int (*fstatat)(int, const char *, struct stat *, int);
    int (*statx)(int, const char *, int, unsigned, struct statx *);
    int (*faccessat)(int, const char *, int, int);
    FILE *(*fopen)(const char *, const char *);
    FILE *(*fopen64)(const char *, const char *);
    int (*select)(int, fd_set *, fd_set *, fd_set *, struct timeval *);
    int (*pselect)(int, fd_set *, fd_set *, fd_set *, const struct timespec *, const sigset_t *);
    __attribute__((noreturn)) void (*exit_now)(int);     // _exit
};
FV_HIDDEN extern struct fv_real fv_real;
// Finds the real functions and reads the knobs, once; every replaced entry point calls it.
FV_HIDDEN void fv_init(void);
FV_HIDDEN bool fv_names_device(int dirfd, const char *path);

#endif
