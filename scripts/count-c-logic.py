#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Counts the logic in rcm.ko's C files (drivers/infiniband/rcm/*.c).

A function whose body is one statement without control flow is a shim:
an out-of-line copy of a static inline or macro, which Rust cannot call.
Every other function's body lines (not blank, not a lone brace, comments
and preprocessor lines aside) count as logic. Prints one line per file
and the total; with --functions, each non-shim function and its count.
"""
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MOD = os.path.join(ROOT, "drivers/infiniband/rcm")
CONTROL = re.compile(r"\b(if|else|for|while|switch|case|goto|do)\b|\?")


def strip_comments(text):
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"), text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    return re.sub(r'"(\\.|[^"\\])*"', '""', text)


def functions(text):
    """(name, body lines) of each function defined at file scope."""
    lines = strip_comments(text).split("\n")
    i = 0
    while i < len(lines):
        if lines[i] == "{" and i > 0:
            # The signature ends on the line before: find its name.
            j = i - 1
            while j > 0 and "(" not in lines[j]:
                j -= 1
            m = re.search(r"(\w+)\s*\(", lines[j])
            name = m.group(1) if m else "?"
            body = []
            i += 1
            while i < len(lines) and lines[i] != "}":
                body.append(lines[i])
                i += 1
            yield name, body
        i += 1


def counted(body):
    return [
        line for line in body
        if line.strip() and line.strip() not in ("{", "}", "};")
        and not line.lstrip().startswith("#")
    ]


def is_shim(body):
    lines = counted(body)
    statements = sum(line.count(";") for line in lines)
    return statements <= 1 and not any(CONTROL.search(line) for line in lines)


def main():
    show = "--functions" in sys.argv
    total = 0
    for name in sorted(os.listdir(MOD)):
        if not name.endswith(".c") or name.endswith(".mod.c"):
            continue
        with open(os.path.join(MOD, name)) as f:
            text = f.read()
        funcs = list(functions(text))
        logic = [(fn, len(counted(body))) for fn, body in funcs if not is_shim(body)]
        lines = sum(n for _, n in logic)
        total += lines
        print(f"{name}: {len(funcs)} functions, {len(funcs) - len(logic)} shims, "
              f"{lines} logic lines")
        if show:
            for fn, n in logic:
                print(f"    {fn}: {n}")
    print(f"total: {total} logic lines")


if __name__ == "__main__":
    main()
