#!/usr/bin/env python3
"""Checks that the folder tree states the layering: every `#include "tilesweep/<lib>/..."` in
src/<lib>/ and include/tilesweep/<lib>/ names a library at or below the includer's, and no file
reaches into another library's folder by a relative path.

Library order (lowest first): base < semantics < ir < target < verify < mutate < lower < sim < nki_import <
mesh < store < sweep < report < cli. `store` is a leaf above base: it includes base and itself
only. Exits 1 with one line per include that points up the stack: file:line: what, and the fix.

Usage: python3 scripts/check_layers.py [repo_root]   (standard library only)
"""
from __future__ import annotations

import re
import sys
from pathlib import Path

ORDER = ["base", "semantics", "ir", "target", "verify", "mutate", "lower", "sim", "nki_import", "mesh", "store", "sweep",
         "report", "cli"]
LEAVES = {"store": {"base", "store"}}  # library -> the only libraries it may include
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"')


def allowed(includer: str, included: str) -> bool:
    if includer in LEAVES:
        return included in LEAVES[includer]
    return ORDER.index(included) <= ORDER.index(includer)


def library_files(root: Path):
    for top in (root / "src", root / "include" / "tilesweep"):
        if not top.is_dir():
            continue
        for lib_dir in sorted(p for p in top.iterdir() if p.is_dir()):
            if lib_dir.name not in ORDER:
                continue
            for f in sorted(lib_dir.rglob("*")):
                if f.suffix in (".h", ".cpp", ".in"):
                    yield lib_dir.name, f


def problems(root: Path) -> list[str]:
    found = []
    for lib, f in library_files(root):
        for number, line in enumerate(f.read_text(errors="replace").splitlines(), 1):
            m = INCLUDE.match(line)
            if not m:
                continue
            path = m.group(1)
            where = f"{f.relative_to(root)}:{number}"
            if path.startswith("tilesweep/"):
                included = path.split("/")[1]
                if included not in ORDER:
                    found.append(f"{where}: includes '{path}' of no known library; add it to ORDER in {Path(__file__).name}")
                elif not allowed(lib, included):
                    found.append(f"{where}: '{lib}' includes '{path}' of '{included}', above it in the stack; move the "
                                 f"shared piece down to '{lib}' or below")
            elif "../" in path:
                found.append(f"{where}: includes '{path}' by a relative path; include a library's public header "
                             f"(tilesweep/<lib>/...) instead")
    return found


def main() -> int:
    root = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent
    found = problems(root)
    for p in found:
        print(p)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
