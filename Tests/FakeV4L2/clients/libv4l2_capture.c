// A minimal capture client that goes through libv4l2 (v4l2_open, v4l2_ioctl, v4l2_mmap), as
// vtrecord's capture does, so tests can watch libv4l2 at work on the fake camera: asked for a
// format the camera does not have, libv4l2 converts from one it has (decoding MJPEG itself).
//
//   libv4l2_capture DEVICE FOURCC WIDTH HEIGHT FRAMES > pictures
//
// Writes each dequeued picture (bytesused bytes) to standard output and, to standard error,
// the negotiated format and one line per frame: "frame SEQUENCE BYTESUSED".
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { BUFFERS = 4 };

static int fd = -1;

static void request(unsigned long code, const char *name, void *argument) {
    if (v4l2_ioctl(fd, code, argument) != 0) {
        fprintf(stderr, "%s: %s\n", name, strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 6 || strlen(argv[2]) != 4) {
        fprintf(stderr, "usage: %s DEVICE FOURCC WIDTH HEIGHT FRAMES\n", argv[0]);
        return 2;
    }
    fd = v4l2_open(argv[1], O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct v4l2_format format = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE};
    format.fmt.pix.pixelformat = v4l2_fourcc(argv[2][0], argv[2][1], argv[2][2], argv[2][3]);
    format.fmt.pix.width = (unsigned)strtoul(argv[3], NULL, 10);
    format.fmt.pix.height = (unsigned)strtoul(argv[4], NULL, 10);
    format.fmt.pix.field = V4L2_FIELD_ANY;
    request(VIDIOC_S_FMT, "VIDIOC_S_FMT", &format);
    fprintf(stderr, "format %.4s %ux%u %u\n", (const char *)&format.fmt.pix.pixelformat,
            format.fmt.pix.width, format.fmt.pix.height, format.fmt.pix.sizeimage);

    struct v4l2_requestbuffers buffers = {
        .count = BUFFERS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
    };
    request(VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &buffers);
    void *memory[BUFFERS];
    size_t lengths[BUFFERS];
    for (unsigned i = 0; i < buffers.count && i < BUFFERS; i++) {
        struct v4l2_buffer buffer = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
        request(VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buffer);
        lengths[i] = buffer.length;
        memory[i] = v4l2_mmap(NULL, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, buffer.m.offset);
        if (memory[i] == MAP_FAILED) {
            fprintf(stderr, "mmap: %s\n", strerror(errno));
            return 1;
        }
        request(VIDIOC_QBUF, "VIDIOC_QBUF", &buffer);
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request(VIDIOC_STREAMON, "VIDIOC_STREAMON", &type);
    unsigned long frames = strtoul(argv[5], NULL, 10);
    for (unsigned long n = 0; n < frames; n++) {
        struct v4l2_buffer buffer = {.type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
        request(VIDIOC_DQBUF, "VIDIOC_DQBUF", &buffer);
        fprintf(stderr, "frame %u %u\n", buffer.sequence, buffer.bytesused);
        if (fwrite(memory[buffer.index], 1, buffer.bytesused, stdout) != buffer.bytesused) {
            fprintf(stderr, "write: %s\n", strerror(errno));
            return 1;
        }
        request(VIDIOC_QBUF, "VIDIOC_QBUF", &buffer);
    }
    request(VIDIOC_STREAMOFF, "VIDIOC_STREAMOFF", &type);
    for (unsigned i = 0; i < buffers.count && i < BUFFERS; i++) {
        if (v4l2_munmap(memory[i], lengths[i]) != 0) {
            fprintf(stderr, "munmap: %s\n", strerror(errno));
            return 1;
        }
    }
    buffers.count = 0;
    request(VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &buffers);
    if (v4l2_close(fd) != 0) {
        fprintf(stderr, "close: %s\n", strerror(errno));
        return 1;
    }
    if (fflush(stdout) != 0) {
        fprintf(stderr, "flush: %s\n", strerror(errno));
        return 1;
    }
    return 0;
}
