#!/usr/bin/env bash
# Writes a NetCDF file with flow_channel, which reads it back itself (--verify-output: the last record
# must equal the model state value for value), then checks its CF metadata with ncdump -h and the CF
# rules the file claims with check_cf.py (land mask and _FillValue, bounds, the layer depths rebuilt
# from formula_terms; python3 with netCDF4).
#   check_netcdf.sh EXE FILE ARGS...
set -uo pipefail
exe="$1"; file="$2"; shift 2
fail() { echo "check_netcdf: FAILED: $*"; exit 1; }
rm -f "$file"
"$exe" "$@" --output "$file" --verify-output || fail "flow_channel exited with status $?"
grep -q . "$file" 2>/dev/null || fail "$file was not written"
command -v ncdump >/dev/null || fail "ncdump not found (Debian: netcdf-bin)"
header="$(ncdump -h "$file")" || fail "ncdump cannot read $file"
echo "$header"
expect() { grep -Eq "$1" <<<"$header" || fail "header lacks: $1"; }
expect ':Conventions = "CF-1\.8"'
expect 'time = UNLIMITED'
for v in 'double x\(x\)' 'double y\(y\)' 'double z\(z\)' 'double time\(time\)' \
         'float elevation\(time, y, x\)' 'float u\(time, z, y, x\)' 'float v\(time, z, y, x\)' \
         'float temperature\(time, z, y, x\)' 'float salinity\(time, z, y, x\)'; do
  expect "$v"
done
expect 'x:units = "m"'
expect 'x:bounds = "x_bnds"'
expect 'double x_bnds\(x, nv\)'
expect 'y:bounds = "y_bnds"'
expect 'z:standard_name = "ocean_sigma_coordinate"'
expect 'z:positive = "up"'
expect 'z:formula_terms = "sigma: z eta: elevation depth: depth"'
expect 'z_bnds:formula_terms = "sigma: z_bnds eta: elevation depth: depth"'
expect 'float depth\(y, x\)'
expect 'depth:standard_name = "sea_floor_depth_below_geoid"'
expect 'byte mask\(y, x\)'
expect 'mask:standard_name = "sea_binary_mask"'
expect 'mask:flag_meanings = "land water"'
for v in elevation u v temperature salinity depth; do
  expect "$v:_FillValue = 1\.e\+20f"
done
expect ':history = ".*flow_channel'
expect 'time:units = "seconds since'
expect 'elevation:standard_name = "sea_surface_height_above_geoid"'
expect 'salinity:standard_name = "sea_water_salinity"'
expect 'temperature:units = "degree_C"'
expect 'series_time = UNLIMITED'
for v in 'double series_time\(series_time\)' 'double river_discharge\(series_time\)' 'double outflow\(series_time\)' \
         'double volume_balance_error\(series_time\)' 'double salt_balance_error\(series_time\)' \
         'double heat_balance_error\(series_time\)'; do
  expect "$v"
done
expect 'crs:grid_mapping_name = "transverse_mercator"'
for v in elevation u v temperature salinity depth mask; do
  expect "$v:grid_mapping = \"crs\""
done
grep -Eq 'depth:positive' <<<"$header" && fail "depth carries positive (CF: the vertical coordinate's only)"
py=/usr/bin/python3
[[ -x "$py" ]] || py=python3
"$py" "$(dirname "$0")/check_cf.py" "$file" || fail "CF rules (check_cf.py)"
echo "check_netcdf: passed"
