#!/usr/bin/python3
"""Draws the PNGs of a flow_channel NetCDF file (last record unless --record is given):
surface elevation, surface velocity, surface salinity, a vertical section of salinity and
velocity along the channel's centre line, and the series the case is judged by (STEM_series.png:
the outflow through the open side against the river discharge; the water, salt and heat balance
errors).

    plot_flow_channel.py FILE.nc [--outdir DIR] [--record N]

Uses Debian's python3-matplotlib and python3-netcdf4 (the script names /usr/bin/python3 so that a
pyenv or venv python without them is not picked up).
"""
import argparse
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import netCDF4  # noqa: E402
import numpy as np  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("file")
    ap.add_argument("--outdir", default=None, help="folder of the PNGs (default: the file's folder)")
    ap.add_argument("--record", type=int, default=-1, help="time record to draw (default: the last)")
    args = ap.parse_args()

    outdir = args.outdir or os.path.dirname(os.path.abspath(args.file))
    os.makedirs(outdir, exist_ok=True)
    stem = os.path.splitext(os.path.basename(args.file))[0]

    with netCDF4.Dataset(args.file) as nc:
        n = args.record
        x = nc["x"][:] / 1000.0  # km
        y = nc["y"][:] / 1000.0
        # Depth of the layer centres at rest from the sigma coordinate (layer 1 at the bottom).
        z = -nc["z"][:] * float(np.ma.max(nc["depth"][:]))
        hours = nc["time"][n] / 3600.0
        eta = nc["elevation"][n, :, :]  # (y, x)
        # Surface layer = last index of z (layer km).
        us = nc["u"][n, -1, :, :]
        vs = nc["v"][n, -1, :, :]
        ss = nc["salinity"][n, -1, :, :]
        jmid = len(y) // 2
        s_sec = nc["salinity"][n, :, jmid, :]  # (z, x)
        u_sec = nc["u"][n, :, jmid, :]
        title = nc.getncattr("title")
        series = None
        if "series_time" in nc.variables:
            series = {name: np.ma.filled(nc[name][:].astype(float), np.nan) for name in (
                "series_time", "river_discharge", "outflow", "volume_balance_error", "salt_balance_error",
                "heat_balance_error")}

    when = f"t = {hours:.2f} h"
    written = []

    def save(fig, name):
        path = os.path.join(outdir, f"{stem}_{name}.png")
        fig.savefig(path, dpi=110, bbox_inches="tight")
        plt.close(fig)
        written.append(path)

    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    pc = ax.pcolormesh(x, y, eta * 100.0, shading="nearest", cmap="viridis")
    fig.colorbar(pc, ax=ax, label="elevation (cm)")
    ax.set(xlabel="x (km)", ylabel="y (km)", title=f"Surface elevation, {when}", aspect="equal")
    save(fig, "elevation")

    speed = np.hypot(us, vs)
    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    pc = ax.pcolormesh(x, y, speed, shading="nearest", cmap="magma")
    fig.colorbar(pc, ax=ax, label="surface speed (m/s)")
    step = max(1, len(x) // 20)
    ax.quiver(x[::step], y[::step], us[::step, ::step], vs[::step, ::step], color="white", scale=None)
    ax.set(xlabel="x (km)", ylabel="y (km)", title=f"Surface velocity, {when}", aspect="equal")
    save(fig, "velocity")

    fig, ax = plt.subplots(figsize=(6.4, 5.2))
    pc = ax.pcolormesh(x, y, ss, shading="nearest", cmap="viridis_r", vmin=0, vmax=35)
    fig.colorbar(pc, ax=ax, label="surface salinity (1e-3)")
    ax.set(xlabel="x (km)", ylabel="y (km)", title=f"Surface salinity, {when}", aspect="equal")
    save(fig, "salinity")

    fig, ax = plt.subplots(figsize=(8.0, 4.0))
    pc = ax.pcolormesh(x, z, s_sec, shading="nearest", cmap="viridis_r", vmin=0, vmax=35)
    fig.colorbar(pc, ax=ax, label="salinity (1e-3)")
    cs = ax.contour(x, z, u_sec, colors="white", linewidths=0.8)
    ax.clabel(cs, fmt="%.2f m/s", fontsize=7)
    ax.invert_yaxis()
    ax.set(xlabel="x (km)", ylabel="depth at rest (m)",
           title=f"Section along the centre line y = {y[jmid]:.2f} km: salinity, u contours, {when}")
    save(fig, "section")

    if series is not None and len(series["series_time"]) > 0:
        t = series["series_time"] / 3600.0
        fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(8.0, 6.4), sharex=True)
        ax1.plot(t, series["river_discharge"], color="tab:blue", label="river discharge (west side)")
        ax1.plot(t, series["outflow"], color="tab:red", label="outflow (open east side)")
        ax1.set(ylabel="discharge (m$^3$/s)", title="Discharges and balances over the run")
        ax1.legend(loc="lower right")
        ax1.grid(alpha=0.3)
        # |error|, each relative to the content at the start; exact zeros drawn at the axis floor.
        floor = 1e-18
        for name, label, color in (("volume_balance_error", "water", "tab:blue"),
                                   ("salt_balance_error", "salt", "tab:green"),
                                   ("heat_balance_error", "heat", "tab:orange")):
            ax2.semilogy(t, np.maximum(np.abs(series[name]), floor), ".", ms=2.5, color=color, label=label)
        ax2.axhline(2.2e-16, color="grey", lw=0.8, ls="--", label="double rounding (2.2e-16)")
        ax2.set(xlabel="model time (h)", ylabel="|balance error| / content at start",
                ylim=(floor, max(1e-12, float(np.nanmax(np.abs([series[n] for n in (
                    "volume_balance_error", "salt_balance_error", "heat_balance_error")]))) * 10)))
        ax2.legend(loc="upper right", markerscale=4, fontsize=8, ncol=2)
        ax2.grid(alpha=0.3, which="major")
        save(fig, "series")
    else:
        print("no series in the file (written by an older flow_channel): no series plot")

    print(f"{title}: {when}")
    for p in written:
        print("wrote", p)
    return 0


if __name__ == "__main__":
    sys.exit(main())
