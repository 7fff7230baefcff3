#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks the layering of rcm.ko's Rust code (rcm_main.rs states it).

  core   drivers/infiniband/rcm/core/src  no unsafe, no kernel, no bindings
  rdma   rust/rdma                        uses only bindings, the core's
                                          types and itself
  shell  drivers/infiniband/rcm/shell     uses core and rdma only; no raw
                                          bindings, no unsafe
  abi    drivers/infiniband/rcm/abi/<x>   uses core, rdma, shell, bindings
                                          and itself; of the other surfaces
                                          only those its C counterpart uses
                                          (ucma -> rdma_cm -> ib_cm)
  root   rcm_main.rs                      composes them (may use all)

No exemption: a surface that names a module naming another surface it
may not use is itself that use (abi::service is no hub).

No import cycle between any two files outside the core, a directory's
mod.rs and its children included. Every path a file names is resolved:
`crate::`, `self::`, `super::` (repeated), a child module's name, a name
brought in by a `use`, and `use` trees with nested `{}` groups. Prints one
line per layer; exits 1 with the violations listed if any rule is broken.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOD = os.path.join(ROOT, "drivers/infiniband/rcm")
# Which surfaces a surface may use: its C counterpart's dependencies.
ABI_MAY_USE = {"ucma": {"rdma_cm", "ib_cm"}, "rdma_cm": {"ib_cm"}, "ib_cm": set()}
# What each layer may name (its own layer always).
LAYER_MAY_USE = {
    "rdma": {"bindings", "proto"},
    "shell": {"proto", "rdma", "new_irq_spinlock", "new_task_spinlock"},
    "abi": {"proto", "rdma", "shell", "bindings"},
    "bindings": set(),
}


def rust_files(top):
    for d, _, fs in os.walk(top):
        if "/target" in d or "/fuzz" in d:
            continue
        for f in sorted(fs):
            if f.endswith(".rs") and not f.endswith("_generated.rs"):
                yield os.path.join(d, f)


def code(path):
    """The file without comments, string and char literals."""
    src = open(path, errors="replace").read()
    src = re.sub(r"//[^\n]*", "", src)
    src = re.sub(r"/\*.*?\*/", "", src, flags=re.S)
    src = re.sub(r'b?"(\\.|[^"\\])*"', '""', src)
    return re.sub(r"'(\\.|[^'\\])'", "''", src)


def module_of(path):
    """The module path of a file of rcm.ko, e.g. ['shell', 'service']."""
    if path.startswith(os.path.join(ROOT, "rust/rdma")):
        rel = "rdma/" + os.path.relpath(path, os.path.join(ROOT, "rust/rdma"))
    elif path.startswith(os.path.join(ROOT, "rust/bindings")):
        rel = "bindings/" + os.path.relpath(path, os.path.join(ROOT, "rust/bindings"))
    else:
        rel = os.path.relpath(path, MOD)
    rel = re.sub(r"(/mod)?\.rs$", "", rel)
    return () if rel == "rcm_main" else tuple(rel.split("/"))


def layer_of(mod):
    return mod[0] if mod else "root"


