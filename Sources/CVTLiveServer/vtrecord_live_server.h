// The boundary between vtrecord and its HTTP server, libvtrecord-http.so, which vtrecord loads
// only for --http. Only C types cross it: bytes, strings, numbers and function pointers. The
// server's Swift code (Hummingbird, SwiftNIO, swift-prometheus) lives in the library alone, so a
// recording without --http never loads it, and its types never meet vtrecord's.
//
// Bytes and strings a function returns are malloc'ed; the side that receives them frees them.
#ifndef VTRECORD_LIVE_SERVER_H
#define VTRECORD_LIVE_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/// Raises when a function's meaning changes: vtrecord refuses a library of another version.
#define VTL_VERSION 1

/// What the recording answers the server. `context` is passed back as it was given.
typedef struct vtl_host {
    void *context;
    /// The live summary as JSON (the schema of --json-summary).
    uint8_t *(*status)(void *context, size_t *count);
    /// The figures /metrics exposes, as a JSON array of {name, help, kind, value, labels}.
    uint8_t *(*metrics)(void *context, size_t *count);
    /// An event with a label (NULL: none) and a duration in seconds (negative: a moment); NULL
    /// once taken, or the text of why not.
    char *(*event)(void *context, const char *label, double duration);
    /// A clean stop, as SIGTERM.
    void (*stop)(void *context);
    /// A JPEG of the next picture, answered once through `done` (from any thread) with the
    /// bytes or the text of an error. NULL when the recording takes no stills.
    void (*snapshot)(void *context, void *request,
                     void (*done)(void *request, const uint8_t *jpeg, size_t count, const char *error));
    /// A still of a recorded file (its first picture, 320 pixels wide); NULL when it has none.
    uint8_t *(*thumbnail)(void *context, const char *path, size_t *count);
    /// Whether the recording is writing to the file now.
    bool (*file_open)(void *context, const char *path);
} vtl_host;

/// A running server.
typedef struct vtl_server vtl_server;

/// The server's functions. `start` reads its settings (JSON), binds its socket and returns
/// once it listens, or returns NULL with the text of why not in `*error`.
typedef struct vtl_functions {
    int version;
    vtl_server *(*start)(const char *settings, vtl_host host, char **error);
    /// The port it listens on (the one chosen for port 0).
    int (*port)(vtl_server *server);
    /// The live H.264 stream: an fMP4 init segment and its codec string, each picture's
    /// fragment, and the HLS parts made of several.
    void (*stream_start)(vtl_server *server, const uint8_t *init, size_t count, const char *codec);
    void (*stream_publish)(vtl_server *server, const uint8_t *fragment, size_t count, bool key_frame);
    void (*stream_publish_part)(vtl_server *server, const uint8_t *part, size_t count, double duration,
                                bool independent, bool ends_segment);
    void (*stream_end)(vtl_server *server);
    /// A viewer waits for a keyframe; the recording asked its encoder for one.
    bool (*key_frame_wanted)(vtl_server *server);
    void (*key_frame_asked)(vtl_server *server);
    /// A player read the HLS playlist in the last 30 s.
    bool (*hls_watched)(vtl_server *server);
    /// /stream.mjpeg and /snapshot.jpg: whether anyone waits for a JPEG, and the newest one.
    bool (*jpeg_wanted)(vtl_server *server);
    void (*jpeg_publish)(vtl_server *server, const uint8_t *jpeg, size_t count);
    /// What the server did so far, as JSON (the summary's `http`).
    uint8_t *(*report)(vtl_server *server, size_t *count);
    /// Ends every answer and stops listening; `report` still answers after.
    void (*stop)(vtl_server *server);
    /// Frees the server, stopped or not; the callbacks are not called after.
    void (*release)(vtl_server *server);
} vtl_functions;

/// The library's one entry point: its functions.
typedef const vtl_functions *(*vtl_entry)(void);
#define VTL_ENTRY_NAME "vtrecord_live_server"

#endif
