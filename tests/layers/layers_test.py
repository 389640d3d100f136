#!/usr/bin/env python3
"""Checks that every #include follows the layer map of docs/architecture.md.

Each folder may include headers of the folders listed for it (its own included); anything else
is a dependency the map does not allow, reported as FILE:LINE and the header. Exit status 1 when
there is one. Usage: layers_test.py SOURCE_ROOT
"""
import pathlib
import re
import sys

# The layer map (docs/architecture.md): folder -> the folders it may include.
ENGINE = {"core", "runtime", "ops", "graph"}
ALLOWED = {
    "core": {"core"},
    "runtime": {"core", "runtime"},
    "ops": ENGINE,
    "graph": ENGINE,
    "data": {"core", "data"},
    "train": ENGINE | {"data", "train"},
    "distributed": ENGINE | {"data", "train", "distributed"},
    "zoo": ENGINE | {"data", "train", "distributed", "zoo"},
    "python": ENGINE | {"data", "train", "distributed", "python"},
}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([A-Za-z_]+)/')


def main() -> int:
    root = pathlib.Path(sys.argv[1])
    bad, seen = [], 0
    for folder, allowed in ALLOWED.items():
        for path in sorted((root / folder).rglob("*")):
            if path.suffix not in {".h", ".cc", ".cu"}:
                continue
            seen += 1
            for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
                m = INCLUDE.match(line)
                if m and m.group(1) in ALLOWED and m.group(1) not in allowed:
                    bad.append(f"{path.relative_to(root)}:{n}: {folder}/ includes {m.group(1)}/ ({line.strip()})")
    if seen == 0:
        print(f"no sources under {root}", file=sys.stderr)
        return 1
    for b in bad:
        print(b, file=sys.stderr)
    print(f"{seen} files, {len(bad)} includes against the layer map")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
