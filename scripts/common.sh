# Shared by run.sh and test.sh: the CMake options for this machine.
TRIDI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
CMAKE_OPTS=(-DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_MPI=ON -DTRIDI_ENABLE_FORTRAN=ON)
# The GPU backend is compiled whenever nvcc exists (it must compile even without a GPU); sm_90.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
if [ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null 2>&1; then
  CMAKE_OPTS+=(-DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
else
  CMAKE_OPTS+=(-DTRIDI_ENABLE_CUDA=OFF)
fi
# Open MPI refuses root unless told; CI runs as root. --oversubscribe is passed by the tests.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
