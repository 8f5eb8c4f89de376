#!/usr/bin/env python3
"""The docs a newcomer reads stay true to the code.

1. Every code block of README.md and docs/*.md marked ```c or ```fortran compiles against the public
   headers (include/tridi.h, include/tridi_mpi.h) and the Fortran modules:
   - C: first as a file-scope unit (declarations, prototypes, a whole program), where a struct the block
     defines must match the header's (size and member offsets) and a prototype the header's; if that
     fails, as a fragment: statements inside a function, after tests/docs/fragment.h, which declares the
     names the docs use for a model's arrays and sizes.
   - Fortran: a block that starts with program, module, subroutine or function is compiled as it is;
     any other is a fragment, compiled as an internal subroutine of the program of
     tests/docs/fragment.f90, whose variables stand for the model's (the block's own use statements and
     declarations take precedence).
   ```c fragment / ```fortran fragment force the fragment form; any other word after c/fortran is an
   error. Blocks not meant to compile say so with another info string (```text, ```sh, ...).
2. Every function declared in tridi.h is named in docs/api.md, every one of tridi_mpi.h in docs/mpi.md.
3. Every option() of the top-level CMakeLists.txt is named in README.md.
4. Every relative link of README.md and docs/**/*.md leads to a file or folder of the tree.

Exit 0 when all hold; otherwise every failure is printed (file, line of the block, compiler output) and the
exit status is 1.
"""
import argparse
import glob
import os
import re
import shutil
import subprocess
import sys

FENCE = re.compile(r"^(\s*)```(.*)$")


def code_blocks(path):
    """(first line number, info string, text) of every fenced block of a Markdown file."""
    blocks, cur = [], None
    with open(path, encoding="utf-8") as fh:
        for n, line in enumerate(fh, 1):
            m = FENCE.match(line.rstrip("\n"))
            if cur is None and m:
                cur = (n, m.group(2).strip(), len(m.group(1)), [])
            elif cur is not None and m and not m.group(2).strip():
                blocks.append((cur[0], cur[1], "".join(cur[3])))
                cur = None
            elif cur is not None:
                cur[3].append(line[cur[2]:] if line[: cur[2]].strip() == "" else line)
    if cur is not None:
        blocks.append((cur[0], cur[1], "".join(cur[3])))
    return blocks


def strip_c_comments(text):
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    return re.sub(r"//[^\n]*", " ", text)


def header_functions(path):
    """Names of the functions a C header declares (macros and comments left out)."""
    with open(path, encoding="utf-8") as fh:
        text = strip_c_comments(fh.read())
    text = re.sub(r"^\s*#.*?(?<!\\)$", " ", text, flags=re.M | re.S)
    return sorted(set(re.findall(r"\b(tridi_\w+)\s*\(", text)))


def struct_checks(block):
    """Renames every struct the block defines (so it can sit beside the header's) and, right after each
    definition, asserts that its size and member offsets equal the header's."""
    out, pos = [], 0
    for m in re.finditer(r"\b(?:typedef\s+)?struct\s+(\w+)\s*\{", block):
        name = m.group(1)
        depth, i = 0, m.end() - 1
        while i < len(block):
            depth += {"{": 1, "}": -1}.get(block[i], 0)
            if depth == 0:
                break
            i += 1
        body = block[m.end(): i]
        end = block.index(";", i) + 1
        members = []
        for decl in strip_c_comments(body).split(";"):
            for part in decl.split(","):
                ids = re.findall(r"[A-Za-z_]\w*", re.sub(r"\[[^\]]*\]", "", part))
                if ids:
                    members.append(ids[-1])
        checks = [f'_Static_assert(sizeof(struct doc_{name}) == sizeof(struct {name}), '
                  f'"docs: struct {name} is not the header\'s (size)");']
        checks += [f'_Static_assert(offsetof(struct doc_{name}, {mem}) == offsetof(struct {name}, {mem}), '
                   f'"docs: member {mem} of struct {name} is not the header\'s");' for mem in members]
        out.append(block[pos: m.start()])
        out.append(f"\n#define {name} doc_{name}\n")
        out.append(block[m.start(): end])
        out.append(f"\n#undef {name}\n" + "\n".join(checks) + "\n")
        pos = end
    out.append(block[pos:])
    return "".join(out)


def c_unit(kind, block, mpi):
    head = "#include <stddef.h>\n#include <stdint.h>\n#include <stdio.h>\n#include <stdlib.h>\n"
    if mpi:
        head += "#include <mpi.h>\n#include <tridi_mpi.h>\n"
    head += "#include <tridi.h>\n"
    if kind == "":
        return head + struct_checks(block)
    includes = "".join(l + "\n" for l in block.splitlines() if l.lstrip().startswith("#include"))
    body = "".join(l + "\n" for l in block.splitlines() if not l.lstrip().startswith("#include"))
    return head + includes + '#include "fragment.h"\nvoid doc_fragment(void)\n{\n' + body + "}\n"


UNIT = re.compile(r"^\s*(program|module|subroutine|function|(pure\s+|elemental\s+|recursive\s+)*"
                  r"(subroutine|function))\b", re.I)


def fortran_is_unit(block):
    for line in block.splitlines():
        if line.strip() and not line.strip().startswith("!"):
            return bool(UNIT.match(line))
    return False


