# Shared by run.sh and test.sh: the CMake options for this machine.
TRIDI_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
JOBS="$(nproc 2>/dev/null || echo 2)"
CMAKE_OPTS=(-DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_MPI=ON -DTRIDI_ENABLE_FORTRAN=ON)
# The GPU backend is compiled whenever nvcc exists (it must compile even without a GPU); sm_90.
if [ -z "${CUDACXX:-}" ] && ! command -v nvcc >/dev/null 2>&1 && [ -x /usr/local/cuda/bin/nvcc ]; then
  export CUDACXX=/usr/local/cuda/bin/nvcc
fi
# TRIDI_CUDA=OFF builds CPU only even where nvcc exists.
if [ "${TRIDI_CUDA:-}" != OFF ] && { [ -n "${CUDACXX:-}" ] || command -v nvcc >/dev/null 2>&1; }; then
  CMAKE_OPTS+=(-DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90)
else
  CMAKE_OPTS+=(-DTRIDI_ENABLE_CUDA=OFF)
fi
# Whether this machine compiles the CUDA backend and has a GPU, for the time estimates the scripts print.
HAVE_NVCC=0; HAVE_GPU=0
case " ${CMAKE_OPTS[*]} " in *" -DTRIDI_ENABLE_CUDA=ON "*) HAVE_NVCC=1 ;; esac
if command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi -L 2>/dev/null | grep -q '^GPU'; then HAVE_GPU=1; fi
# Prints what the script will do and how long it took on a 2-core machine (README.md, "Two commands").
estimate() {
  local what="$1" cpu="$2" cuda="$3"
  if [ "$HAVE_NVCC" = 1 ]; then
    echo "== $what: with the CUDA backend compiled (nvcc found, GPU: $([ "$HAVE_GPU" = 1 ] && echo yes || echo no)): $cuda on 2 cores"
  else
    echo "== $what: CPU only (no nvcc): $cpu on 2 cores"
  fi
}
# Open MPI refuses root unless told; CI runs as root. --oversubscribe is passed by the tests.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
