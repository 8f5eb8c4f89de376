/* tridi_get_build_info / tridi_build_info_string: what this build contains (backends, transports,
 * CUDA architectures, Fortran), from the definitions src/CMakeLists.txt passes. */
#include "tridi_internal.h"

#include <stddef.h>
#include <string.h>

#define TRIDI_STR2(x) #x
#define TRIDI_STR(x) TRIDI_STR2(x)

#ifndef TRIDI_BUILD_CUDA_ARCHITECTURES
#define TRIDI_BUILD_CUDA_ARCHITECTURES ""
#endif

#ifdef _OPENMP
#define TRIDI_INFO_OPENMP _OPENMP
#define TRIDI_INFO_CPU "cpu (OpenMP " TRIDI_STR(_OPENMP) ")"
#else
#define TRIDI_INFO_OPENMP 0
#define TRIDI_INFO_CPU "cpu (no OpenMP)"
#endif

#ifdef TRIDI_HAVE_CUDA
#define TRIDI_INFO_CUDA ", cuda (sm " TRIDI_BUILD_CUDA_ARCHITECTURES ")"
#else
#define TRIDI_INFO_CUDA ", no cuda"
#endif

/* Host arrays always go through MPI; device halos by IPC, CUDA-aware MPI or staging with CUDA, and
 * NCCL when it was found (tridi_mpi.h, tridi_transport). */
#ifdef TRIDI_HAVE_NCCL
#define TRIDI_INFO_NCCL ", nccl"
#else
#define TRIDI_INFO_NCCL ""
#endif
#if defined(TRIDI_HAVE_MPI) && defined(TRIDI_HAVE_CUDA)
#define TRIDI_INFO_MPI ", mpi (halos: host, ipc, cuda-aware, staged" TRIDI_INFO_NCCL ")"
#elif defined(TRIDI_HAVE_MPI)
#define TRIDI_INFO_MPI ", mpi (halos: host)"
#else
#define TRIDI_INFO_MPI ", no mpi"
#endif

#ifdef TRIDI_HAVE_FORTRAN
#define TRIDI_INFO_FORTRAN ", fortran"
#else
#define TRIDI_INFO_FORTRAN ", no fortran"
#endif

#ifdef TRIDI_FAULT_INJECTION
#define TRIDI_INFO_FAULTS ", fault injection (tests only)"
#else
#define TRIDI_INFO_FAULTS ""
#endif

const char *tridi_build_info_string(void)
{
    return "tridi " TRIDI_STR(TRIDI_VERSION_MAJOR) "." TRIDI_STR(TRIDI_VERSION_MINOR) "." TRIDI_STR(
        TRIDI_VERSION_PATCH) ": " TRIDI_INFO_CPU TRIDI_INFO_CUDA TRIDI_INFO_MPI TRIDI_INFO_FORTRAN TRIDI_INFO_FAULTS;
}

tridi_status tridi_get_build_info(tridi_build_info *info)
{
    static const char func[] = "tridi_get_build_info";
    if (!info)
        return tridi_fail(TRIDI_ERROR_NULL_POINTER, "%s: info is NULL", func);
    const size_t size = info->size;
    if (size < offsetof(tridi_build_info, openmp) + sizeof info->openmp)
        return tridi_fail(TRIDI_ERROR_INVALID_VALUE,
                          "%s: info->size = %zu holds no field (set it to sizeof(tridi_build_info) = %zu)", func,
                          size, sizeof(tridi_build_info));
    tridi_build_info b;
    memset(&b, 0, sizeof b);
    b.openmp = TRIDI_INFO_OPENMP;
#ifdef TRIDI_HAVE_CUDA
    b.cuda = 1;
    strncpy(b.cuda_architectures, TRIDI_BUILD_CUDA_ARCHITECTURES, sizeof b.cuda_architectures - 1);
    /* Asked only when the caller's struct has the field: it starts the CUDA driver. */
    if (size >= offsetof(tridi_build_info, cuda_devices) + sizeof b.cuda_devices)
        b.cuda_devices = tridi_cuda_device_count();
#else
    b.cuda_devices = -1;
#endif
#ifdef TRIDI_HAVE_MPI
    b.mpi = 1;
#endif
#ifdef TRIDI_HAVE_NCCL
    b.nccl = 1;
#endif
#ifdef TRIDI_HAVE_FORTRAN
    b.fortran = 1;
#endif
#ifdef TRIDI_FAULT_INJECTION
    b.fault_injection = 1;
#endif
    /* Only the fields the caller's struct holds; its size is left as given. */
    const size_t n = size < sizeof b ? size : sizeof b;
    memcpy((char *)info + sizeof info->size, (const char *)&b + sizeof b.size, n - sizeof b.size);
    return TRIDI_SUCCESS;
}
