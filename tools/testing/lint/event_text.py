#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fails unless each event is a page of code: the event path's sections.

Usage: event_text.py MODULE.ko

The probe (`probe::on_event`) and each compiled program shape
(`Histogram::run_*`) sit in sections named .text.rhist_event*, which
histogram/shapes.rs aligns to a page; an event runs its probe and one shape.
Each such section must be page-aligned and at most a page long, the
probe must be in the first, and every shape in one of them: a shape
that grows past its page, a new shape left in .text, or a second copy
of one (another caller's closure type), fails here.
"""
import re
import subprocess
import sys

PAGE = 4096
ko = sys.argv[1]
sections = {}
for line in subprocess.run(["readelf", "-SW", ko], check=True,
                           capture_output=True, text=True).stdout.splitlines():
    m = re.match(r"\s*\[\s*(\d+)\]\s+(\S+)\s+PROGBITS\s+\S+\s+\S+\s+([0-9a-f]+)"
                 r"\s+\S+\s+\S*X\S*\s+\d+\s+\d+\s+(\d+)$", line)
    if m:
        sections[int(m.group(1))] = (m.group(2), int(m.group(3), 16), int(m.group(4)))
funcs = {}
for line in subprocess.run(["readelf", "-sW", ko], check=True,
                           capture_output=True, text=True).stdout.splitlines():
    f = line.split()
    if len(f) == 8 and f[3] == "FUNC" and f[6].isdigit():
        funcs[f[7]] = (int(f[6]), int(f[2]))

bad = []
event = {i: s for i, s in sections.items() if s[0].startswith(".text.rhist_event")}
if not event:
    bad.append("no .text.rhist_event section")
for i, (name, size, align) in sorted(event.items()):
    inside = sorted(n for n, (sec, _) in funcs.items() if sec == i)
    short = [re.sub(r".*?(probe\d+on_event|Histogram\d+run_[a-z]+(?:_key\d?)?).*", r"\1", n)
             for n in inside]
    print(f"{name}: {size} bytes, aligned {align}: {' '.join(short)}")
    if align != PAGE:
        bad.append(f"{name} aligned {align}, not {PAGE}")
    if size > PAGE:
        bad.append(f"{name} is {size} bytes, more than a page")
probe = [sec for n, (sec, _) in funcs.items() if n.endswith("5probe8on_event")]
if not probe or sections.get(probe[0], ("",))[0] != ".text.rhist_event":
    bad.append("on_event() is not in .text.rhist_event")
shapes = {n: sec for n, (sec, _) in funcs.items()
          if re.search(r"Histogram\d+run_(number_key\d|short_key\d|string_key|compact_key|comm_key)", n)}
if len(shapes) != 10:
    bad.append(f"{len(shapes)} copies of the program shapes, expected 10 (one each)")
for n, sec in shapes.items():
    if sec not in event:
        bad.append(f"{n} is outside the event sections")
for b in bad:
    print("event-text: " + b)
sys.exit(1 if bad else 0)
