#ifndef VT_CV4L2_SHIM_H
#define VT_CV4L2_SHIM_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <linux/videodev2.h>
#include <libv4l2.h>

// VIDIOC_* are _IOR/_IOW/_IOWR function-like macros, which Swift cannot import.
static const unsigned long vt_VIDIOC_QUERYCAP = VIDIOC_QUERYCAP;
static const unsigned long vt_VIDIOC_ENUM_FMT = VIDIOC_ENUM_FMT;
static const unsigned long vt_VIDIOC_G_FMT = VIDIOC_G_FMT;
static const unsigned long vt_VIDIOC_S_FMT = VIDIOC_S_FMT;
static const unsigned long vt_VIDIOC_TRY_FMT = VIDIOC_TRY_FMT;
static const unsigned long vt_VIDIOC_G_PARM = VIDIOC_G_PARM;
static const unsigned long vt_VIDIOC_S_PARM = VIDIOC_S_PARM;
static const unsigned long vt_VIDIOC_ENUM_FRAMESIZES = VIDIOC_ENUM_FRAMESIZES;
static const unsigned long vt_VIDIOC_ENUM_FRAMEINTERVALS = VIDIOC_ENUM_FRAMEINTERVALS;
static const unsigned long vt_VIDIOC_REQBUFS = VIDIOC_REQBUFS;
static const unsigned long vt_VIDIOC_QUERYBUF = VIDIOC_QUERYBUF;
static const unsigned long vt_VIDIOC_QBUF = VIDIOC_QBUF;
static const unsigned long vt_VIDIOC_DQBUF = VIDIOC_DQBUF;
static const unsigned long vt_VIDIOC_STREAMON = VIDIOC_STREAMON;
static const unsigned long vt_VIDIOC_STREAMOFF = VIDIOC_STREAMOFF;
static const unsigned long vt_VIDIOC_QUERYCTRL = VIDIOC_QUERYCTRL;
static const unsigned long vt_VIDIOC_G_CTRL = VIDIOC_G_CTRL;
static const unsigned long vt_VIDIOC_S_CTRL = VIDIOC_S_CTRL;
static const unsigned long vt_VIDIOC_QUERY_EXT_CTRL = VIDIOC_QUERY_EXT_CTRL;
static const unsigned long vt_VIDIOC_QUERYMENU = VIDIOC_QUERYMENU;
static const unsigned long vt_VIDIOC_G_EXT_CTRLS = VIDIOC_G_EXT_CTRLS;
static const unsigned long vt_VIDIOC_S_EXT_CTRLS = VIDIOC_S_EXT_CTRLS;
static const unsigned long vt_VIDIOC_ENUMINPUT = VIDIOC_ENUMINPUT;
static const unsigned long vt_VIDIOC_G_INPUT = VIDIOC_G_INPUT;

// V4L2_PIX_FMT_* are v4l2_fourcc() function-like macros.
static const uint32_t vt_V4L2_PIX_FMT_YUYV = V4L2_PIX_FMT_YUYV;
static const uint32_t vt_V4L2_PIX_FMT_NV12 = V4L2_PIX_FMT_NV12;
static const uint32_t vt_V4L2_PIX_FMT_YUV420 = V4L2_PIX_FMT_YUV420;
static const uint32_t vt_V4L2_PIX_FMT_MJPEG = V4L2_PIX_FMT_MJPEG;
static const uint32_t vt_V4L2_PIX_FMT_JPEG = V4L2_PIX_FMT_JPEG;

// v4l2_open and v4l2_ioctl are variadic, which Swift cannot call.
static inline int vt_v4l2_open(const char *path, int flags) {
    return v4l2_open(path, flags);
}
static inline int vt_v4l2_ioctl(int fd, unsigned long request, void *arg) {
    return v4l2_ioctl(fd, request, arg);
}

#endif