def split_top(s, sep=","):
    """Splits at `sep` outside braces."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch == "{":
            depth += 1
        elif ch == "}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    out.append(cur)
    return [p.strip() for p in out if p.strip()]


def expand_use(tree):
    """A use tree as a list of (path segments, bound name)."""
    tree = re.sub(r"\s+as\s+", "@", tree.strip())
    tree = re.sub(r"\s+", "", tree)
    m = re.match(r"^(.*?)\{(.*)\}$", tree)
    if m:
        prefix = [s for s in m.group(1).split("::") if s]
        out = []
        for part in split_top(m.group(2)):
            for segs, name in expand_use(part):
                segs = prefix + segs
                out.append((segs, name if name != "self" else (prefix[-1] if prefix else name)))
        return out
    alias = None
    if "@" in tree:
        tree, alias = tree.split("@", 1)
    segs = [s for s in tree.split("::") if s]
    if segs and segs[-1] == "self":
        segs = segs[:-1]
    name = alias or (segs[-1] if segs else "")
    return [(segs, name)]


def resolve(segs, mod, children, aliases, is_dir):
    """Absolute module path for `segs` named inside module `mod`, or None
    if it leads outside the crate."""
    if not segs:
        return None
    head = segs[0]
    if head == "crate":
        return tuple(segs[1:])
    if head in ("self", "super"):
        # A file module's `self` is itself; `super` its parent.
        base = list(mod)
        rest = segs
        if rest[0] == "self":
            rest = rest[1:]
        while rest and rest[0] == "super":
            base = base[:-1]
            rest = rest[1:]
        return tuple(base) + tuple(rest)
    if head in children:
        return tuple(mod) + tuple(segs)
    if head in aliases:
        return aliases[head] + tuple(segs[1:])
    return None


def main():
    errors = []
    files = {}
    for top in (MOD, os.path.join(ROOT, "rust/rdma"), os.path.join(ROOT, "rust/bindings")):
        for path in rust_files(top):
            if "/core/" in path:
                continue
            files[module_of(path)] = path
    # rcm_main.rs mounts the core's modules as crate::proto::*.
    proto = ("proto",)
    unsafe_count = {}
    edges = {m: {} for m in files}
    # abi's parts (the surfaces and shared files) and whom each names
    abi_uses = {}
    for mod, path in files.items():
        src = code(path)
        layer = layer_of(mod)
        rel = os.path.relpath(path, ROOT)
        unsafe_count[layer] = unsafe_count.get(layer, 0) + len(re.findall(r"\bunsafe\b", src))
        children = set(re.findall(r"^\s*(?:pub(?:\([\w:]+\))?\s+)?mod\s+(\w+)\s*;", src, re.M))
        aliases = {}
        named = []  # (absolute path, how it was written)
        for tree in re.findall(r"\buse\s+([^;]+);", src):
            for segs, name in expand_use(tree):
                target = resolve(segs, mod, children, aliases, True)
                if target is None:
                    continue
                named.append((target, "::".join(segs)))
                if name and name != "*":
                    aliases[name] = target
        body = re.sub(r"\buse\s+[^;]+;", "", src)
        for m in re.finditer(r"(?<![\w:])((?:[A-Za-z_]\w*::)+[A-Za-z_]\w*)", body):
            segs = m.group(1).split("::")
            target = resolve(segs, mod, children, aliases, True)
            if target is not None:
                named.append((target, m.group(1)))
        for target, written in named:
            if not target:
                continue
            top = target[0]
            if layer in LAYER_MAY_USE and top != layer and top not in LAYER_MAY_USE[layer]:
                errors.append(f"{rel}: the {layer} layer names {written}")
            if layer == "shell" and top == "bindings":
                errors.append(f"{rel}: the shell names the raw bindings ({written})")
            if layer == "abi" and top == "abi":
                part = mod[1] if len(mod) > 1 else ""
                other = target[1] if len(target) > 1 else ""
                if part and other and other != part:
                    abi_uses.setdefault(part, {}).setdefault(other, f"{rel} ({written})")
            # file-level edge: the longest prefix that is a file
            for k in range(len(target), 0, -1):
                cand = tuple(target[:k])
                if cand in files:
                    if cand != mod:
                        edges[mod].setdefault(cand, written)
                    break
        if layer == "shell":
            for line in src.splitlines():
                if re.search(r"\bunsafe\b", line):
                    errors.append(f"{rel}: unsafe in the shell: {line.strip()}")
    # A surface may reach another only as its C counterpart does, through
    # any chain of abi's parts (a shared file naming a surface counts).
    for part in sorted(abi_uses):
        reach, todo, cyclic = {}, [part], False
        while todo:
            cur = todo.pop()
            for nxt, why in abi_uses.get(cur, {}).items():
                cyclic |= nxt == part
                if nxt not in reach and nxt != part:
                    reach[nxt] = why
                    todo.append(nxt)
        if part in ABI_MAY_USE:
            for other in sorted(reach):
                if other in ABI_MAY_USE and other not in ABI_MAY_USE[part]:
                    errors.append(f"ABI surface {part} reaches surface {other}: {reach[other]}")
        if cyclic:
            errors.append(f"ABI part {part} is in a cycle of abi's parts: {sorted(reach)}")
    core_src = "".join(code(p) for p in rust_files(os.path.join(MOD, "core/src")))
    core_ok = not re.search(r"\bunsafe\b|\bkernel::|\bbindings::", core_src)
    if not core_ok:
        errors.append("core: unsafe code or a kernel dependency")
    # cycles (Tarjan), each reported with one edge of it per file
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

    def name(m):
        return "::".join(m) or "root"

    for v in edges:
        if v not in index:
            strong(v)
    for comp in sccs:
        inside = set(comp)
        detail = "; ".join(f"{name(a)} -> {name(b)} ({edges[a][b]})"
                           for a in comp for b in sorted(edges[a]) if b in inside)
        errors.append(f"import cycle of {len(comp)} files: {detail}")
    for layer in ("bindings", "rdma", "shell", "abi", "root"):
        mods = sorted(m for m in files if layer_of(m) == layer)
        print(f"{layer}: {len(mods)} files, {unsafe_count.get(layer, 0)} unsafe")
    print("core: no unsafe, no kernel dependency" if core_ok else "core: broken")
    for e in errors:
        print("violation:", e)
    print(f"{len(files)} files, {sum(len(e) for e in edges.values())} imports, {len(errors)} violations")
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
