#!/usr/bin/env python3
"""check_cuda_architectures.py LIBRARY ARCHS: every CUDA object folded into LIBRARY (a static archive's
members, or a shared library) carries device code for exactly the architectures ARCHS names (CMake's
CMAKE_CUDA_ARCHITECTURES: "80", "80;90", "90-real", "90-virtual"): SASS (ELF) for each real one and PTX
only for architectures listed. Catches a target that pins its own architectures. Reads the fatbinary
(.nv_fatbin section: a header per fatbinary, then one header per entry with its kind and sm number), so
it needs only objcopy, not cuobjdump."""
import os
import struct
import subprocess
import sys
import tempfile

FATBIN_MAGIC = 0xBA55ED50
KIND = {1: "ptx", 2: "elf"}


def fatbin_entries(data):
    """(kind, arch) of every entry of the fatbinaries in one .nv_fatbin section."""
    off = 0
    while off + 16 <= len(data):
        magic, _version, header_size, fat_size = struct.unpack_from("<IHHQ", data, off)
        if magic != FATBIN_MAGIC:
            off += 8  # sections are 8-aligned; skip padding between fatbinaries
            continue
        p, end = off + header_size, off + header_size + fat_size
        while p < end:
            kind, _unused, entry_header, payload = struct.unpack_from("<HHIQ", data, p)
            arch = struct.unpack_from("<I", data, p + 28)[0]
            yield KIND.get(kind, str(kind)), arch
            p += entry_header + payload
        off = end


def objects(library, tmp):
    if library.endswith(".a"):
        subprocess.run(["ar", "x", os.path.abspath(library)], cwd=tmp, check=True)
        return sorted(os.path.join(tmp, f) for f in os.listdir(tmp))
    return [library]


def main():
    library, archs = sys.argv[1], [a for a in sys.argv[2].split(";") if a]
    real = {int(a.split("-")[0]) for a in archs if not a.endswith("-virtual")}
    listed = {int(a.split("-")[0]) for a in archs}
    failures, seen = 0, 0
    with tempfile.TemporaryDirectory() as tmp:
        for obj in objects(library, tmp):
            section = obj + ".fatbin"
            r = subprocess.run(["objcopy", "-O", "binary", "--only-section=.nv_fatbin", obj, section],
                               capture_output=True)
            if r.returncode != 0 or not os.path.exists(section) or os.path.getsize(section) == 0:
                continue
            with open(section, "rb") as f:
                entries = set(fatbin_entries(f.read()))
            seen += 1
            elf = {a for k, a in entries if k == "elf"}
            ptx = {a for k, a in entries if k == "ptx"}
            ok = elf == real and ptx <= listed
            print(f"{'ok  ' if ok else 'FAIL'}: {os.path.basename(obj)}: sm {sorted(elf)}, ptx {sorted(ptx)}")
            failures += not ok
    if seen == 0:
        print(f"check_cuda_architectures: no CUDA device code found in {library}")
        return 1
    print(f"check_cuda_architectures: {seen} objects, expected sm {sorted(real)} (CMAKE_CUDA_ARCHITECTURES {archs}),"
          f" {failures} wrong")
    return failures != 0


if __name__ == "__main__":
    sys.exit(main())
