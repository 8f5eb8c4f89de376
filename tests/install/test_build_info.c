/* tridi_get_build_info and tridi_build_info_string against the configuration CMake passed (EXPECT_*):
 * which backends and transports are compiled in, the CUDA architectures, and that a build without CUDA
 * answers differently from a machine without a GPU (cuda = 0, cuda_devices = -1, the CUDA backend
 * refused) rather than like one. The size field: NULL and a size holding no field are refused with a
 * message naming the argument, and a smaller size leaves the fields past it untouched. */
#include "tridi.h"

#include <stddef.h>
#include <stdio.h>
#include <string.h>

static int failures;

static void check(int ok, const char *what)
{
    printf("%s: %s\n", ok ? "ok  " : "FAIL", what);
    if (!ok) failures++;
}

int main(void)
{
    tridi_build_info b;
    memset(&b, 0x5a, sizeof b);
    b.size = sizeof b;
    check(tridi_get_build_info(&b) == TRIDI_SUCCESS, "tridi_get_build_info succeeds");
    const char *s = tridi_build_info_string();
    printf("%s\n", s);
    printf("openmp %d, cuda %d (\"%s\", %d devices), mpi %d, nccl %d, fortran %d, fault_injection %d\n", b.openmp,
           b.cuda, b.cuda_architectures, b.cuda_devices, b.mpi, b.nccl, b.fortran, b.fault_injection);
    check(b.size == sizeof b, "size left as given");
    check(b.openmp >= 200805, "the CPU backend is built with OpenMP (3.0 or later)");
    check(b.cuda == EXPECT_CUDA, "cuda as configured (TRIDI_ENABLE_CUDA)");
    check(b.mpi == EXPECT_MPI, "mpi as configured (TRIDI_ENABLE_MPI)");
    check(b.nccl == EXPECT_NCCL, "nccl as configured (TRIDI_ENABLE_NCCL)");
    check(b.fortran == EXPECT_FORTRAN, "fortran as configured (TRIDI_ENABLE_FORTRAN)");
    check(b.fault_injection == EXPECT_FAULT_INJECTION, "fault injection as configured");
    check(strcmp(b.cuda_architectures, EXPECT_CUDA_ARCHITECTURES) == 0,
          "cuda_architectures as configured (CMAKE_CUDA_ARCHITECTURES)");
    check(strncmp(s, "tridi ", 6) == 0 && strstr(s, tridi_version_string()) != NULL, "the string names the version");
    check((strstr(s, "no cuda") == NULL) == EXPECT_CUDA, "the string says whether cuda is compiled in");
    check((strstr(s, "no mpi") == NULL) == EXPECT_MPI, "the string says whether mpi is compiled in");
    check((strstr(s, "nccl") != NULL) == EXPECT_NCCL, "the string says whether nccl is compiled in");
    check((strstr(s, "no fortran") == NULL) == EXPECT_FORTRAN, "the string says whether fortran was built");
    if (EXPECT_CUDA) {
        char sm[80];
        snprintf(sm, sizeof sm, "cuda (sm %s)", EXPECT_CUDA_ARCHITECTURES);
        check(strstr(s, sm) != NULL, "the string names the CUDA architectures");
        check(b.cuda_devices >= 0, "with CUDA compiled in, the device count is asked (>= 0)");
    } else {
        check(b.cuda_devices == -1, "without CUDA compiled in, cuda_devices = -1 (not a machine without a GPU)");
        /* The backend cannot work whatever the machine has. */
        tridi_config cfg;
        tridi_config_init(&cfg);
        cfg.backend = TRIDI_BACKEND_CUDA;
        tridi_context ctx = NULL;
        check(tridi_create(&ctx, &cfg) != TRIDI_SUCCESS && ctx == NULL, "a build without CUDA refuses the CUDA backend");
    }

    check(tridi_get_build_info(NULL) == TRIDI_ERROR_NULL_POINTER && strstr(tridi_error_message(), "info") != NULL,
          "NULL info: TRIDI_ERROR_NULL_POINTER naming info");
    tridi_build_info small;
    memset(&small, 0x5a, sizeof small);
    small.size = sizeof(size_t);
    check(tridi_get_build_info(&small) == TRIDI_ERROR_INVALID_VALUE && strstr(tridi_error_message(), "info->size"),
          "a size holding no field: TRIDI_ERROR_INVALID_VALUE naming info->size");
    /* An older caller's struct that ends after cuda: the fields past it are not written. */
    memset(&small, 0x5a, sizeof small);
    small.size = offsetof(tridi_build_info, cuda) + sizeof small.cuda;
    tridi_build_info poison;
    memset(&poison, 0x5a, sizeof poison);
    check(tridi_get_build_info(&small) == TRIDI_SUCCESS && small.openmp == b.openmp && small.cuda == b.cuda,
          "a smaller size: the fields it holds are written");
    check(memcmp(small.cuda_architectures, poison.cuda_architectures,
                 sizeof small - offsetof(tridi_build_info, cuda_architectures)) == 0,
          "a smaller size: nothing past it is written");

    printf("%s\n", failures ? "test_build_info FAILED" : "test_build_info passed");
    return failures != 0;
}
