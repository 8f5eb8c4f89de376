#!/usr/bin/env bash
# Installs what tridi needs from Debian/Ubuntu packages (only what is missing). Used by run.sh and test.sh.
# CUDA is not installed here: when the CUDA toolkit is present (/usr/local/cuda), the GPU backend is built.
set -euo pipefail
pkgs=(cmake make gcc g++ gfortran libopenmpi-dev openmpi-bin libnetcdf-dev libnetcdff-dev netcdf-bin
      python3 python3-numpy python3-matplotlib python3-netcdf4 valgrind clang
      pkg-config binutils  # the install test: pkg-config consumers, nm/readelf/objcopy on the libraries
      fypp)                # the Fortran module tridi's kind variants, generated at build time
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "install-deps: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y --no-install-recommends "${missing[@]}"
fi
