// The camera's controls, with the names, ranges and quirks of a typical UVC webcam: integers
// are clamped and rounded to their step (uvcvideo does not refuse them), menus out of range give
// ERANGE and a menu item the camera skips gives EINVAL. Values live in the device, so they
// persist across opens and return to their defaults when the camera is replugged. A camera
// that offers H264 also has the codec class with its I period.
#define _GNU_SOURCE
#include "fake_v4l2.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

struct fv_control {
    uint32_t id;
    uint32_t type;
    const char *name;
    int32_t minimum, maximum, step, default_value;
    const char *const *menu;
    uint32_t menu_skip;                 // bit i: the camera does not offer menu item i
};

static const char *const power_line_menu[] = {"Disabled", "50 Hz", "60 Hz"};
static const char *const exposure_menu[] = {
    "Auto Mode", "Manual Mode", "Shutter Priority Mode", "Aperture Priority Mode",
};

enum { EXPOSURE_AUTO_INDEX = 9, EXPOSURE_MANUAL = 1 };

// In id order, as NEXT_CTRL enumerates them; class entries head their class.
static const struct fv_control controls[] = {
    {V4L2_CID_USER_CLASS, V4L2_CTRL_TYPE_CTRL_CLASS, "User Controls", 0, 0, 0, 0, NULL, 0},
    {V4L2_CID_BRIGHTNESS, V4L2_CTRL_TYPE_INTEGER, "Brightness", -64, 64, 1, 0, NULL, 0},
    {V4L2_CID_CONTRAST, V4L2_CTRL_TYPE_INTEGER, "Contrast", 0, 64, 1, 32, NULL, 0},
    {V4L2_CID_SATURATION, V4L2_CTRL_TYPE_INTEGER, "Saturation", 0, 128, 1, 64, NULL, 0},
    {V4L2_CID_AUTO_WHITE_BALANCE, V4L2_CTRL_TYPE_BOOLEAN, "White Balance Temperature, Auto",
     0, 1, 1, 1, NULL, 0},
    {V4L2_CID_POWER_LINE_FREQUENCY, V4L2_CTRL_TYPE_MENU, "Power Line Frequency",
     0, 2, 1, 1, power_line_menu, 0},
    // Only on a camera that offers H264 (see offered()).
    {V4L2_CID_CODEC_CLASS, V4L2_CTRL_TYPE_CTRL_CLASS, "Codec Controls", 0, 0, 0, 0, NULL, 0},
    {V4L2_CID_MPEG_VIDEO_H264_I_PERIOD, V4L2_CTRL_TYPE_INTEGER, "H264 I-Frame Period",
     1, 600, 1, 30, NULL, 0},
    {V4L2_CID_CAMERA_CLASS, V4L2_CTRL_TYPE_CTRL_CLASS, "Camera Controls", 0, 0, 0, 0, NULL, 0},
    {V4L2_CID_EXPOSURE_AUTO, V4L2_CTRL_TYPE_MENU, "Exposure, Auto",
     0, 3, 1, 3, exposure_menu, (1u << 0) | (1u << 2)},
    {V4L2_CID_EXPOSURE_ABSOLUTE, V4L2_CTRL_TYPE_INTEGER, "Exposure (Absolute)",
     3, 2047, 1, 250, NULL, 0},
};
enum { CONTROL_COUNT = sizeof controls / sizeof controls[0] };
_Static_assert(CONTROL_COUNT <= sizeof ((struct fv_device *)0)->controls / sizeof(int64_t),
               "fv_device.controls holds every control");

// The codec controls exist only on a camera that offers H264, so every other camera lists the
// controls it always had.
static bool offered(int index) {
    if (V4L2_CTRL_ID2WHICH(controls[index].id) != V4L2_CTRL_CLASS_CODEC) return true;
    for (unsigned i = 0; i < fv.config.format_count; i++) {
        if (fv.config.formats[i].fourcc == V4L2_PIX_FMT_H264) return true;
    }
    return false;
}

void fv_controls_reset(struct fv_device *device) {
    for (unsigned i = 0; i < CONTROL_COUNT; i++) device->controls[i] = controls[i].default_value;
}

