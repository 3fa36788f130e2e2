#!/usr/bin/env python3
"""tests/layers/check.py BUILD_DIR - the layering of dataplane/ as the linker sees it.

Reads the symbols every object of BUILD_DIR defines and uses (nm) and finds
which folder calls which. A folder may call only the folders declared before
it in dataplane/meson.build (and base/, drivers-cfg/, ctl/ below them all);
any other call, a cycle between folders included, is printed and fails.
Prints "PASS layers (...)" or "FAIL layers: ..." and exits 0 or 1.
"""
import collections
import os
import re
import subprocess
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
build = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "build"))

# The order: base, drivers-cfg, ctl, then dataplane/ as its meson.build lists
# its subdirs, then daemon.
order = ["base", "drivers-cfg", "ctl"]
with open(os.path.join(root, "dataplane", "meson.build")) as f:
    order += ["dataplane/" + d for d in re.findall(r"^subdir\('([a-z_]+)'\)", f.read(), re.M)]
order.append("daemon")
rank = {d: i for i, d in enumerate(order)}

defs, uses = {}, collections.defaultdict(set)
for top, _, files in os.walk(build):
    for fn in files:
        if not fn.endswith(".o"):
            continue
        path = os.path.join(top, fn)
        rel = os.path.relpath(path, build)
        if ".p/" not in rel:
            continue
        folder = os.path.dirname(rel.split(".p/")[0])
        if folder not in rank:
            continue  # tests, bench, fuzzers: not layers
        out = subprocess.run(["nm", path], capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) == 3 and parts[1] in "TDBR":
                defs[parts[2]] = folder
            elif len(parts) == 2 and parts[0] == "U":
                uses[folder].add(parts[1])

bad = []
for folder, syms in sorted(uses.items()):
    for s in sorted(syms):
        owner = defs.get(s)
        if owner and owner != folder and rank[owner] > rank[folder]:
            bad.append(f"{folder} calls {owner}: {s}")
if not defs:
    print(f"FAIL layers: no objects under {build} (build first)")
    sys.exit(1)
if bad:
    print("FAIL layers: a folder calls one above it or beside it later in the order")
    for b in bad:
        print("    " + b)
    sys.exit(1)
print(f"PASS layers ({len(order)} folders, {len(defs)} symbols: none called upward)")
