#!/usr/bin/env python3
"""Swap MOHID Water's Thomas calls for tridi's adapter (module tridi_mohid), in a MOHID tree in place.

usage: swap.py MOHID_TREE [--gotm] [--dry-run]
  MOHID_TREE  a folder holding Software/MOHIDBase2 and Software/MOHIDWater (a copy: files are edited)

Every call of MOHID's THOMAS_3D, THOMASZ, THOMASZ_NewType2 and THOMAS_2D in the modules below becomes
the adapter's routine with MOHID's own variant (docs/mohid-guide.md has the table):
  - positional array arguments (D, E, F, Ti, ANSWER[, VECG, VECW]): MOHID's *_Original routines,
    variant=TRIDI_MOHID_ORIGINAL, the arguments unchanged;
  - a T_THOMAS / T_THOMAS2D structure (THOMAS_3D, THOMASZ, THOMASZ_NewType2, THOMAS_2D NewType): its
    COEF3%D/E/F (COEF2 in 2D), TI, VEC(1)%G and VEC(1)%W (MOHID's one-thread workspace, whose stale
    values THOMASZ NewType reuses) and variant=TRIDI_MOHID_NEWTYPE; THOMASZ_NewType2's mask as
    WaterPoints=; THOMAS_2D NewType's model name is dropped.
  - MOHID's own CUDA arguments (#ifdef _ENABLE_CUDA inside the call) are dropped.
Each swapped call is wrapped in `if (MonitorPerformance) call StartWatch/StopWatch("ModuleFunctions",
"THOMAS_...")`, the watch MOHID's routine itself starts, so MOHID's timing report keeps its solves.
Each is preceded (inside the watch) by `tridi_mohid_register` of its five arrays where they are MOHID's
long-lived ones (components of the module's `Me`, or pointers to them): MOHID allocates those in its
constructors and frees them in its Kill routines, after the last solve, so the GPU backend may move them
by DMA from MOHID's memory (registered at the first call; later calls find them registered). Arrays
allocated per call (the non-hydrostatic correction's) are not registered.
`use tridi_mohid, only: ...` is added after the module's `use ModuleFunctions`.
--gotm: not supported yet (ModuleGOTM's own `tridiagonal` is not a ModuleFunctions routine).
Nothing of MOHID is copied here: the edits are computed from the tree given.
"""
import re
import sys
from pathlib import Path

FILES = ["MOHIDWater/ModuleHydrodynamic.F90", "MOHIDBase2/ModuleAdvectionDiffusion.F90",
         "MOHIDWater/ModuleFreeVerticalMovement.F90"]
ROUTINES = {"thomas_3d": "THOMAS_3D", "thomasz": "THOMASZ", "thomasz_newtype2": "THOMASZ",
            "thomas_2d": "THOMAS_2D"}
CALL_RE = re.compile(r"^(\s*)call\s+(thomas_3d|thomasz_newtype2|thomasz|thomas_2d)\s*\(", re.I)
USE_RE = re.compile(r"^\s*use\s+ModuleFunctions\b", re.I)
USE_LINE = "    use tridi_mohid, only: tridi_thomas_3d, tridi_thomasz, tridi_thomas_2d, tridi_mohid_register, " \
           "TRIDI_MOHID_ORIGINAL, TRIDI_MOHID_NEWTYPE"
# Where a swapped call's five arrays (D, E, F, Ti, ANSWER) start in its argument list.
ARRAYS_AT = {"tridi_thomas_3d": 8, "tridi_thomasz": 6, "tridi_thomas_2d": 6}


def code_part(line):
    """The line without its trailing comment (no string in MOHID's call lines holds '!')."""
    return line.split("!", 1)[0]


def split_args(text):
    args, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            args.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        args.append(cur.strip())
    return args


def read_call(lines, start):
    """(end index, argument list) of the call statement beginning at lines[start]; preprocessor blocks
    inside it (MOHID's CUDA arguments) are dropped, as are comment lines."""
    text, depth, i, skipping, opened = "", 0, start, 0, False
    while i < len(lines):
        raw = lines[i].rstrip("\r\n")
        s = raw.strip()
        if s.startswith("#"):
            if re.match(r"#\s*if", s):
                skipping += 1
            elif re.match(r"#\s*endif", s):
                skipping -= 1
            i += 1
            continue
        if skipping or s.startswith("!"):
            i += 1
            continue
        code = code_part(raw).rstrip()
        if code.endswith("&"):
            code = code[:-1]
        code = code.lstrip()
        if code.startswith("&"):
            code = code[1:]
        for ch in code:
            if ch == "(":
                depth += 1
                opened = True
            elif ch == ")":
                depth -= 1
        text += code
        if opened and depth == 0:
            break
        i += 1
    inner = text[text.index("(") + 1:text.rindex(")")]
    return i, split_args(inner)


def struct_args(t, two_d):
    coef = f"{t}%COEF2" if two_d else f"{t}%COEF3"
    return [f"{coef}%D", f"{coef}%E", f"{coef}%F", f"{t}%TI"]