static int find(uint32_t id) {
    for (int i = 0; i < CONTROL_COUNT; i++) {
        if (controls[i].id == id && offered(i)) return i;
    }
    return -1;
}

// The control a QUERYCTRL id names: exact, or with NEXT_CTRL the first with a larger id.
static int lookup(uint32_t id) {
    if ((id & (V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND)) == 0) return find(id);
    uint32_t after = id & ~(V4L2_CTRL_FLAG_NEXT_CTRL | V4L2_CTRL_FLAG_NEXT_COMPOUND);
    for (int i = 0; i < CONTROL_COUNT; i++) {
        if (controls[i].id > after && offered(i)) return i;
    }
    return -1;
}

static uint32_t flags_of(const struct fv_device *device, int index) {
    if (controls[index].type == V4L2_CTRL_TYPE_CTRL_CLASS) {
        return V4L2_CTRL_FLAG_READ_ONLY | V4L2_CTRL_FLAG_WRITE_ONLY;
    }
    // Exposure time is the camera's to choose unless exposure is manual.
    if (controls[index].id == V4L2_CID_EXPOSURE_ABSOLUTE
        && device->controls[EXPOSURE_AUTO_INDEX] != EXPOSURE_MANUAL) {
        return V4L2_CTRL_FLAG_INACTIVE;
    }
    return 0;
}

static int queryctrl(const struct fv_device *device, struct v4l2_queryctrl *q) {
    int index = lookup(q->id);
    if (index < 0) return -EINVAL;
    const struct fv_control *c = &controls[index];
    memset(q, 0, sizeof *q);
    q->id = c->id;
    q->type = c->type;
    fv_copy_name(q->name, sizeof q->name, c->name);
    q->minimum = c->minimum;
    q->maximum = c->maximum;
    q->step = c->step;
    q->default_value = c->default_value;
    q->flags = flags_of(device, index);
    return 0;
}

static int query_ext_ctrl(const struct fv_device *device, struct v4l2_query_ext_ctrl *q) {
    int index = lookup(q->id);
    if (index < 0) return -EINVAL;
    const struct fv_control *c = &controls[index];
    memset(q, 0, sizeof *q);
    q->id = c->id;
    q->type = c->type;
    fv_copy_name(q->name, sizeof q->name, c->name);
    q->minimum = c->minimum;
    q->maximum = c->maximum;
    q->step = (uint64_t)c->step;
    q->default_value = c->default_value;
    q->flags = flags_of(device, index);
    q->elem_size = c->type == V4L2_CTRL_TYPE_CTRL_CLASS ? 0 : sizeof(int32_t);
    q->elems = 1;
    return 0;
}

static int querymenu(struct v4l2_querymenu *m) {
    int index = find(m->id);
    if (index < 0 || controls[index].menu == NULL) return -EINVAL;
    const struct fv_control *c = &controls[index];
    if ((int64_t)m->index < c->minimum || (int64_t)m->index > c->maximum
        || (c->menu_skip & (1u << m->index)) != 0) {
        return -EINVAL;
    }
    memset(m->name, 0, sizeof m->name);
    m->reserved = 0;
    fv_copy_name(m->name, sizeof m->name, c->menu[m->index]);
    return 0;
}

// The value the camera would take for a request, or an error as uvcvideo gives it.
static int validate(int index, int32_t *value) {
    const struct fv_control *c = &controls[index];
    switch (c->type) {
    case V4L2_CTRL_TYPE_INTEGER: {
        int64_t v = *value;
        int64_t steps = (v - c->minimum + (v >= c->minimum ? c->step / 2 : -(c->step / 2))) / c->step;
        v = c->minimum + steps * c->step;
        if (v < c->minimum) v = c->minimum;
        if (v > c->maximum) v = c->maximum;
        *value = (int32_t)v;
        return 0;
    }
    case V4L2_CTRL_TYPE_BOOLEAN:
        *value = *value != 0;
        return 0;
    case V4L2_CTRL_TYPE_MENU:
        if (*value < c->minimum || *value > c->maximum) return -ERANGE;
        if ((c->menu_skip & (1u << *value)) != 0) return -EINVAL;
        return 0;
    default:
        return -EINVAL;     // class entries carry no value
    }
}

