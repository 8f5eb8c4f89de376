#!/bin/bash
# On a machine with a GPU: builds tridi with the CUDA backend and the test-only fault hook, runs the GPU
# tests (ctest -L cuda: with mpicc present, the MPI GPU tests too, whose ranks share the GPUs there are),
# then compute-sanitizer memcheck, racecheck, initcheck and synccheck over them, and memcheck over the MPI
# GPU tests at 2 ranks: every correctness run on the device, in one call. (bench/mpi/run_device.sh runs the multi-GPU benchmark.)
# The Fortran tests need gfortran. Where the GPU machine has none, build them on another machine (with
# -DTRIDI_ENABLE_FORTRAN=ON -DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90) and pass the folder that
# holds test_adapter and test_fortran_module as FORTRAN_TESTS=dir: they then run on the CUDA backend, plain
# and under memcheck. They link tridi and cudart statically (about 4 MB each), e.g.:
#   cmake -S . -B /tmp/bf -DTRIDI_ENABLE_FORTRAN=ON -DTRIDI_ENABLE_CUDA=ON -DCMAKE_CUDA_ARCHITECTURES=90 \
#     -DTRIDI_ENABLE_MPI=OFF -DTRIDI_FAULT_INJECTION=ON && cmake --build /tmp/bf --target test_adapter test_fortran_module
#   mkdir -p .carry && cp /tmp/bf/tests/fortran/test_{adapter,fortran_module} .carry/
# Every step has a time limit (a hung GPU test must not eat the machine's time). Logs go to $OUT (default
# ./out-cuda), one per step; a table of the steps and the sanitizers' summaries is printed last, and the
# exit status is 1 if any step failed. ONLY=regex runs only the steps whose names match (the build always),
# e.g. ONLY='racecheck|initcheck|synccheck' to finish in a second call what a first one had no time for.
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-out-cuda}
B=${BUILD:-build-cuda-device}
mkdir -p "$OUT"
if ! nvidia-smi -L >/dev/null 2>&1; then # every test would skip: nothing would be checked
  echo "run_device.sh: no GPU here (nvidia-smi -L failed)" >&2
  exit 77
