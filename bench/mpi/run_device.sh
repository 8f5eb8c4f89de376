#!/bin/bash
# On a machine with 2 GPUs (nvidia-h200-x2): build the MPI layer, run the mpi tests (CPU and GPU) and the
# multi-GPU benchmark (argument: all | halo | weak | strong | breakdown). Logs go to $OUT (default
# ./out-mpi); the tables are printed last.
set -u
OUT=${OUT:-out-mpi}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
B=${BUILD:-build-mpi-device}
{ nvidia-smi --query-gpu=name,driver_version --format=csv; nvidia-smi topo -m; mpirun --version; date -u; } > "$OUT/machine.txt" 2>&1
cmake -S . -B "$B" -DTRIDI_ENABLE_MPI=ON -DTRIDI_ENABLE_CUDA=ON -DTRIDI_ENABLE_FORTRAN=OFF \
  -DTRIDI_BUILD_TESTCASES=OFF -DCMAKE_CUDA_ARCHITECTURES=90 > "$OUT/build.log" 2>&1
if ! timeout 300 make -C "$B" -j"$(nproc)" test_mpi_halo test_mpi_solve test_mpi_errors tridi_bench_mpi \
    >> "$OUT/build.log" 2>&1; then
  tail -40 "$OUT/build.log"
  exit 1
fi
(cd "$B" && timeout 240 ctest -L mpi --output-on-failure -j4) > "$OUT/ctest.log" 2>&1
echo "ctest exit $?"
OMP_NUM_THREADS=8 timeout 300 mpirun -np 2 --oversubscribe --bind-to none -x OMP_NUM_THREADS \
  "$B/bench/mpi/tridi_bench_mpi" "${1:-all}" > "$OUT/bench.txt" 2>&1
echo "bench exit $?"
grep -E "tests passed|Failed|FAILED|Timeout|Skipped" "$OUT/ctest.log" | head -20
head -3 "$OUT/machine.txt"
cat "$OUT/bench.txt"
