#ifndef VT_CYUV_SHIM_H
#define VT_CYUV_SHIM_H

// libyuv's headers are C++-aware but plain C when included from C; they import directly.
#include <stdint.h>
#include <libyuv/convert.h>
#include <libyuv/convert_from.h>
#include <libyuv/planar_functions.h>
#include <libyuv/scale.h>

#endif
