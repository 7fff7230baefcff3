#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the layering of rcm.ko's Rust code (rcm_main.rs states it).

  core   drivers/infiniband/rcm/core/src  no unsafe, no kernel, no bindings
  rdma   rust/rdma                        uses only bindings, the core's
                                          types and itself
  shell  drivers/infiniband/rcm/shell     uses core and rdma only; no raw
                                          bindings, no unsafe
  abi    drivers/infiniband/rcm/abi/<x>   uses core, rdma, shell, bindings
                                          and itself; no other surface
                                          (except ucma -> rdma_cm, and
                                          rdma_cm -> ib_cm, as in C), and
                                          abi::service, the one CM service
                                          the surfaces share (which may
                                          use every surface)

No import cycles between files outside the core. Prints one line per
layer; exits 1 with the violations listed if any rule is broken.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOD = os.path.join(ROOT, "drivers/infiniband/rcm")
ABI_MAY_USE = {"ucma": {"rdma_cm"}, "rdma_cm": {"ib_cm"}}
ABI_HUB = "service"


def rust_files(top):
    for d, _, fs in os.walk(top):
        if "/target" in d or "/fuzz" in d:
            continue
        for f in sorted(fs):
            if f.endswith(".rs") and not f.endswith("_generated.rs"):
                yield os.path.join(d, f)


def code(path):
    """The file without comments and string literals."""
    src = open(path, errors="replace").read()
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    return re.sub(r'"(\\.|[^"\\])*"', '""', src)


def module_of(path):
    """The module path of a file of rcm.ko, e.g. shell::service."""
    if path.startswith(os.path.join(ROOT, "rust/rdma")):
        rel = "rdma/" + os.path.relpath(path, os.path.join(ROOT, "rust/rdma"))
    else:
        rel = os.path.relpath(path, MOD)
    rel = re.sub(r"(/mod)?\.rs$", "", rel)
    return "" if rel == "rcm_main" else rel.replace("/", "::")


def layer_of(mod):
    return mod.split("::")[0] if mod else "root"


def used_paths(src):
    """Every crate:: path a file names, `use crate::{a, b::c}` expanded."""
    paths = re.findall(r"crate::([A-Za-z_][\w:]*)", src)
    for group in re.findall(r"use crate::\{([^}]*)\}", src):
        paths += [p.strip().split("::{")[0] for p in group.split(",") if p.strip()]
    return [p.rstrip(":") for p in paths]


def main():
    errors = []
    files = {}
    for top in (MOD, os.path.join(ROOT, "rust/rdma")):
        for path in rust_files(top):
            if "/core/" in path:
                continue
            files[module_of(path)] = path
    unsafe_count = {}
    edges = {m: set() for m in files}
    for mod, path in files.items():
        src = code(path)
        layer = layer_of(mod)
        rel = os.path.relpath(path, ROOT)
        n = len(re.findall(r"\bunsafe\b", src))
        unsafe_count[layer] = unsafe_count.get(layer, 0) + n
        for p in used_paths(src):
            target = p.split("::")[0]
            if layer == "rdma" and target not in ("bindings", "rdma", "proto"):
                errors.append(f"{rel}: rust/rdma uses crate::{p}")
            if layer == "shell":
                if target not in ("proto", "rdma", "shell", "new_irq_spinlock"):
                    errors.append(f"{rel}: the shell uses crate::{p}")
            if layer == "abi":
                surface = mod.split("::")[1] if "::" in mod else ""
                if target == "abi":
                    other = p.split("::")[1] if "::" in p else ""
                    hub = ABI_HUB in (surface, other)
                    if (other and other != surface and not hub
                            and other not in ABI_MAY_USE.get(surface, ())):
                        errors.append(f"{rel}: ABI surface {surface} uses surface {other}")
                elif target not in ("proto", "rdma", "shell", "bindings"):
                    errors.append(f"{rel}: an ABI surface uses crate::{p}")
            # file-level edges for the cycle check
            parts = p.split("::")
            for k in range(len(parts), 0, -1):
                cand = "::".join(parts[:k])
                if cand in files and cand != mod and cand:
                    edges[mod].add(cand)
                    break
        # super:: within a directory module
        parent = mod.rsplit("::", 1)[0] if "::" in mod else ""
        for name in re.findall(r"\bsuper::(\w+)", src):
            cand = f"{parent}::{name}" if parent else name
            if cand in files and cand != mod:
                edges[mod].add(cand)
        if layer == "shell":
            if re.search(r"\bbindings::", src):
                errors.append(f"{rel}: the shell touches the raw bindings")
            for line in src.splitlines():
                if re.search(r"\bunsafe\b", line):
                    errors.append(f"{rel}: unsafe in the shell: {line.strip()}")
    core_src = "".join(code(p) for p in rust_files(os.path.join(MOD, "core/src")))
    core_ok = not re.search(r"\bunsafe\b|\bkernel::|\bbindings::", core_src)
    if not core_ok:
        errors.append("core: unsafe code or a kernel dependency")
    # cycles (Tarjan)
    index, low, stack, on, sccs, counter = {}, {}, [], set(), [], [0]
    sys.setrecursionlimit(10000)

    def strong(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in edges[v]:
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                sccs.append(sorted(comp))

    for v in edges:
        if v not in index:
            strong(v)
    for comp in sccs:
        errors.append("import cycle: " + " <-> ".join(m or "root" for m in comp))
    for layer in ("rdma", "shell", "abi", "root"):
        mods = sorted(m for m in files if layer_of(m) == layer)
        print(f"{layer}: {len(mods)} files, {unsafe_count.get(layer, 0)} unsafe")
    print("core: no unsafe, no kernel dependency" if core_ok else "core: broken")
    for e in errors:
        print("violation:", e)
    print(f"{len(files)} files, {sum(len(e) for e in edges.values())} imports, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
