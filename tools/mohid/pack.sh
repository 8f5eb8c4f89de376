#!/bin/bash
# Pack what run_device.sh needs on a machine without gfortran, HDF5 or NetCDF: the four MohidWater
# executables of check.sh's WORK (orig and tridi, r8 and r4; stripped), the shared libraries they and
# h5diff load (glibc's own excepted), h5diff, the case and the kit's run_case.sh, into one .tar.xz.
# usage: pack.sh MOHID_KIT WORK TARBALL
# env: TRIDI_BUILD (default tridi): the swapped builds are WORK/build-PREC-$TRIDI_BUILD; EXTRA_BINS: more
#      programs for bin/ (e.g. thomasz_bench.f90 builds against two libraries, for run_device.sh's BENCHES);
#      PRECS (default "r8 r4"): the precisions packed (run_device.sh's PRECS and PREC2 then name no other)
set -euo pipefail
KIT=$(cd "${1:?usage: pack.sh MOHID_KIT WORK TARBALL}" && pwd)
WORK=$(cd "${2:?WORK}" && pwd)
TAR=${3:?TARBALL}
P=$(mktemp -d)/mohid-pack
mkdir -p "$P/bin" "$P/lib"
for prec in ${PRECS:-r8 r4}; do
    cp "$WORK/build-$prec/bin/MohidWater.exe" "$P/bin/orig-$prec"
    cp "$WORK/build-$prec-${TRIDI_BUILD:-tridi}/bin/MohidWater.exe" "$P/bin/tridi-$prec"
done
for f in ${EXTRA_BINS:-}; do cp "$f" "$P/bin/"; done
strip "$P"/bin/*
cp "$(command -v h5diff)" "$P/h5diff"
# Every library the programs load, except glibc's (the GPU machine has its own) and the CUDA driver.
for f in "$P"/bin/* "$P/h5diff"; do
    ldd "$f" | awk '$3 ~ /^\// {print $3}'
done | sort -u | grep -v -E '/(libc|libm|libpthread|libdl|librt|ld-linux-x86-64|libcuda)\.so' |
    while read -r lib; do cp -L "$lib" "$P/lib/"; done
cp -rL "$WORK/case" "$P/case" # -L: the case itself, also where WORK links to it
cp "$KIT/scripts/run_case.sh" "$P/run_case.sh"
mkdir -p "$(dirname "$TAR")"
tar -C "$(dirname "$P")" -cJf "$TAR" mohid-pack
rm -rf "$(dirname "$P")"
ls -l "$TAR"