static int settable(uint32_t id) {
    int index = find(id);
    if (index < 0 || controls[index].type == V4L2_CTRL_TYPE_CTRL_CLASS) return -1;
    return index;
}

static bool class_exists(uint32_t which) {
    for (int i = 0; i < CONTROL_COUNT; i++) {
        if (V4L2_CTRL_ID2WHICH(controls[i].id) == which && offered(i)) return true;
    }
    return false;
}

static int ext_ctrls(struct fv_device *device, unsigned long request, struct v4l2_ext_controls *set) {
    bool getting = request == VIDIOC_G_EXT_CTRLS;
    bool defaults = set->which == V4L2_CTRL_WHICH_DEF_VAL;
    if (defaults && !getting) return -EINVAL;
    if (set->which == V4L2_CTRL_WHICH_REQUEST_VAL) return -EINVAL;
    if (set->which != V4L2_CTRL_WHICH_CUR_VAL && !defaults && !class_exists(set->which)) return -EINVAL;
    if (set->count == 0) return 0;
    if (set->controls == NULL) return -EFAULT;
    // S_EXT_CTRLS validates everything first, so a failure means nothing was set: error_idx is
    // then count, as the API says. G and TRY point at the control that failed.
    int32_t values[1024];          // the kernel's V4L2_CTRLS_MAX
    if (set->count > sizeof values / sizeof values[0]) return -ENOMEM;
    for (uint32_t i = 0; i < set->count; i++) {
        struct v4l2_ext_control *control = &set->controls[i];
        set->error_idx = request == VIDIOC_S_EXT_CTRLS ? set->count : i;
        bool in_class = set->which == V4L2_CTRL_WHICH_CUR_VAL || defaults
            || V4L2_CTRL_ID2WHICH(control->id) == set->which;
        int index = settable(control->id);
        if (!in_class || index < 0) return -EINVAL;
        if (getting) {
            control->value = defaults ? controls[index].default_value : (int32_t)device->controls[index];
            continue;
        }
        values[i] = control->value;
        int error = validate(index, &values[i]);
        if (error != 0) return error;
    }
    set->error_idx = 0;
    if (getting) return 0;
    for (uint32_t i = 0; i < set->count; i++) {
        set->controls[i].value = values[i];
        if (request == VIDIOC_S_EXT_CTRLS) {
            int index = settable(set->controls[i].id);
            device->controls[index] = values[i];
            fv_trace("control %s = %d", controls[index].name, values[i]);
        }
    }
    return 0;
}

int fv_control_ioctl(struct fv_device *device, unsigned long request, void *arg) {
    switch (request) {
    case VIDIOC_QUERYCTRL: return queryctrl(device, arg);
    case VIDIOC_QUERY_EXT_CTRL: return query_ext_ctrl(device, arg);
    case VIDIOC_QUERYMENU: return querymenu(arg);
    case VIDIOC_G_CTRL: {
        struct v4l2_control *control = arg;
        int index = settable(control->id);
        if (index < 0) return -EINVAL;
        control->value = (int32_t)device->controls[index];
        return 0;
    }
    case VIDIOC_S_CTRL: {
        struct v4l2_control *control = arg;
        int index = settable(control->id);
        if (index < 0) return -EINVAL;
        int32_t value = control->value;
        int error = validate(index, &value);
        if (error != 0) return error;
        device->controls[index] = value;
        control->value = value;
        fv_trace("control %s = %d", controls[index].name, value);
        return 0;
    }
    case VIDIOC_G_EXT_CTRLS: case VIDIOC_S_EXT_CTRLS: case VIDIOC_TRY_EXT_CTRLS:
        return ext_ctrls(device, request, arg);
    default:
        return -ENOTTY;
    }
}

int32_t fv_control_value(const struct fv_device *device, uint32_t id) {
    int index = find(id);
    return index < 0 ? 0 : (int32_t)device->controls[index];
}
