#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fails when a function of a module has a stack frame larger than a limit.

Usage: frames.py MODULE.ko [LIMIT]

The kernel stack is 16 KB, and KASAN makes frames larger: no function
of rhist may take more than LIMIT bytes of it (default 3072, a fifth),
as -Wframe-larger-than does for C, which rustc has no switch for. It
catches a large value built on the stack before it is moved to the
heap (a HistData is 6 KB). A frame's size is read from the function's
prologue (`sub $N,%rsp`) in the disassembly. Prints the largest frames
either way.
"""
import re
import subprocess
import sys

obj = sys.argv[1]
limit = int(sys.argv[2]) if len(sys.argv) > 2 else 3072
out = subprocess.run(["llvm-objdump", "-d", "-C", "--no-show-raw-insn", obj],
                     check=True, capture_output=True, text=True).stdout
func_re = re.compile(r"^[0-9a-f]+ <(.*)>:$")
sub_re = re.compile(r"\ssubq?\s+\$(0x[0-9a-f]+|[0-9]+),\s*%rsp")
frames = {}
func = None
for line in out.splitlines():
    m = func_re.match(line)
    if m:
        func = m.group(1)
        continue
    m = sub_re.search(line)
    if m and func is not None and func not in frames:
        frames[func] = int(m.group(1), 0)
big = sorted(frames.items(), key=lambda kv: -kv[1])
for name, size in big[:5]:
    print(f"{size:6d}  {name[:150]}")
over = [(n, s) for n, s in big if s > limit]
for name, size in over:
    print(f"frame of {size} bytes over the limit of {limit}: {name[:200]}")
print(f"{len(frames)} functions, {len(over)} over {limit} bytes")
# rhist.ko has some 350 functions with a frame: far fewer means the
# regexes no longer match what llvm-objdump prints, and nothing was read.
if len(frames) < 100:
    print("fewer than 100 functions with a frame: the disassembly was not read")
    sys.exit(1)
sys.exit(1 if over else 0)
