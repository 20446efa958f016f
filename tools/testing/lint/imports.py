#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Fails when the modules of the shell or of the core import in a circle.

Usage: imports.py [TOP]

A newcomer reads a file knowing what it stands on only if the files form
layers: each file's imports (`use` trees and inline `crate::`/`super::`
paths, tests left out) name files of the same tree, and no chain of them
leads back to where it started. Two trees are checked apart: the
module's shell (rust/*.rs, with rust/command/ and the like) and the
portable core (rust/core/src/, whose root is rhist_core.rs). The unit is a
top-level module with its children (rust/command.rs with
rust/command/*.rs): inside it, parent and children share private items
as rust/kernel's sync/lock.rs and lock/mutex.rs do; between units, and
to and from the crate root, nothing goes round. Prints each circle as a chain of files, and the count of
files and edges either way.
"""
import os
import re
import sys

top = sys.argv[1] if len(sys.argv) > 1 else "."


def strip_tests(text):
    """The text without comments, strings and `#[cfg(test)]` items."""
    text = re.sub(r"//[^\n]*", "", text)
    text = re.sub(r'"(?:\\.|[^"\\])*"', '""', text)
    out, i = [], 0
    for m in re.finditer(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+\w+\s*([;{])", text):
        if m.start() < i:
            continue
        out.append(text[i:m.start()])
        if m.group(1) == ";":
            i = m.end()
            continue
        depth, j = 1, m.end()
        while depth and j < len(text):
            depth += {"{": 1, "}": -1}.get(text[j], 0)
            j += 1
        i = j
    out.append(text[i:])
    return "".join(out)


def test_children(text):
    return set(re.findall(r"#\[cfg\(test\)\]\s*(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;", text))


def use_paths(tree, prefix=""):
    """Flattens a use tree ("a::{b, c::d}") into its paths."""
    tree = tree.strip()
    depth = 0
    for k, ch in enumerate(tree):
        if ch == "{" and depth == 0:
            head = tree[:k].rstrip(":").strip()
            inner = tree[k + 1:tree.rindex("}")]
            base = prefix + ("::" if prefix and head else "") + head
            parts, d, s = [], 0, 0
            for j, c in enumerate(inner):
                d += {"{": 1, "}": -1}.get(c, 0)
                if c == "," and d == 0:
                    parts.append(inner[s:j])
                    s = j + 1
            parts.append(inner[s:])
            paths = []
            for p in parts:
                if p.strip():
                    paths += use_paths(p, base)
            return paths
    tree = re.sub(r"\s+as\s+\w+$", "", tree)
    return [prefix + ("::" if prefix and tree else "") + tree]


def collect(root_dir, root_file, crate_prefix):
    """Module name (a tuple of path parts) -> file, for one tree."""
    mods = {}

    def walk(path, name):
        mods[name] = path
        text = open(path).read()
        tests = test_children(text)
        base = os.path.dirname(path) if name == () or os.path.basename(path) == "mod.rs" \
            else os.path.splitext(path)[0]
        if name == ():
            base = root_dir
        for m in re.finditer(r"^\s*(?:#\[path = \"([^\"]+)\"\]\s*)?(?:pub(?:\([a-z]+\))?\s+)?mod\s+(\w+)\s*;",
                             text, re.M):
            child = m.group(2)
            if child in tests:
                continue
            if m.group(1):
                if m.group(1).startswith("core/"):
                    continue  # the core: a tree of its own
                cand = os.path.join(os.path.dirname(path), m.group(1))
            else:
                cand = os.path.join(base, child + ".rs")
                if not os.path.exists(cand):
                    cand = os.path.join(base, child, "mod.rs")
            if os.path.exists(cand):
                walk(cand, name + (child,))

    walk(root_file, ())
    return mods


def edges(mods, crate_prefix):
    out = {}
    for name, path in mods.items():
        text = strip_tests(open(path).read())
        paths = []
        for m in re.finditer(r"\buse\s+([^;]+);", text):
            paths += use_paths(m.group(1))
        paths += re.findall(r"(?<![\w:])\w+(?:::\w+)+", text)
        deps = set()
        for p in paths:
            parts = [x.strip() for x in p.split("::") if x.strip()]
            if not parts:
                continue
            if parts[0] == "crate":
                cur, rest = (), parts[1:]
                if crate_prefix and rest[:1] == [crate_prefix]:
                    continue  # into the core: a tree of its own
            elif parts[0] in ("super", "self"):
                cur, rest = name, parts
                while rest and rest[0] in ("super", "self"):
                    if rest[0] == "super":
                        cur = cur[:-1]
                    rest = rest[1:]
            elif name + (parts[0],) in mods:
                cur, rest = name, parts  # a child, named from its parent
            else:
                continue
            # The longest module the path names.
            target = cur
            for part in rest:
                if target + (part,) in mods:
                    target = target + (part,)
                else:
                    break
            if target != name:
                deps.add(target)
        out[name] = deps
    return out


def cycles(graph):
    """The strongly connected components of more than one node (Tarjan)."""
    index, low, stack, on, comps, n = {}, {}, [], set(), [], [0]

    def visit(v):
        index[v] = low[v] = n[0]
        n[0] += 1
        stack.append(v)
        on.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                visit(w)
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
                comps.append(comp)

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return comps


def chain(graph, comp):
    """One circle through a component, as a list of its nodes."""
    start = sorted(comp)[0]
    members = set(comp)
    path, seen = [start], {start}
    while True:
        nxt = sorted(w for w in graph[path[-1]] if w in members)
        back = [w for w in nxt if w == start]
        if back and len(path) > 1:
            return path + [start]
        fresh = [w for w in nxt if w not in seen]
        if not fresh:
            return path + [start]
        path.append(fresh[0])
        seen.add(fresh[0])


failed = False
trees = [
    ("shell", os.path.join(top, "rust"), os.path.join(top, "rust/rhist_main.rs"), "hist"),
    ("core", os.path.join(top, "rust/core/src"), os.path.join(top, "rust/core/src/rhist_core.rs"), None),
]
for label, root_dir, root_file, prefix in trees:
    mods = collect(root_dir, root_file, prefix)
    graph = edges(mods, prefix)
    # One node a unit: a module of the root and its children.
    unit = {m: m[:1] for m in mods}
    units = {}
    for m, deps in graph.items():
        units.setdefault(unit[m], set()).update(unit[d] for d in deps if unit[d] != unit[m])
    graph = units
    n_edges = sum(len(v) for v in graph.values())
    comps = cycles(graph)
    for comp in comps:
        names = [os.path.relpath(mods[m], top) for m in chain(graph, comp)]
        print(f"{label}: import circle: {' -> '.join(names)}")
        members = set(comp)
        for m in sorted(comp):
            inside = sorted(os.path.relpath(mods[d], top) for d in graph[m] if d in members)
            print(f"    {os.path.relpath(mods[m], top)} uses {', '.join(inside)}")
        failed = True
    print(f"{label}: {len(graph)} units, {n_edges} imports between them, {len(comps)} circles")
sys.exit(1 if failed else 0)
