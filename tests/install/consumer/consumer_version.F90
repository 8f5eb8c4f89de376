! A preprocessed Fortran source on an installed tridi: tridi_version.h's TRIDI_VERSION_GE and TRIDI_HAVE_*
! in #if, and the build-info string from module tridi; the two must agree on every part.
#include "tridi_version.h"
program consumer_version_f
    use tridi, only: tridi_build_info_string, tridi_version_string
    implicit none
    character(len=:), allocatable :: info
    integer :: bad
    bad = 0
    info = tridi_build_info_string()
    print '(a)', 'consumer_version_f: '//info
#if !TRIDI_VERSION_GE(0, 1, 0) || TRIDI_VERSION_GE(99, 0, 0)
    bad = bad + 1
#endif
#ifdef TRIDI_HAVE_CUDA
    if (index(info, 'cuda (sm') == 0) bad = bad + 1
#else
    if (index(info, 'no cuda') == 0) bad = bad + 1
#endif
#ifdef TRIDI_HAVE_MPI
    if (index(info, ', mpi') == 0) bad = bad + 1
#else
    if (index(info, 'no mpi') == 0) bad = bad + 1
#endif
#ifdef TRIDI_HAVE_NCCL
    if (index(info, 'nccl') == 0) bad = bad + 1
#else
    if (index(info, 'nccl') /= 0) bad = bad + 1
#endif
    if (index(info, 'fault injection') /= 0) bad = bad + 1
    if (bad /= 0) error stop 1
end program consumer_version_f
