#!/usr/bin/env python3
"""Checks the CF rules flow_channel's NetCDF files claim (testcases/flow_channel/README.md, Output):

    check_cf.py FILE [--same-as OTHER --tolerance TOL]

- global Conventions CF-1.8 and a non-empty history;
- every `bounds` attribute names a (n, 2) variable whose cells contain their centre and tile the axis;
- the land-sea mask: flag_values match flag_meanings, both land and water cells exist, and every float
  field carries _FillValue exactly on land (no fill, no NaN on water);
- the bathymetry `depth` is positive on water;
- the vertical coordinate is ocean_sigma_coordinate and its formula_terms (and its bounds') name existing
  variables; the depths they rebuild, z = eta + sigma (depth + eta), put the outer layer interfaces at
  the sea floor (-depth) and the surface (eta), with layers of equal positive thickness;
- `positive` only on the vertical coordinate; every variable on x and y names a grid_mapping variable
  that has a grid_mapping_name (x and y are projection coordinates);
- the series on series_time: times increasing, the river discharge within 0..7000 m3/s, the outflow
  finite, the water, salt and heat balance errors within 1e-9 of the content at the start;
- with --same-as: OTHER (e.g. the file from N ranks) has the same variables, shapes, mask and fill,
  and every field agrees within TOL of its largest magnitude (u and v: of the larger velocity; the
  outflow series of its own; the coordinates, series times and river discharge exactly; the balance
  errors are rounding, each file's checked alone).
Exit status 0 when every rule holds, 1 otherwise (each failure printed).
"""
import argparse
import sys

import netCDF4
import numpy as np

failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("check_cf: FAILED:", what)


def formula_terms(text):
    words = text.split()
    return {words[i].rstrip(":"): words[i + 1] for i in range(0, len(words) - 1, 2)}


def check_file(path):
    with netCDF4.Dataset(path) as nc:
        check(nc.getncattr("Conventions") == "CF-1.8", f"{path}: Conventions is not CF-1.8")
        check(len(getattr(nc, "history", "").strip()) > 0, f"{path}: no global history")
        for name, var in nc.variables.items():
            if "bounds" not in var.ncattrs():
                continue
            b = var.bounds
            if b not in nc.variables:
                check(False, f"{name}: bounds variable {b} missing")
                continue
            centre, bnds = var[:], nc[b][:]
            check(bnds.shape == (centre.size, 2), f"{b}: shape {bnds.shape}, expected ({centre.size}, 2)")
            lo, hi = np.minimum(bnds[:, 0], bnds[:, 1]), np.maximum(bnds[:, 0], bnds[:, 1])
            check(bool(np.all((lo < centre) & (centre < hi))), f"{b}: a cell does not contain its centre")
            check(bool(np.allclose(bnds[1:, 0], bnds[:-1, 1])), f"{b}: cells do not tile the axis")

        mask = nc["mask"]
        values, meanings = list(mask.flag_values), mask.flag_meanings.split()
        check(len(values) == len(meanings), "mask: flag_values and flag_meanings differ in number")
        m = np.asarray(mask[:])
        check(set(np.unique(m)) <= set(values), "mask: values outside flag_values")
        water = m == values[meanings.index("water")]
        check(bool(water.any() and (~water).any()), "mask: needs both land and water cells")

        for name, var in nc.variables.items():
            if var.dtype != np.float32:
                continue
            check("_FillValue" in var.ncattrs(), f"{name}: no _FillValue")
            data = var[:]
            filled = np.ma.getmaskarray(data)
            land = np.broadcast_to(~water, filled.shape)
            check(bool(np.array_equal(filled, land)), f"{name}: _FillValue not exactly on the land cells")
            check(bool(np.all(np.isfinite(np.ma.compressed(data)))), f"{name}: non-finite values on water")

        depth = nc["depth"][:]
        check(bool(np.all(depth[water] > 0)), "depth: not positive on water")

        z = nc["z"]
        check(z.standard_name == "ocean_sigma_coordinate", "z: not ocean_sigma_coordinate")
        for var in (z, nc[z.bounds]):
            terms = formula_terms(var.formula_terms)
            check(set(terms) == {"sigma", "eta", "depth"}, f"{var.name}: formula_terms {terms}")
            check(all(t in nc.variables for t in terms.values()), f"{var.name}: formula_terms name a missing variable")
        sig_b = nc[z.bounds][:]
        check(bool(np.all((nc["z"][:] > -1) & (nc["z"][:] < 0))), "z: sigma outside (-1, 0)")
        eta = nc["elevation"][-1]
        # Layer interfaces from the bounds: z = eta + sigma (depth + eta), shape (interfaces, y, x).
        edges = np.concatenate([sig_b[:, 0], sig_b[-1:, 1]])
        zi = eta[None] + edges[:, None, None] * (depth[None] + eta[None])
        check(bool(np.ma.allclose(zi[0], -depth, atol=1e-4)), "rebuilt layers: the bottom is not at -depth")
        check(bool(np.ma.allclose(zi[-1], eta, atol=1e-4)), "rebuilt layers: the top is not the surface")
        dz = np.diff(zi, axis=0)
        check(bool(np.ma.all(dz > 0)), "rebuilt layers: a layer of non-positive thickness")
        check(bool(np.ma.allclose(dz, dz[0][None], rtol=1e-5)), "rebuilt layers: sigma layers are not equal")
        for name, var in nc.variables.items():
            if "positive" in var.ncattrs():
                check(name == "z", f"{name}: `positive` on a variable that is not the vertical coordinate")
            if {"x", "y"} <= set(var.dimensions) and name not in ("x", "y"):
                gm = getattr(var, "grid_mapping", None)
                check(gm in nc.variables and "grid_mapping_name" in nc[gm].ncattrs(),
                      f"{name}: no grid_mapping naming a variable with grid_mapping_name")

        missing = [n for n in ("series_time", "river_discharge", "outflow", "volume_balance_error", "salt_balance_error", "heat_balance_error") if n not in nc.variables]
        check(not missing, f"series missing: {missing}")
        if not missing:
            t = np.ma.filled(nc["series_time"][:].astype(float), np.nan)
            check(t.size > 0 and bool(np.all(np.diff(t) > 0)), "series_time: empty or not increasing")
            q = np.ma.filled(nc["river_discharge"][:].astype(float), np.nan)
            check(bool(np.all((q >= 0) & (q <= 7000))), "river_discharge: outside 0..7000 m3/s")
            check(bool(np.all(np.isfinite(np.ma.filled(nc["outflow"][:].astype(float), np.nan)))), "outflow: not finite")
            for b in ("volume_balance_error", "salt_balance_error", "heat_balance_error"):
                e = np.ma.filled(nc[b][:].astype(float), np.nan)
                check(bool(np.all(np.abs(e) <= 1e-9)), f"{b}: above 1e-9 (largest {float(np.nanmax(np.abs(e))):.3e})")

        print(f"check_cf: {path}: {len(nc.variables)} variables, {int((~water).sum())} land cells, "
              f"layers rebuilt from formula_terms ({dz.shape[0]} layers, {float(dz.min()):.4f} to "
              f"{float(dz.max()):.4f} m)")