def fortran_unit(kind, block, harness):
    if kind == "" and fortran_is_unit(block):
        return block
    with open(harness, encoding="utf-8") as fh:
        host = fh.read()
    return host.replace("    !@snippet\n", block)


def compile_one(cmd, src, suffix, work, tag):
    os.makedirs(work, exist_ok=True)
    path = os.path.join(work, tag + suffix)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(src)
    r = subprocess.run(cmd + [path], cwd=work, capture_output=True, text=True)
    return r.returncode, (r.stdout + r.stderr).strip(), path


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--cc", required=True)
    ap.add_argument("--fc")
    ap.add_argument("--fmod", help="directory of the built .mod files (tridi, tridi_adi, tridi_mohid, ...)")
    ap.add_argument("--mpi-include", action="append", default=[], help="an MPI include directory (MPI built)")
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    src = a.source
    here = os.path.join(src, "tests", "docs")
    failures, compiled, nocompile = [], [], []
    shutil.rmtree(a.work, ignore_errors=True)

    docs = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md")))
    for doc in docs:
        rel = os.path.relpath(doc, src)
        is_mpi = os.path.basename(doc) == "mpi.md"
        for line, info, block in code_blocks(doc):
            words = info.split()
            lang = words[0] if words else ""
            kind = " ".join(words[1:])
            if lang not in ("c", "fortran"):
                continue
            tag = re.sub(r"\W", "_", rel) + f"_{line}"
            where = f"{rel}:{line} (```{info})"
            if kind not in ("", "fragment"):
                failures.append(f"{where}: unknown kind '{kind}' (use ```{lang}, ```{lang} fragment, or ```text "
                                "for a block that is not meant to compile)")
                continue
            if lang == "c":
                if is_mpi and not a.mpi_include:
                    nocompile.append(f"{where}: not compiled, this build has no MPI layer")
                    continue
                incs = ["-I" + os.path.join(src, "include"), "-I" + here]
                incs += ["-I" + d for d in a.mpi_include]
                cmd = [a.cc, "-std=c11", "-Wall", "-Werror", "-Wno-unused-variable", "-Wno-unused-but-set-variable",
                       "-fsyntax-only"] + incs
                rc, out, path = compile_one(cmd, c_unit(kind, block, is_mpi), ".c", a.work, tag)
                form = "a fragment" if kind else "a file-scope unit"
                if rc != 0 and kind == "":
                    frc, fout, fpath = compile_one(cmd, c_unit("fragment", block, is_mpi), ".c", a.work,
                                                   tag + "_fragment")
                    if frc == 0:
                        rc, form = 0, "a fragment"
                    else:
                        head = "\n".join(out.splitlines()[:6])
                        out = f"as a fragment ({fpath}):\n{fout}\nas a file-scope unit (first lines):\n{head}"
            else:
                if not a.fc:
                    nocompile.append(f"{where}: not compiled, this build has no Fortran modules")
                    continue
                if not os.path.exists(os.path.join(a.fmod, "tridi.mod")):
                    failures.append(f"{where}: {a.fmod}/tridi.mod missing: build tridi_fortran first")
                    continue
                cmd = [a.fc, "-std=f2018", "-fsyntax-only", "-I" + a.fmod, "-J" + a.work]
                rc, out, path = compile_one(cmd, fortran_unit(kind, block, os.path.join(here, "fragment.f90")),
                                            ".f90", a.work, tag)
                form = "a program unit" if kind == "" and fortran_is_unit(block) else "a fragment"
            compiled.append(f"{where}: compiled as {form}")
            if rc != 0:
                failures.append(f"{where}: does not compile ({path}):\n{out}")

    for header, doc in (("tridi.h", "api.md"), ("tridi_mpi.h", "mpi.md")):
        with open(os.path.join(src, "docs", doc), encoding="utf-8") as fh:
            text = fh.read()
        for fn in header_functions(os.path.join(src, "include", header)):
            if not re.search(r"\b" + fn + r"\b", text):
                failures.append(f"docs/{doc}: {fn} (declared in include/{header}) is not documented")

    with open(os.path.join(src, "CMakeLists.txt"), encoding="utf-8") as fh:
        options = re.findall(r"^\s*option\(\s*(\w+)", fh.read(), flags=re.M)
    with open(os.path.join(src, "README.md"), encoding="utf-8") as fh:
        readme = fh.read()
    for opt in options:
        if not re.search(r"\b" + opt + r"\b", readme):
            failures.append(f"README.md: CMake option {opt} is missing from the build options table")

    linked = [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "**", "*.md"),
                                                                recursive=True))
    for doc in linked:
        with open(doc, encoding="utf-8") as fh:
            text = fh.read()
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", text):
            if re.match(r"[a-z]+:", target):
                continue
            if not os.path.exists(os.path.normpath(os.path.join(os.path.dirname(doc), target))):
                failures.append(f"{os.path.relpath(doc, src)}: link to {target}, which does not exist")

    for n in compiled + nocompile:
        print(n)
    print(f"docs: {len(compiled)} code blocks compiled, {len(options)} options and the public functions "
          f"checked, the links of {len(linked)} files followed")
    for f in failures:
        print("FAIL " + f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