def swapped(name, args):
    """(adapter routine, its argument list, MOHID's watch name) or None for a call left alone."""
    n = name.lower()
    if any("=" in a for a in args):
        return None                      # keyword calls: ModuleHorizontalGrid's MPI wrappers, not swapped
    if n == "thomas_3d":
        if len(args) == 15:
            return "tridi_thomas_3d", args + ["variant=TRIDI_MOHID_ORIGINAL"]
        if len(args) == 10:
            t = args[8]
            return "tridi_thomas_3d", args[:8] + struct_args(t, False) + [args[9], f"{t}%VEC(1)%G", f"{t}%VEC(1)%W",
                                                                           "variant=TRIDI_MOHID_NEWTYPE"]
    if n == "thomasz":
        if len(args) == 13:
            return "tridi_thomasz", args + ["variant=TRIDI_MOHID_ORIGINAL"]
        if len(args) == 8:
            t = args[6]
            return "tridi_thomasz", args[:6] + struct_args(t, False) + [args[7], f"{t}%VEC(1)%G", f"{t}%VEC(1)%W",
                                                                         "variant=TRIDI_MOHID_NEWTYPE"]
    if n == "thomasz_newtype2" and len(args) == 9:
        t = args[6]
        return "tridi_thomasz", args[:6] + struct_args(t, False) + [args[7], f"{t}%VEC(1)%G", f"{t}%VEC(1)%W",
                                                                     f"WaterPoints={args[8]}",
                                                                     "variant=TRIDI_MOHID_NEWTYPE"]
    if n == "thomas_2d":
        if len(args) == 13:
            return "tridi_thomas_2d", args + ["variant=TRIDI_MOHID_ORIGINAL"]
        if len(args) in (8, 9):
            t = args[6]
            return "tridi_thomas_2d", args[:6] + struct_args(t, True) + [args[7], f"{t}%VEC(1)%G", f"{t}%VEC(1)%W",
                                                                          "variant=TRIDI_MOHID_NEWTYPE"]
    return None


def long_lived(expr, source):
    """An array MOHID keeps for the whole run: a component of its module's Me, or a local pointer set to
    one (`NAME => Me%...`) and never allocated in the file (THOMAS_2D_NonHydroCorrection allocates its
    arrays per call: those must not be registered)."""
    if expr.lower().startswith("me%"):
        return True
    name = re.escape(expr)
    return bool(re.search(rf"^\s*{name}\s*=>\s*Me%", source, re.I | re.M)) and \
        not re.search(rf"allocate\s*\(\s*{name}\b", source, re.I)


def format_call(indent, routine, args, eol):
    out, line = [], f"{indent}call {routine}("
    for k, a in enumerate(args):
        piece = a + (", " if k < len(args) - 1 else ")")
        if len(line) + len(piece) > 110:
            out.append(line.rstrip() + " &" + eol)
            line = indent + "    "
        line += piece
    out.append(line + eol)
    return out


def swap_file(path, dry):
    raw = path.read_bytes().decode("latin-1")
    eol = "\r\n" if "\r\n" in raw else "\n"
    lines = raw.splitlines(keepends=True)
    out, i, nswap, used = [], 0, 0, False
    report = []
    while i < len(lines):
        line = lines[i]
        m = CALL_RE.match(line)
        if m and not line.lstrip().startswith("!"):
            end, args = read_call(lines, i)
            new = swapped(m.group(2), args)
            if new is not None:
                routine, nargs = new
                watch = ROUTINES[m.group(2).lower()]
                indent = m.group(1)
                out.append(f'{indent}if (MonitorPerformance) call StartWatch ("ModuleFunctions", "{watch}"){eol}')
                # MOHID's THOMAS arrays live from its constructors to its Kill routines: registered at their
                # first call (GPU: DMA from MOHID's memory; later calls find them registered). A failure
                # only leaves them staged, so its status is not fatal.
                at = ARRAYS_AT[routine]
                if all(long_lived(a, raw) for a in nargs[at:at + 5]):
                    out.append(f"{indent}block{eol}")
                    out.append(f"{indent}    integer :: tridi_stat{eol}")
                    out += format_call(indent + "    ", "tridi_mohid_register", nargs[at:at + 5] + ["tridi_stat"],
                                       eol)
                    out.append(f"{indent}end block{eol}")
                else:
                    report.append(f"{path.name}:{i + 1}: arrays allocated per call, not registered")
                out += format_call(indent, routine, nargs, eol)
                out.append(f'{indent}if (MonitorPerformance) call StopWatch ("ModuleFunctions", "{watch}"){eol}')
                report.append(f"{path.name}:{i + 1}: {m.group(2)} -> {routine} ({nargs[-1]})")
                nswap += 1
                i = end + 1
                continue
        out.append(line)
        i += 1
    if nswap:
        # `use tridi_mohid` after the (possibly continued) `use ModuleFunctions` statement
        for k, line in enumerate(out):
            if USE_RE.match(line):
                j = k
                while code_part(out[j]).rstrip().endswith("&"):
                    j += 1
                out.insert(j + 1, USE_LINE + eol)
                used = True
                break
        if not used:
            sys.exit(f"swap.py: {path}: no `use ModuleFunctions` to put `use tridi_mohid` after")
    if not dry:
        path.write_bytes("".join(out).encode("latin-1"))
    return report


def main():
    argv = [a for a in sys.argv[1:] if not a.startswith("--")]
    flags = [a for a in sys.argv[1:] if a.startswith("--")]
    if len(argv) != 1:
        sys.exit(__doc__)
    if "--gotm" in flags:
        sys.exit("swap.py: --gotm is not supported yet (see the usage)")
    root = Path(argv[0])
    soft = root / "Software" if (root / "Software").is_dir() else root
    total = []
    for f in FILES:
        p = soft / f
        if not p.is_file():
            sys.exit(f"swap.py: {p} not found (give the folder that holds Software/)")
        total += swap_file(p, "--dry-run" in flags)
    print("\n".join(total))
    nswapped = sum(" -> " in r for r in total)
    print(f"swap.py: {nswapped} calls swapped")
    if not nswapped:
        sys.exit(1)


if __name__ == "__main__":
    main()
