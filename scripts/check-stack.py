#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Stack frames of a built module: each function's frame as its prologue
sets it up (the callee-saved registers it pushes and the `sub $N, %rsp`
that follows), from the disassembly of the real build (KASAN's red zones
included). Fails if a function a user's call may run has a frame over the
limit (EXEMPT names those that run only on kernel threads or at load);
rustc has no -Wframe-larger-than, and the C files are held to it by the
kernel's CONFIG_FRAME_WARN.

    check-stack.py <module.ko> [limit bytes, 2048] [--top N]
"""
import re
import subprocess
import sys


def frames(ko):
    out = subprocess.run(["llvm-objdump", "-d", "--no-show-raw-insn", ko],
                         capture_output=True, text=True, check=True).stdout
    fn, pushes, seen = None, 0, {}
    for line in out.splitlines():
        m = re.match(r"^[0-9a-f]+ <(.*)>:$", line)
        if m:
            fn, pushes = m.group(1), 0
            continue
        if fn is None or fn in seen:
            continue
        if re.search(r"\tpushq\t%r", line):
            pushes += 8
            continue
        m = re.search(r"\tsubq\t\$(\d+), %rsp", line)
        if m:
            seen[fn] = pushes + int(m.group(1))
        elif re.search(r"\t(ret|jmp|call)", line):
            # The prologue is over without a frame of its own.
            seen[fn] = pushes
    return seen


# Functions that run only on kernel threads or at load, never on a user's
# call, where a larger frame is no user's doing: (a fragment of the mangled
# name, why).
EXEMPT = [
    ("9MadIntakeE3run", "the MAD intake work item: its 16-MAD batches"),
    ("13EventConsumer7deliver", "the delivery work item"),
    ("6Module4init", "module load"),
]


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    if not args:
        sys.exit(__doc__)
    limit = int(args[1]) if len(args) > 1 else 2048
    top = 10
    if "--top" in sys.argv:
        top = int(sys.argv[sys.argv.index("--top") + 1])
    seen = frames(args[0])
    worst = sorted(seen.items(), key=lambda kv: -kv[1])
    exempt = {f: why for f in seen for frag, why in EXEMPT if frag in f}
    over = [(f, n) for f, n in worst if n > limit and f not in exempt]
    for f, n in worst:
        if n > limit and f in exempt:
            print(f"exempt {n:6} {f[:100]}: {exempt[f]}")
    for f, n in worst[:top]:
        print(f"{n:6} {f[:160]}")
    print(f"{len(seen)} functions; largest frame {worst[0][1] if worst else 0} bytes; "
          f"{len(over)} over {limit}")
    sys.exit(1 if over else 0)


if __name__ == "__main__":
    main()
