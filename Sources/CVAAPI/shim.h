#ifndef VT_CVAAPI_SHIM_H
#define VT_CVAAPI_SHIM_H

// libva's calls and constants import directly; this header only gathers what the encoder uses.
#include <va/va.h>
#include <va/va_drm.h>
#include <va/va_enc_h264.h>

#endif
