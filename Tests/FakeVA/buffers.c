// Buffers: parameter buffers the client fills (encode or decode ones, as its context does),
// image buffers, and coded buffers whose output is handed out as a list of
// VACodedBufferSegments (FAKE_VA_SEGMENTS of them).
#include "decode.h"

#include <stdlib.h>
#include <string.h>

struct fva_buffer *fva_new_buffer(VABufferType type, VAContextID context, unsigned element_size, unsigned elements) {
    struct fva_buffer *buffer = calloc(1, sizeof *buffer);
    if (buffer == NULL) fva_out_of_memory();
    *buffer = (struct fva_buffer){.type = type, .context = context, .element_size = element_size,
                                  .elements = elements, .owns_data = true, .surface = VA_INVALID_SURFACE};
    size_t size = (size_t)element_size * elements;
    if (type == VAEncCodedBufferType) {
        buffer->coded = calloc(1, sizeof *buffer->coded);
        if (buffer->coded == NULL) fva_out_of_memory();
        buffer->coded->capacity = size;
        buffer->coded->data = malloc(size ? size : 1);
        if (buffer->coded->data == NULL) fva_out_of_memory();
    } else {
        buffer->data = calloc(1, size ? size : 1);
        if (buffer->data == NULL) fva_out_of_memory();
    }
    return buffer;
}

void fva_free_buffer(struct fva_buffer *buffer) {
    if (buffer == NULL) return;
    if (buffer->owns_data) free(buffer->data);
    if (buffer->coded != NULL) free(buffer->coded->data);
    free(buffer->coded);
    free(buffer);
}

static bool encode_type(VABufferType type) {
    switch (type) {
    case VAEncSequenceParameterBufferType:
    case VAEncPictureParameterBufferType:
    case VAEncSliceParameterBufferType:
    case VAEncPackedHeaderParameterBufferType:
    case VAEncPackedHeaderDataBufferType:
    case VAEncMiscParameterBufferType:
    case VAEncCodedBufferType:
        return true;
    default:
        return false;
    }
}

VAStatus fva_CreateBuffer(VADriverContextP ctx, VAContextID context, VABufferType type, unsigned int size,
                          unsigned int elements, void *data, VABufferID *id) {
    fva_lock();
    fva_trace("vaCreateBuffer(%#x, type %d, %u × %u)", context, type, size, elements);
    struct fva_driver *driver = fva_driver(ctx);
    const struct fva_context *owner = fva_table_get(&driver->contexts, context);
    VAStatus status = VA_STATUS_SUCCESS;
    if (!encode_type(type) && !fva_decode_buffer_type(type) && type != VAImageBufferType) {
        status = VA_STATUS_ERROR_UNSUPPORTED_BUFFERTYPE;
    } else if (owner == NULL) {
        status = VA_STATUS_ERROR_INVALID_CONTEXT;
    } else if (type != VAImageBufferType
               && (owner->decode != NULL ? !fva_decode_buffer_type(type) : !encode_type(type))) {
        // Decode buffers in an encode context, or the other way round.
        status = VA_STATUS_ERROR_UNSUPPORTED_BUFFERTYPE;
    } else if (size == 0 || elements == 0 || (uint64_t)size * elements > 1u << 30) {
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    }
    if (status != VA_STATUS_SUCCESS) {
        fva_unlock();
        return status;
    }
    struct fva_buffer *buffer = fva_new_buffer(type, context, size, elements);
    if (data != NULL && buffer->data != NULL) memcpy(buffer->data, data, (size_t)size * elements);
    *id = fva_table_insert(&driver->buffers, buffer);
    if (*id == VA_INVALID_ID) {
        fva_free_buffer(buffer);
        status = VA_STATUS_ERROR_MAX_NUM_EXCEEDED;
    }
    fva_trace("  buffer %#x", *id);
    fva_unlock();
    return status;
}

