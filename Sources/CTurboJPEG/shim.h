#ifndef VT_CTURBOJPEG_SHIM_H
#define VT_CTURBOJPEG_SHIM_H

// turbojpeg's API imports directly; the shim only exists so the module has one header.
#include <turbojpeg.h>

#endif