fi
SAN=${COMPUTE_SANITIZER:-$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)}
export CUDACXX=${CUDACXX:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
failed=0
table=()

step() { # step NAME SECONDS COMMAND...: runs COMMAND with a time limit, its output in $OUT/NAME.log
  local name=$1 secs=$2 t0=$SECONDS rc
  shift 2
  if [ -n "${ONLY:-}" ] && [ "$name" != configure ] && [ "$name" != build ] && ! [[ $name =~ $ONLY ]]; then
    return 0 # not asked for this time (ONLY=regex of step names: a call too short for every step)
  fi
  timeout "$secs" "$@" >"$OUT/$name.log" 2>&1
  rc=$?
  table+=("$(printf '%-34s %-9s %5ss' "$name" "$([ $rc -eq 0 ] && echo ok || echo "FAIL($rc)")" $((SECONDS - t0)))")
  [ $rc -eq 0 ] || failed=1
  return $rc
}

# Sanitized runs: --error-exitcode turns any report into a failed step. API errors are not reported:
# test_cuda and test_cuda_faults provoke failing CUDA calls (a 1 PiB cudaMalloc, refused launches) on purpose.
sanitize() { # sanitize TOOL NAME SECONDS BINARY [ARGS...]; the environment: $SAN_ENV (VAR=value ...)
  local tool=$1 name=$2 secs=$3
  shift 3
  step "$tool-$name" "$secs" env ${SAN_ENV:-} "$SAN" --tool "$tool" --error-exitcode 9 --report-api-errors no "$@"
}

{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; "$CUDACXX" --version | tail -2
  "$SAN" --version | head -2; git rev-parse HEAD 2>/dev/null; date -u; } >"$OUT/machine.txt" 2>&1

FORTRAN=OFF MPI=OFF
command -v gfortran >/dev/null 2>&1 && FORTRAN=ON
command -v mpicc >/dev/null 2>&1 && MPI=ON
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
step configure 300 cmake -S . -B "$B" -DCMAKE_BUILD_TYPE=Release -DTRIDI_ENABLE_CUDA=ON \
  -DCMAKE_CUDA_ARCHITECTURES=90 -DTRIDI_FAULT_INJECTION=ON -DTRIDI_ENABLE_MPI=$MPI \
  -DTRIDI_ENABLE_FORTRAN=$FORTRAN -DTRIDI_BUILD_TESTCASES=OFF -DTRIDI_BUILD_BENCH=OFF &&
  step build 600 cmake --build "$B" -j "$(nproc)" || { cat "$OUT"/configure.log "$OUT"/build.log | tail -40; exit 1; }

T=$B/tests
step ctest-cuda 600 bash -c "cd '$B' && ctest -L cuda --output-on-failure"
if [ -n "${FORTRAN_TESTS:-}" ]; then
  for t in test_adapter test_fortran_module; do
    step "fortran-$t" 300 env TRIDI_BACKEND=cuda "$FORTRAN_TESTS/$t"
  done
fi

for t in cuda/test_cuda cuda/test_cuda_faults adi/test_adi_cuda; do
  sanitize memcheck "${t#*/}" 600 "$T/$t"
done
SAN_ENV=TRIDI_BACKEND=cuda sanitize memcheck test_register 300 "$T/c/test_register"
[ -n "${FORTRAN_TESTS:-}" ] && SAN_ENV=TRIDI_BACKEND=cuda sanitize memcheck test_adapter 600 "$FORTRAN_TESTS/test_adapter"
# initcheck (compute-sanitizer 2025.3.1) loses track of deep cudaMemcpy3DAsync copies: a copy of 489 planes
# is taken as initializing only its first 236, with or without tridi (a probe of one such copy into fresh
# memory, without tridi, is reported the same way). A seed that draws a deep z-line host-array box can then report reads of the later planes.
for t in cuda/test_cuda adi/test_adi_cuda; do
  sanitize racecheck "${t#*/}" 600 "$T/$t"
  sanitize initcheck "${t#*/}" 600 "$T/$t"
done
# The FAST kernels (cuda/kernels/fast_lines.cuh): shared memory reused by the staged lines, the reduced
# rows and the fallback's W/G between block barriers; one line length per variant (--quick).
for tool in memcheck racecheck synccheck; do
  sanitize $tool test_fast_gpu 600 "$T/cuda/test_fast_gpu" --quick
done
# synccheck: the one-wave kernels synchronise the whole grid (cooperative launch).
sanitize synccheck test_cuda 600 "$T/cuda/test_cuda"
# Every line split over several threads (by default only long x lines are): its shuffles, the exchange
# between the warps of a long line (shared memory, named barriers), its one-wave variant's shared memory
# and grid barrier.
SAN_ENV=TRIDI_CUDA_KERNEL=split sanitize memcheck test_cuda_split 600 "$T/cuda/test_cuda"
SAN_ENV=TRIDI_CUDA_KERNEL=split sanitize racecheck test_cuda_split 600 "$T/cuda/test_cuda"
SAN_ENV=TRIDI_CUDA_KERNEL=split sanitize synccheck test_cuda_split 600 "$T/cuda/test_cuda"
# The MPI layer's device paths at 2 ranks, one sanitizer per rank: halos through CUDA IPC and through host
# staging, distributed solves (reduced systems staged and GPU to GPU).
if [ "$MPI" = ON ]; then
  MPIRUN=(mpirun -np 2 --oversubscribe -x OMP_NUM_THREADS=1)
  for tr in ipc staged; do
    step "memcheck-mpi_halo_$tr" 600 "${MPIRUN[@]}" "$SAN" --tool memcheck --error-exitcode 9 \
      --report-api-errors no "$T/mpi/test_mpi_halo" --device $tr
  done
  step memcheck-mpi_solve 600 "${MPIRUN[@]}" "$SAN" --tool memcheck --error-exitcode 9 --report-api-errors no \
    "$T/mpi/test_mpi_solve" --device
  step racecheck-mpi_solve 600 "${MPIRUN[@]}" "$SAN" --tool racecheck --error-exitcode 9 --report-api-errors no \
    "$T/mpi/test_mpi_solve" --device
fi

sed -n 2p "$OUT/machine.txt"
printf '%s\n' "${table[@]}"
grep -H -E "ERROR SUMMARY|RACECHECK SUMMARY|tests passed|checks, .* failed|Skipped|Failed" "$OUT"/*.log | sed "s|$OUT/||"
exit $failed
