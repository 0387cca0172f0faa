// A client that leaves while streaming, without giving anything back: it opens the camera,
// maps and queues four buffers, starts the stream, and ends with _exit(0) (no destructors, as
// vtrecord's abort on a second signal) or exit(0) (destructors run), as the argument says. The
// exit report must show what it still held either way, and say which way it went.
//
//   abandon_stream DEVICE _exit|exit
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/videodev2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

enum { BUFFERS = 4 };

static int fd = -1;

static void request(unsigned long code, const char *name, void *argument) {
    if (ioctl(fd, code, argument) != 0) {
        fprintf(stderr, "%s: %s\n", name, strerror(errno));
        exit(1);
    }
}

int main(int argc, char **argv) {
    if (argc != 3 || (strcmp(argv[2], "_exit") != 0 && strcmp(argv[2], "exit") != 0)) {
        fprintf(stderr, "usage: %s DEVICE _exit|exit\n", argv[0]);
        return 2;
    }
    fd = open(argv[1], O_RDWR);
    if (fd < 0) {
        fprintf(stderr, "open %s: %s\n", argv[1], strerror(errno));
        return 1;
    }
    struct v4l2_requestbuffers buffers = {
        .count = BUFFERS, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP,
    };
    request(VIDIOC_REQBUFS, "VIDIOC_REQBUFS", &buffers);
    for (unsigned i = 0; i < buffers.count; i++) {
        struct v4l2_buffer buffer = {.index = i, .type = V4L2_BUF_TYPE_VIDEO_CAPTURE, .memory = V4L2_MEMORY_MMAP};
        request(VIDIOC_QUERYBUF, "VIDIOC_QUERYBUF", &buffer);
        void *memory = mmap(NULL, buffer.length, PROT_READ, MAP_SHARED, fd, buffer.m.offset);
        if (memory == MAP_FAILED) {
            fprintf(stderr, "mmap: %s\n", strerror(errno));
            return 1;
        }
        request(VIDIOC_QBUF, "VIDIOC_QBUF", &buffer);
    }
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request(VIDIOC_STREAMON, "VIDIOC_STREAMON", &type);
    if (strcmp(argv[2], "_exit") == 0) _exit(0);
    exit(0);
}
