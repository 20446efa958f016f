#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fails when a crate the exporter links is not GPL-2.0 compatible.

Usage: licences.py [MANIFEST]   (default tools/rhist-exporter/Cargo.toml)
       licences.py --self-test      (the rules on expressions of known verdict)

rhist-exporter is GPL-2.0 and statically linked: every crate of its
normal dependency graph (`cargo metadata --locked`, build and dev
dependencies and procedural macros, which are not linked, left out)
must be offered under a licence GPL-2.0 can take: its SPDX expression
must have a choice made only of MIT, BSD-2-Clause, BSD-3-Clause, ISC,
Zlib, Unlicense, Unicode or GPL-2.0 terms. Apache-2.0 alone is not (its patent
terms are incompatible with GPL-2.0), nor is a crate with no licence.
Prints each crate and its licence, and the ones that fail.
"""
import json
import re
import subprocess
import sys

COMPATIBLE = {"MIT", "BSD-2-Clause", "BSD-3-Clause", "ISC", "Zlib", "Unlicense",
              "Unicode-3.0", "Unicode-DFS-2016",
              "GPL-2.0", "GPL-2.0-only", "GPL-2.0-or-later"}


def choices(expr):
    """The SPDX expression EXPR as the sets of terms one may choose
    between (AND binds tighter than OR; "/" is an old OR)."""
    tokens = re.findall(r"\(|\)|[^\s()/]+|/", expr)
    pos = 0

    def peek():
        return tokens[pos] if pos < len(tokens) else None

    def either():
        nonlocal pos
        out = both()
        while peek() in ("OR", "/"):
            pos += 1
            out = out + both()
        return out

    def both():
        nonlocal pos
        out = term()
        while peek() == "AND":
            pos += 1
            out = [a | b for a in out for b in term()]
        return out

    def term():
        nonlocal pos
        t = peek()
        pos += 1
        if t == "(":
            out = either()
            pos += 1
            return out
        if t and peek() == "WITH":
            t = "%s WITH %s" % (t, tokens[pos + 1] if pos + 1 < len(tokens) else "")
            pos += 2
        return [{t}] if t else [set()]

    return either() if tokens else []


def compatible(expr):
    """Whether the SPDX expression EXPR has a GPL-2.0 compatible choice."""
    return any(c and c <= COMPATIBLE for c in choices(expr))


# Expressions and whether GPL-2.0 can take them, for --self-test.
CASES = [("MIT", True), ("Apache-2.0", False), ("Apache-2.0 OR MIT", True),
         ("MIT/Apache-2.0", True), ("(MIT OR Apache-2.0) AND Unicode-3.0", True),
         ("(MIT OR Apache-2.0) AND CDDL-1.0", False), ("Apache-2.0 AND MIT", False),
         ("Unlicense OR MIT", True), ("", False), ("CDDL-1.0", False),
         ("MIT AND BSD-3-Clause", True), ("Apache-2.0 WITH LLVM-exception OR MIT", True),
         ("Apache-2.0 WITH LLVM-exception", False)]


def main():
    if sys.argv[1:] == ["--self-test"]:
        wrong = [(e, w) for e, w in CASES if compatible(e) != w]
        for e, w in wrong:
            print("wrong verdict on %r: expected %s" % (e, w))
        print("%d cases, %d wrong" % (len(CASES), len(wrong)))
        return 1 if wrong else 0
    manifest = sys.argv[1] if len(sys.argv) > 1 else "tools/rhist-exporter/Cargo.toml"
    meta = json.loads(subprocess.run(
        ["cargo", "metadata", "--locked", "--format-version", "1",
         "--manifest-path", manifest],
        check=True, capture_output=True, text=True).stdout)
    packages = {p["id"]: p for p in meta["packages"]}
    nodes = {n["id"]: n for n in meta["resolve"]["nodes"]}
    root = meta["resolve"]["root"]
    linked, todo = set(), [root]
    while todo:
        node = nodes[todo.pop()]
        for dep in node["deps"]:
            kinds = {k["kind"] for k in dep["dep_kinds"]}
            pkg = packages[dep["pkg"]]
            # A procedural macro runs in the compiler, and is not linked.
            macro = any("proc-macro" in t["kind"] for t in pkg["targets"])
            if None in kinds and not macro and dep["pkg"] not in linked:
                linked.add(dep["pkg"])
                todo.append(dep["pkg"])
    bad = 0
    for pid in sorted(linked, key=lambda i: packages[i]["name"]):
        p = packages[pid]
        lic = p.get("license") or ""
        ok = compatible(lic)
        bad += not ok
        print("%-4s %s %s: %s" % ("ok" if ok else "BAD", p["name"], p["version"],
                                  lic or "(no licence)"))
    print("%d crates linked, %d not GPL-2.0 compatible" % (len(linked), bad))
    return 1 if bad or not linked else 0


if __name__ == "__main__":
    sys.exit(main())