VAStatus fva_BufferSetNumElements(VADriverContextP ctx, VABufferID id, unsigned int elements) {
    fva_lock();
    fva_trace("vaBufferSetNumElements(%#x, %u)", id, elements);
    struct fva_buffer *buffer = fva_table_get(&fva_driver(ctx)->buffers, id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (buffer == NULL) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else if (elements == 0 || elements > buffer->elements || buffer->coded != NULL) {
        status = VA_STATUS_ERROR_INVALID_PARAMETER;
    } else {
        buffer->elements = elements;
    }
    fva_unlock();
    return status;
}

// Lays the coded output out as a chain of segments, each a part of the one data block.
static void *map_coded(struct fva_coded *coded) {
    unsigned count = fva_knobs.segments;
    size_t share = coded->used / count, offset = 0;
    for (unsigned i = 0; i < count; i++) {
        size_t size = i + 1 == count ? coded->used - offset : share;
        coded->segments[i] = (VACodedBufferSegment){
            .size = (uint32_t)size,
            .bit_offset = 0,
            .status = coded->status,
            .buf = coded->data + offset,
            .next = i + 1 < count ? &coded->segments[i + 1] : NULL,
        };
        offset += size;
    }
    return &coded->segments[0];
}

// Mapping a coded buffer waits for the engine to have written it (cost.c), as real drivers do.
VAStatus fva_MapBuffer(VADriverContextP ctx, VABufferID id, void **address) {
    fva_lock();
    fva_trace("vaMapBuffer(%#x)", id);
    struct fva_buffer *buffer;
    int64_t done_ns;
    while ((buffer = fva_table_get(&fva_driver(ctx)->buffers, id)) != NULL && buffer->coded != NULL
           && (done_ns = buffer->coded->done_ns) > fva_now_ns()) {
        fva_unlock();
        fva_sleep_until(done_ns);
        fva_lock();
    }
    VAStatus status = VA_STATUS_SUCCESS;
    if (buffer == NULL) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else {
        *address = buffer->coded != NULL ? map_coded(buffer->coded) : buffer->data;
        buffer->mapped++;
    }
    fva_unlock();
    return status;
}

VAStatus fva_UnmapBuffer(VADriverContextP ctx, VABufferID id) {
    fva_lock();
    fva_trace("vaUnmapBuffer(%#x)", id);
    struct fva_buffer *buffer = fva_table_get(&fva_driver(ctx)->buffers, id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (buffer == NULL) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else if (buffer->mapped == 0) {
        status = VA_STATUS_ERROR_OPERATION_FAILED;
    } else {
        buffer->mapped--;
    }
    fva_unlock();
    return status;
}

VAStatus fva_DestroyBuffer(VADriverContextP ctx, VABufferID id) {
    fva_lock();
    fva_trace("vaDestroyBuffer(%#x)", id);
    struct fva_driver *driver = fva_driver(ctx);
    struct fva_buffer *buffer = fva_table_get(&driver->buffers, id);
    VAStatus status = VA_STATUS_SUCCESS;
    if (buffer == NULL) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else if (buffer->type == VAImageBufferType && buffer->context == VA_INVALID_ID) {
        // An image's buffer goes with vaDestroyImage.
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else {
        fva_free_buffer(fva_table_take(&driver->buffers, id));
    }
    fva_unlock();
    return status;
}

VAStatus fva_BufferInfo(VADriverContextP ctx, VABufferID id, VABufferType *type, unsigned int *size,
                        unsigned int *elements) {
    fva_lock();
    fva_trace("vaBufferInfo(%#x)", id);
    struct fva_buffer *buffer = fva_table_get(&fva_driver(ctx)->buffers, id);
    VAStatus status = VA_STATUS_ERROR_INVALID_BUFFER;
    if (buffer != NULL) {
        *type = buffer->type;
        *size = buffer->element_size;
        *elements = buffer->elements;
        status = VA_STATUS_SUCCESS;
    }
    fva_unlock();
    return status;
}

VAStatus fva_SyncBuffer(VADriverContextP ctx, VABufferID id, uint64_t timeout) {
    fva_lock();
    fva_trace("vaSyncBuffer(%#x)", id);
    const struct fva_buffer *buffer = fva_table_get(&fva_driver(ctx)->buffers, id);
    VAStatus status = VA_STATUS_SUCCESS;
    int64_t done_ns = 0;
    if (buffer == NULL) {
        status = VA_STATUS_ERROR_INVALID_BUFFER;
    } else if (buffer->coded == NULL) {
        status = VA_STATUS_ERROR_UNSUPPORTED_BUFFERTYPE;
    } else {
        done_ns = buffer->coded->done_ns;
    }
    fva_unlock();
    return status == VA_STATUS_SUCCESS ? fva_wait_for_engine(done_ns, timeout) : status;
}