def compare(a_path, b_path, tol):
    with netCDF4.Dataset(a_path) as a, netCDF4.Dataset(b_path) as b:
        check(set(a.variables) == set(b.variables), "the files have different variables")
        worst = 0.0
        for name in sorted(set(a.variables) & set(b.variables)):
            x, y = a[name][:], b[name][:]
            if x.shape != y.shape:
                check(False, f"{name}: shapes {x.shape} and {y.shape}")
                continue
            check(bool(np.array_equal(np.ma.getmaskarray(x), np.ma.getmaskarray(y))), f"{name}: fill differs")
            if name.endswith("_balance_error"):
                continue
            if name == "outflow":
                d = float(np.ma.max(np.abs(x - y))) / (float(np.ma.max(np.abs(x))) or 1.0)
                worst = max(worst, d)
                check(d <= tol, f"outflow: largest difference {d:.3e} of its scale, above {tol}")
                continue
            if a[name].dtype != np.float32:
                check(bool(np.ma.allclose(x, y, rtol=0, atol=0)), f"{name}: differs (coordinates must be equal)")
                continue
            # Velocities share one scale (as the model's --compare): v is near 0 in a symmetric channel.
            group = ("u", "v") if name in ("u", "v") else (name,)
            scale = max(float(np.ma.max(np.abs(a[g][:]))) for g in group) or 1.0
            d = float(np.ma.max(np.abs(x - y))) / scale if x.count() else 0.0
            worst = max(worst, d)
            check(d <= tol, f"{name}: largest difference {d:.3e} of its scale, above {tol}")
        print(f"check_cf: {b_path} equals {a_path} within {worst:.3e} of each field's scale (tolerance {tol})")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("file")
    ap.add_argument("--same-as")
    ap.add_argument("--tolerance", type=float, default=1e-4)
    args = ap.parse_args()
    check_file(args.file)
    if args.same_as:
        check_file(args.same_as)
        compare(args.file, args.same_as, args.tolerance)
    if failures:
        print(f"check_cf: {len(failures)} failures")
        return 1
    print("check_cf: passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
