/* The CUDA runtime operations of the device halo transports (cuda/mpi_halo_ops.cu), declared without
 * CUDA types so that src/mpi/halo*.c never include a CUDA header: streams and events are void*, a
 * cudaError_t an int. Each operation that can fail returns a status whose message starts with "f: ". */
#ifndef TRIDI_HALO_BACKEND_H
#define TRIDI_HALO_BACKEND_H

#include "mpi_internal.h"

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* A CUDA failure of call as a TRIDI_ERROR_CUDA status. e: a cudaError_t. */
TRIDI_PRIVATE tridi_status tridi_halo_cuda_fail(const char *f, const char *call, int e);
/* The GPU array lives on, checking that it is device memory and that this rank sees a GPU. */
tridi_status tridi_halo_device_of(const char *f, const void *array, int *device);
void tridi_halo_use_device(int device);

/* Memory: device (pinned = 0) or pinned host (pinned = 1); free accepts NULL. */
TRIDI_PRIVATE tridi_status tridi_halo_mem_alloc(const char *f, void **p, size_t bytes, int pinned);
TRIDI_PRIVATE void tridi_halo_mem_free(void *p, int pinned);
/* bytes from src to dst (device or pinned host, either way), queued on stream. */
tridi_status tridi_halo_copy_async(const char *f, void *dst, const void *src, size_t bytes, void *stream);
/* A 3D box of width bytes x height rows x depth planes between two pitched arrays (rows of pitch bytes,
 * planes of rows rows), queued on stream: the copy engines. */
tridi_status tridi_halo_copy_3d(const char *f, void *dst, size_t dst_pitch, size_t dst_rows, const void *src,
                                size_t src_pitch, size_t src_rows, size_t width, size_t height, size_t depth,
                                void *stream);

/* Streams and events. poll: *done = 1 once everything queued before has finished. */
TRIDI_PRIVATE tridi_status tridi_halo_stream_sync(const char *f, void *stream);
TRIDI_PRIVATE tridi_status tridi_halo_stream_poll(const char *f, void *stream, int *done);
tridi_status tridi_halo_stream_create(const char *f, void **stream);
void tridi_halo_stream_destroy(void *stream);
tridi_status tridi_halo_event_create(const char *f, void **event);
void tridi_halo_event_destroy(void *event);
tridi_status tridi_halo_event_record(const char *f, void *event, void *stream);
tridi_status tridi_halo_event_poll(const char *f, void *event, int *done);
/* Work queued on stream after this waits for event (no host wait). */
tridi_status tridi_halo_stream_wait(const char *f, void *stream, void *event);

/* CUDA IPC: the handle (64 bytes) of the allocation holding array and the array's byte offset in it;
 * -1 when CUDA IPC cannot export it. */
int tridi_halo_ipc_export(const void *array, void *handle, int64_t *offset);
/* Whether GPU device can write into GPU peer's memory. */
int tridi_halo_can_reach(int device, int peer);
/* The 16 bytes of a GPU's UUID. */
TRIDI_PRIVATE tridi_status tridi_halo_gpu_uuid(const char *f, int device, unsigned char uuid[16]);

#ifdef __cplusplus
}
#endif

#endif
