#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the C-vs-Rust tracing_map benchmark (benches/cmap.rs) and prints a
# table of ns per update.  About a minute on 2 cores, after a first build.
#
#   ./run.sh [criterion filter]
#
# WARMUP and MEASURE (seconds) override criterion's times per benchmark.
# RHIST_KERNEL_TREE / RHIST_KCACHE choose where tracing_map.c comes from
# (see build.rs).
set -euo pipefail
cd "$(dirname "$0")"
. ../../vm/lib.sh

: "${WARMUP:=0.5}" "${MEASURE:=2}"

# Only this run's results go in the table.
rm -rf target/criterion/cmap_*
cargo bench --bench cmap -- --warm-up-time "$WARMUP" \
	--measurement-time "$MEASURE" "$@"

python3 - <<'PY'
import glob, json, os

res = {}
for bj in glob.glob("target/criterion/cmap_*/new/benchmark.json"):
    full = json.load(open(bj))["full_id"]
    est = json.load(open(os.path.join(os.path.dirname(bj), "estimates.json")))
    # The slope (what criterion prints) when it sampled linearly.
    ns = (est.get("slope") or est["mean"])["point_estimate"]
    _, side, workload = full.split("/", 2)
    res.setdefault(workload, {})[side] = ns

def key(w):
    p = w.split("/")
    return (len(p), p[0], p[1:])

print()
print("ns per update, per thread (wall time / updates per thread);")
print("Rust keeps its sums per CPU, Rust-shared one copy of them, as C does")
print(f"{'workload':<28} {'C':>9} {'Rust':>9} {'shared':>9} {'rust/C':>7} {'shared/C':>8}")
for w in sorted(res, key=key):
    c, r, s = (res[w].get(k) for k in ("c", "rust", "rust-shared"))
    fmt = lambda v: f"{v:9.2f}" if v is not None else f"{'-':>9}"
    ratio = lambda v, n: f"{v / c:{n}.2f}" if c and v else f"{'-':>{n}}"
    print(f"{w:<28} {fmt(c)} {fmt(r)} {fmt(s)} {ratio(r, 7)} {ratio(s, 8)}")
PY
