#!/usr/bin/env python3
"""Checks every #include "..." of src/ against the layer table written by CMakeLists.txt.

A file in a layer's folder may include headers of its own layer and of the layers below it
(its dependencies, followed transitively). Prints one line per upward or sideways include and
exits 1 when there is any; prints the number of includes checked otherwise.

Usage: check_layering.py build/layers.txt src
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def read_table(path):
    folders, deps = {}, {}
    for line in pathlib.Path(path).read_text().splitlines():
        if not line.strip():
            continue
        name, folder, *below = line.split()
        folders[name] = folder.removeprefix("src/")
        deps[name] = below
    return folders, deps


def closure(name, deps, seen=None):
    seen = set() if seen is None else seen
    for d in deps.get(name, []):
        if d not in seen:
            seen.add(d)
            closure(d, deps, seen)
    return seen


def layer_of(rel, folders):
    """The layer whose folder is the longest prefix of `rel` (backend/ref before backend)."""
    best = None
    for name, folder in folders.items():
        if rel == folder or rel.startswith(folder + "/"):
            if best is None or len(folder) > len(folders[best]):
                best = name
    return best


def main():
    table, src = sys.argv[1], pathlib.Path(sys.argv[2])
    folders, deps = read_table(table)
    problems, checked = [], 0
    for path in sorted(src.rglob("*")):
        if path.suffix not in (".h", ".cc"):
            continue
        rel = path.relative_to(src).as_posix()
        own = layer_of(rel, folders)
        if own is None:
            problems.append(f"{rel}: not in any layer's folder; add it to a layer in CMakeLists.txt")
            continue
        allowed = closure(own, deps) | {own}
        for header in INCLUDE.findall(path.read_text()):
            target = layer_of(header, folders)
            if target is None:
                continue  # a header outside src/ (the C plugin header is found by path too)
            checked += 1
            if target not in allowed:
                problems.append(f"{rel}: includes \"{header}\" of layer {target}; layer {own} "
                                f"may include only {', '.join(sorted(allowed))}")
    for p in problems:
        print(p)
    if problems:
        print(f"layering: {len(problems)} include(s) break the layer table")
        return 1
    print(f"layering: {checked} includes checked, all within the layer table")
    return 0


if __name__ == "__main__":
    sys.exit(main())
