#!/usr/bin/env python3
"""Scaling model of the ADI-like step (x, y, z solves + one halo exchange of x) with a flow_channel_1120-56-sized
block (1120x1120x56 cells, MOHID's types, halo 1) on every GPU, cut along i and j, for 8, 64 and 512 GPUs: a
prediction from measured solve and halo costs plus the assumptions below (docs/mpi.md, "Scaling model").
Usage: scaling_model.py [H200_CSV [IPC_CSV]] (default: bench/results/h200-halo-b5df51e.csv, the staged halos
and solves of 2 ranks on one H200; bench/results/2xh200-halo-fe7f260.csv, IPC halos on 2 x H200)."""
import csv
import sys

# Assumed (docs/mpi.md): GPUs per node joined by NVLink, the network per GPU, the host's reduced solve.
GPUS_PER_NODE = 8
NET_GBS = 50.0
NET_LAT_US = 5.0
NVLINK_GBS = 300.0         # reduced systems gathered over NVLink inside a node (the peer copies measured)
REDUCED_NS = 2.0           # host ns per reduced unknown and line
HOST_THREADS = 16
CUT = 0.17                 # a cut axis's solve over the uncut one, measured on 2 x H200 (docs/mpi.md)
N = (1120, 1120, 56)
ESIZE = 4                  # x in float (MOHID's mix)


def fit(rows):
    """Least squares t = a + b * bytes over (bytes, us)."""
    n = len(rows)
    sx = sum(r[0] for r in rows); sy = sum(r[1] for r in rows)
    sxx = sum(r[0] * r[0] for r in rows); sxy = sum(r[0] * r[1] for r in rows)
    b = (n * sxy - sx * sy) / (n * sxx - sx * sx)
    return (sy - b * sx) / n, b


def main():
    here = __file__.rsplit("/", 1)[0] + "/../results/"
    path = sys.argv[1] if len(sys.argv) > 1 else here + "h200-halo-b5df51e.csv"
    ipc_path = sys.argv[2] if len(sys.argv) > 2 else here + "2xh200-halo-fe7f260.csv"
    rows = list(csv.DictReader(open(path)))
    solve_ms = {r["transport"]: float(r["exchange_us"]) * 1e-3 for r in rows if r["transport"].endswith("_solve")}
    tx, ty, tz = solve_ms["x_solve"], solve_ms["y_solve"], solve_ms["z_solve"]
    # Staged as its chunk rule moves each face: whole under 4 MiB, in chunks beyond (src/mpi/halo_staged.c).
    st = [(float(r["face_bytes"]), float(r["exchange_us"])) for r in rows
          if r["transport"] == "staged" and r["cut"] == "j"
          and r["chunk"] == ("uncut" if float(r["face_bytes"]) < 4 * 2**20 else "rule")]
    st_a, st_b = fit(st)
    old = list(csv.DictReader(open(ipc_path)))
    fb = {r["grid"]: float(r["value"]) for r in old if r["metric"] == "face_bytes" and r["axis"] == "j"}
    ipc_a, ipc_b = fit([(fb[r["grid"]], float(r["value"])) for r in old
                        if r["metric"] == "halo_ipc_us" and r["axis"] == "j"])
    print(f"solves {tx:.3f} + {ty:.3f} + {tz:.3f} ms; staged halo {st_a:.1f} us + bytes at "
          f"{1e-3 / st_b:.2f} GB/s; ipc {ipc_a:.1f} us + bytes at {1e-3 / ipc_b:.1f} GB/s")
    face = N[0] * N[2] * ESIZE               # one j or i face of the block, halo 1
    lines = {0: N[1] * N[2], 1: N[0] * N[2]}  # lines of the x and y solves per block
    solve = tx + ty + tz
    print(f"| GPUs | ranks i x j | nodes | solves ms | halo ms | reduced systems ms | step ms | weak efficiency |")
    print("|---:|---|---:|---:|---:|---:|---:|---:|")
    print(f"| 1 | 1 x 1 | 1 | {solve:.2f} | 0 | 0 | {solve:.2f} | 100% |")
    for P, (pi, pj) in ((8, (2, 4)), (64, (8, 8)), (512, (16, 32))):
        nodes = max(1, P // GPUS_PER_NODE)
        inter = nodes > 1
        s = tx * (1 + CUT * (pi > 1)) + ty * (1 + CUT * (pj > 1)) + tz
        byts = 4 * face
        halo = (st_a + st_b * byts) if inter else (ipc_a + ipc_b * byts)
        halo *= 1e-3
        red = 0.0
        for ax, p in ((0, pi), (1, pj)):
            if p < 2:
                continue
            coef = 6 * 8 * lines[ax]
            if inter:
                red += (p - 1) * (coef / (NET_GBS * 1e9) + NET_LAT_US * 1e-6) * 1e3
                red += lines[ax] * 2 * p * REDUCED_NS * 1e-9 / HOST_THREADS * 1e3
            else:
                red += (p - 1) * coef / (NVLINK_GBS * 1e9) * 1e3
        step = s + halo + red
        print(f"| {P} | {pi} x {pj} | {nodes} | {s:.2f} | {halo:.3f} | {red:.2f} | {step:.2f} | {100 * solve / step:.0f}% |")


if __name__ == "__main__":
    main()
