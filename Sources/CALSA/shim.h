#ifndef VT_CALSA_SHIM_H
#define VT_CALSA_SHIM_H

// libasound's PCM API imports directly; the shim gives the module one header and the few
// values Swift cannot see (snd_pcm_status_t and friends are opaque and sized at run time).
#include <alsa/asoundlib.h>
// What wakes a capture waiting in poll(2) when the recording stops.
#include <sys/eventfd.h>

#endif
