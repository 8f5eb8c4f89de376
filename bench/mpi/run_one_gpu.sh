#!/bin/bash
# On one GPU (nvidia-h200), with test_mpi_halo and tridi_bench_mpi built elsewhere (B: a folder holding
# bin/ and lib/, e.g. copied from a -DBUILD_SHARED_LIBS=ON build): the halo tests with 2 ranks sharing the
# GPU (every transport; NCCL must refuse them alike), 3 ranks over TCP only, then the halo benchmark
# (staged against the pinned copy of the same run) and the scaling model's inputs. Logs and CSV to $OUT.
set -u
OUT=${OUT:-out-mpi}
B=${B:-.}
mkdir -p "$OUT"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 OMP_NUM_THREADS=1
NCCL_DIR=$(python3 -c 'import nvidia.nccl as m; print(m.__path__[0])' 2>/dev/null)
export LD_LIBRARY_PATH=$B/lib${NCCL_DIR:+:$NCCL_DIR/lib}${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
# MPI_EXTRA: more mpirun options, e.g. "--mca btl_vader_single_copy_mechanism cma" to try another host path.
MPI="mpirun --oversubscribe --bind-to none -x LD_LIBRARY_PATH -x OMP_NUM_THREADS -x TRIDI_HALO_CHUNK_BYTES ${MPI_EXTRA:-}"
# The shared-memory path's single-copy mechanism bounds the staged halos (docs/decisions/050): recorded.
{ nvidia-smi --query-gpu=name,driver_version --format=csv; mpirun --version | head -1; date -u
  ompi_info --param btl vader --level 9 | grep -i single_copy; } > "$OUT/machine.txt" 2>&1
T="$OUT/tests.log"
: > "$T"
run() { # name, then the command
  local name=$1; shift
  echo "=== $name" >> "$T"
  timeout ${TEST_S:-25} "$@" >> "$T" 2>&1
  echo "$name: exit $?" | tee -a "$T"
}
export TRIDI_HALO_CHUNK_BYTES=
run halo_staged_np2 $MPI -np 2 "$B/bin/test_mpi_halo" --device staged
# The benchmark early, so that a hung test further down cannot cost its figures. HOST_PATHS: MPI host paths
# to run it over (default: Open MPI's choice; cma / none: vader's single-copy mechanism forced; tcp: TCP
# between the ranks, as between nodes), each to halo-NAME.csv.
: > "$OUT/bench.txt"
for hp in ${HOST_PATHS:-default}; do
  case $hp in
    default) opt= ;;
    cma | none) opt="--mca btl_vader_single_copy_mechanism $hp" ;;
    tcp) opt="--mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo --mca oob_tcp_if_include lo" ;;
    *) echo "HOST_PATHS: unknown path $hp" >&2; continue ;;
  esac
  echo "### host path: $hp" >> "$OUT/bench.txt"
  # shellcheck disable=SC2086
  timeout ${BENCH_S:-120} $MPI $opt -np 2 "$B/bin/tridi_bench_mpi" halo "$OUT/halo-$hp.csv" >> "$OUT/bench.txt" 2>&1
  echo "bench ($hp) exit $?"
done
for tr in ipc auto nccl; do
  run "halo_${tr}_np2" $MPI -np 2 "$B/bin/test_mpi_halo" --device $tr
done
run halo_staged_np1 $MPI -np 1 "$B/bin/test_mpi_halo" --device staged
export TRIDI_HALO_CHUNK_BYTES=40
run halo_staged_chunk40_np2 $MPI -np 2 "$B/bin/test_mpi_halo" --device staged
run halo_staged_chunk40_np1 $MPI -np 1 "$B/bin/test_mpi_halo" --device staged
export TRIDI_HALO_CHUNK_BYTES=
run halo_tcp_all_np3 $MPI -np 3 --mca pml ob1 --mca btl tcp,self --mca btl_tcp_if_include lo \
  --mca oob_tcp_if_include lo "$B/bin/test_mpi_halo" --all
grep -E "passed|FAILED|SKIPPED|not available|local rank" "$T" | sort | uniq -c | head -30
timeout 60 $MPI -np 2 "$B/bin/tridi_bench_mpi" model >> "$OUT/bench.txt" 2>&1
echo "model exit $?"
cat "$OUT/bench.txt"
