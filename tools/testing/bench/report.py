#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Turns the RESULT lines of rhist's benchmark into a table, CSV, JSON
and a PNG chart. Usage: report.py RAW OUT_PREFIX DESCRIPTION [--no-chart]
[--icount RAW] [--boot RAW]... (--boot: the event path in another boot)

Per scenario: none (ns per event with no trigger), floor (with the
rhist_noop trigger: the trigger framework's own cost), C's and rhist's
cost over the floor and their ratio; then, over none, C's, rhist's and the
eBPF peer's (bpf-hash: a tracepoint program updating a
BPF_MAP_TYPE_HASH; bpf-percpu: a BPF_MAP_TYPE_PERCPU_HASH), and rhist's
ratio to each. A bpf program does not go through the trigger framework:
its figures, and rhist's beside them, count the whole cost over none.
The ext_* scenarios (rhist's extensions, no hist mode) get a table of
their own: the value's cost over keys_a against a plain sum's; and
ext_grow_steady and ext_comm a line each beside the plain scenario they
should cost no more than (keys_a, a 16-byte string key keys_s).

The real workloads (guest.sh's syscalls, switch and wakeup), in the
wall clock and in instructions (--icount): per workload and mode, the
median run time and the slowdown over none in percent, the median of
the rounds' mode/none - 1 (a round runs every mode once, one after the
other), with its spread, the largest of those less the smallest. Where
the spread is larger than the slowdown, or there is one round, the
slowdown is marked unresolved."""
import json
import statistics
import subprocess
import sys

raw, prefix, description = sys.argv[1:4]
chart = "--no-chart" not in sys.argv
icount_raw = sys.argv[sys.argv.index("--icount") + 1] if "--icount" in sys.argv else None
boot_raws = [sys.argv[i + 1] for i, a in enumerate(sys.argv) if a == "--boot"]


def path_results(name):
    """The per-event times of each scenario and mode, in RAW's rounds."""
    out = {}
    for line in open(name, errors="replace"):
        f = line.split()
        if len(f) > 6 and f[0] == "RESULT" and f[1] == "path":
            scen, mode, ns, n = f[2], f[3], int(f[5]), int(f[6])
            out.setdefault(scen, {}).setdefault(mode, []).append(ns / n)
    return out


def added(modes):
    """Medians over the floor: (C's, rhist's, ratio)."""
    med = {m: statistics.median(v) for m, v in modes.items()}
    floor = med.get("noop", 0.0)
    c_add, r_add = med["hist"] - floor, med["rhist"] - floor
    return c_add, r_add, (r_add / c_add if c_add > 0 else float("nan"))


BPF_MODES = ("bpf-hash", "bpf-percpu")


def over_none(med):
    """rhist's and the bpf modes' medians over none, and rhist's ratio to
    each bpf mode (None where the scenario has no bpf program)."""
    out = {"r_none": med["rhist"] - med["none"], "c_none": med["hist"] - med["none"]}
    for m in BPF_MODES:
        k = m.replace("-", "_")
        if m in med:
            out[k] = med[m] - med["none"]
            out["ratio_" + k] = out["r_none"] / out[k] if out[k] > 0 else float("nan")
        else:
            out[k] = out["ratio_" + k] = None
    return out


def extensions(results, unit):
    """rhist's extensions (ext_* scenarios, which hist rejects): what each
    adds over keys_a, against what a plain sum adds (triggers_1 over
    keys_a), from rhist's medians over the floor. Returns the rows."""
    def r_add(scen):
        med = {m: statistics.median(v) for m, v in results[scen].items()}
        return med["rhist"] - med.get("noop", 0.0)
    exts = [s for s in results if s.startswith("ext_")]
    if not exts or not {"keys_a", "triggers_1"} <= results.keys():
        return []
    base, sum_cost = r_add("keys_a"), r_add("triggers_1") - r_add("keys_a")
    print(f"# rhist's extensions, {unit}: each value's cost over keys_a "
          f"({base:.1f}) against a plain sum's (triggers_1: {sum_cost:.1f})")
    print(f"{'scenario':<18} {'rhist added':>12} {'value cost':>11} {'/ sum':>7}")
    out = []
    for scen in exts:
        cost = r_add(scen) - base
        ratio = cost / sum_cost if sum_cost > 0 else float("nan")
        print(f"{scen:<18} {r_add(scen):12.1f} {cost:11.1f} {ratio:7.2f}")
        out.append({"scenario": scen, "unit": unit, "rhist_added": r_add(scen),
                    "value_cost": cost, "sum_cost": sum_cost, "ratio_to_sum": ratio})
    # The extensions that have a plain scenario to cost as much as, each
    # beside it: rhist's added costs over the floor, and their ratio.
    pairs = [(scen, ref, what) for scen, (ref, what) in EXT_REFERENCES.items()
             if scen in results and ref in results]
    for scen, ref, what in pairs:
        ratio = r_add(scen) / r_add(ref) if r_add(ref) > 0 else float("nan")
        print(f"{scen}: {r_add(scen):.1f} over the floor against {ref}'s {r_add(ref):.1f} "
              f"({what}): {ratio:.3f}")
        for row in out:
            if row["scenario"] == scen:
                row.update({"reference": ref, "reference_added": r_add(ref),
                            "ratio_to_reference": ratio})
    print()
    return out


# The extensions that should cost what a plain scenario costs: the
# scenario to set each beside, and what it is.
EXT_REFERENCES = {
    "ext_grow_steady": ("keys_a", "the same key, a plain map; at most 1.10"),
    "ext_comm": ("keys_s", "a 16-byte string key of the record; at most 1.00"),
}


def fmt(x, width, prec=1):
    """x in WIDTH columns, or '-' for None."""
    return f"{'-':>{width}}" if x is None else f"{x:{width}.{prec}f}"


REAL_WORKLOADS = {
    "syscalls": "dd bs=1: keys=common_pid,id on raw_syscalls:sys_enter, "
                "keys=ret.log2 on syscalls:sys_exit_read",
    "switch": "pingpong over pipes, one task per CPU: keys=next_pid on sched:sched_switch",
    "wakeup": "pingpong: the wakeup-latency pipeline, keys=lat.log2 (eBPF: runqlat)",
}


def real_results(name):
    """The real workloads' run times: {workload: {mode: {round: ns}}}."""
    out = {}
    for line in open(name, errors="replace"):
        f = line.split()
        if len(f) > 5 and f[0] == "RESULT" and f[1] == "real":
            out.setdefault(f[2], {}).setdefault(f[3], {})[int(f[4])] = int(f[5])
    return out


def real_table(results, unit, scale):
    """Per workload and mode: the median run time over the rounds, the
    slowdown over none (the median of the rounds' mode/none - 1, each
    round's modes run one after the other), and its spread (max - min of
    the rounds' slowdowns). A slowdown whose spread is larger than itself
    is unresolved. Returns the rows."""
    rows = []
    if not results:
        return rows
    n_rounds = max(len(r) for w in results.values() for r in w.values())
    print(f"# real workloads, {unit} per run, medians of {n_rounds} rounds; slowdown over "
          "none: the median of the rounds' mode/none - 1; spread: max - min of those")
    for work in results:
        print(f"#   {work}: {REAL_WORKLOADS.get(work, '?')}")
    print(f"{'workload':<10} {'mode':<11} {unit.split()[0]:>9} {'slowdown':>9} {'spread':>8}")
    for work, modes in results.items():
        none = modes.get("none", {})
        for mode, runs in modes.items():
            med = statistics.median(runs.values()) / scale
            row = {"workload": work, "mode": mode, "unit": unit, "median": med,
                   "rounds": len(runs), "slowdown_pct": None, "spread_pct": None,
                   "resolved": None}
            line = f"{work:<10} {mode:<11} {med:9.1f}"
            slow = [100 * (t / none[r] - 1) for r, t in runs.items() if none.get(r)]
            if mode != "none" and slow:
                row["slowdown_pct"] = statistics.median(slow)
                row["spread_pct"] = max(slow) - min(slow)
                row["resolved"] = len(slow) > 1 and row["spread_pct"] < abs(row["slowdown_pct"])
                line += f" {row['slowdown_pct']:8.1f}% {row['spread_pct']:7.1f}%"
                if len(slow) < 2:
                    line += "  unresolved: one round, no spread"
                elif not row["resolved"]:
                    line += "  unresolved: spread larger than the effect"
            print(line)
            rows.append(row)
    print()
    return rows


# Instruction counts (one per guest nanosecond under -icount shift=0).
icount = path_results(icount_raw) if icount_raw else {}

path, memory, read = path_results(raw), {}, {}
for line in open(raw, errors="replace"):
    f = line.split()
    if not f or f[0] != "RESULT":
        continue
    if f[1] == "path":
        pass
    elif f[1] == "memory":
        memory.setdefault(int(f[2]), {}).setdefault(f[3], []).append(
            (int(f[4]), int(f[5]), int(f[6])))
    elif f[1] == "read":
        read.setdefault(f[3], []).append(int(f[5]))
        read["entries"] = int(f[2])

rows = []
if icount:
    n_rounds = max(len(m.get("rhist", [])) for m in icount.values())
    print(f"# instructions per event (guest -icount), medians of {n_rounds} rounds; "
          "spread: (max-min)/median over the rounds")
    print(f"{'':<18} {'':>8} {'over the floor':^30}   {'over none':^50}")
    print(f"{'scenario':<18} {'floor':>8} {'C added':>9} {'rhist added':>12} {'ratio':>7}   "
          f"{'C':>7} {'rhist':>7} {'bpf-hash':>8} {'bpf-percpu':>10} {'r/bh':>6} {'r/bp':>6}   spread")
    for scen, modes in icount.items():
        if "hist" not in modes:
            continue
        c_add, r_add, ratio = added(modes)
        floor = statistics.median(modes.get("noop", [0.0]))
        o = over_none({m: statistics.median(v) for m, v in modes.items()})
        spread = " ".join(
            f"{m} {100 * (max(v) - min(v)) / statistics.median(v):.2f}%"
            for m, v in modes.items() if m != "none")
        print(f"{scen:<18} {floor:8.1f} {c_add:9.1f} {r_add:12.1f} {ratio:7.2f}   "
              f"{o['c_none']:7.1f} {o['r_none']:7.1f} {fmt(o['bpf_hash'], 8)} {fmt(o['bpf_percpu'], 10)} "
              f"{fmt(o['ratio_bpf_hash'], 6, 2)} {fmt(o['ratio_bpf_percpu'], 6, 2)}   {spread}")
    print()
ext_rows = extensions(icount, "instructions per event") if icount else []
# The wall clock, in each boot: medians over its rounds, then the median
# over the boots of each figure (the ratio: of the boots' ratios).
boots = [path] + [path_results(b) for b in boot_raws]
print(f"# {description}")
print(f"{'':<18} {'':>17} {'over the floor':^30}   {'over none':^50}")
print(f"{'scenario':<18} {'none':>8} {'floor':>8} {'C added':>9} {'rhist added':>12} "
      f"{'ratio':>7}   {'C':>7} {'rhist':>7} {'bpf-hash':>8} {'bpf-percpu':>10} {'r/bh':>6} {'r/bp':>6}   "
      f"(ns/event, medians of rounds, then of {len(boots)} boots; each boot's ratio r/C)")
for scen in path:
    if "hist" not in path[scen]:
        continue
    per_boot = []
    for b in boots:
        modes = b.get(scen)
        if not modes:
            continue
        med = {m: statistics.median(v) for m, v in modes.items()}
        floor = med.get("noop", 0.0)
        c_add, r_add = med["hist"] - floor, med["rhist"] - floor
        per_boot.append({"none": med.get("none", 0.0), "floor": floor, "c": c_add, "r": r_add,
                         "ratio": r_add / c_add if c_add > 0 else float("nan"),
                         "rounds": len(modes["hist"]), **over_none(med)})
    fig = {k: statistics.median(p[k] for p in per_boot) for k in ("none", "floor", "c", "r", "ratio")}
    # The bpf figures: over the boots that ran the bpf modes.
    for k in ("c_none", "r_none", "bpf_hash", "bpf_percpu", "ratio_bpf_hash", "ratio_bpf_percpu"):
        v = [p[k] for p in per_boot if p[k] is not None]
        fig[k] = statistics.median(v) if v else None
    ratios = " ".join(f"{p['ratio']:.2f}" for p in per_boot)
    print(f"{scen:<18} {fig['none']:8.1f} {fig['floor']:8.1f} {fig['c']:9.1f} {fig['r']:12.1f} "
          f"{fig['ratio']:7.2f}   {fig['c_none']:7.1f} {fig['r_none']:7.1f} {fmt(fig['bpf_hash'], 8)} "
          f"{fmt(fig['bpf_percpu'], 10)} {fmt(fig['ratio_bpf_hash'], 6, 2)} "
          f"{fmt(fig['ratio_bpf_percpu'], 6, 2)}   {ratios}")
    row = {"scenario": scen, "none_ns": fig["none"], "floor_ns": fig["floor"],
           "c_added_ns": fig["c"], "rhist_added_ns": fig["r"], "ratio": fig["ratio"],
           "ratio_boots": [p["ratio"] for p in per_boot],
           "rounds": sum(p["rounds"] for p in per_boot), "ratio_icount": None,
           "c_over_none_ns": fig["c_none"], "rhist_over_none_ns": fig["r_none"], "bpf_hash_over_none_ns": fig["bpf_hash"],
           "bpf_percpu_over_none_ns": fig["bpf_percpu"],
           "ratio_bpf_hash": fig["ratio_bpf_hash"], "ratio_bpf_percpu": fig["ratio_bpf_percpu"],
           "ratio_bpf_hash_icount": None, "ratio_bpf_percpu_icount": None}
    if scen in icount:
        ic_c, ic_r, row["ratio_icount"] = added(icount[scen])
        o = over_none({m: statistics.median(v) for m, v in icount[scen].items()})
        row.update({"c_added_insns": ic_c, "rhist_added_insns": ic_r,
                    "c_over_none_insns": o["c_none"], "rhist_over_none_insns": o["r_none"],
                    "bpf_hash_over_none_insns": o["bpf_hash"],
                    "bpf_percpu_over_none_insns": o["bpf_percpu"],
                    "ratio_bpf_hash_icount": o["ratio_bpf_hash"],
                    "ratio_bpf_percpu_icount": o["ratio_bpf_percpu"]})
    rows.append(row)

print()
ext_rows += extensions(path, "ns per event (this boot)")
real_rows = []
for name, unit, scale in ((raw, "ms (wall clock)", 1e6),
                          (icount_raw, "million instructions (-icount)", 1e6)):
    if name:
        real_rows += real_table(real_results(name), unit, scale)

mem_rows = []
if memory:
    print(f"\n{'size':>7} {'C kB':>8} {'rhist kB':>9} {'ratio':>6} {'C create ms':>12} "
          f"{'rhist create ms':>16} {'C destroy ms':>13} {'rhist destroy ms':>17}")
    for size, impls in sorted(memory.items()):
        # Memory: the largest reading (a reading can only undercount, when
        # the slab caches reuse what an earlier run freed); times: medians.
        m = {i: [max(x[0] for x in v)] + [statistics.median(x[k] for x in v) for k in (1, 2)]
             for i, v in impls.items()}
        ratio = m["rhist"][0] / m["hist"][0] if m["hist"][0] > 0 else float("nan")
        print(f"{size:7} {m['hist'][0]:8.0f} {m['rhist'][0]:9.0f} {ratio:6.2f} "
              f"{m['hist'][1] / 1e6:12.2f} {m['rhist'][1] / 1e6:16.2f} "
              f"{m['hist'][2] / 1e6:13.2f} {m['rhist'][2] / 1e6:17.2f}")
        mem_rows.append({"size": size, "c_kb": m["hist"][0], "rhist_kb": m["rhist"][0],
                         "ratio": ratio, "c_create_ns": m["hist"][1],
                         "rhist_create_ns": m["rhist"][1], "c_destroy_ns": m["hist"][2],
                         "rhist_destroy_ns": m["rhist"][2]})

read_row = None
if "hist" in read:
    c, r = statistics.median(read["hist"]), statistics.median(read["rhist"])
    read_row = {"entries": read["entries"], "c_ms": c / 1e6, "rhist_ms": r / 1e6, "ratio": r / c}
    print(f"\nread {read['entries']} entries: C {c / 1e6:.1f} ms, rhist {r / 1e6:.1f} ms, "
          f"ratio {r / c:.2f}")

with open(prefix + ".json", "w") as out:
    json.dump({"description": description, "event_path": rows, "memory": mem_rows,
               "read": read_row, "real_workload": real_rows,
               "extensions": ext_rows}, out, indent=2)
with open(prefix + ".csv", "w") as out:
    # The bpf columns come last, so that the older columns keep their places.
    bpf_cols = ("c_over_none_ns", "rhist_over_none_ns", "bpf_hash_over_none_ns", "bpf_percpu_over_none_ns",
                "ratio_bpf_hash", "ratio_bpf_percpu", "ratio_bpf_hash_icount",
                "ratio_bpf_percpu_icount")
    out.write("scenario,none_ns,floor_ns,c_added_ns,rhist_added_ns,ratio,ratio_icount,"
              + ",".join(bpf_cols) + "\n")
    empty = "," * len(bpf_cols)
    for row in rows:
        ic = "" if row["ratio_icount"] is None else f"{row['ratio_icount']:.3f}"
        bpf = "".join("," + ("" if row[k] is None else
                             f"{row[k]:.3f}" if k.startswith("ratio") else f"{row[k]:.2f}")
                      for k in bpf_cols)
        out.write(f"{row['scenario']},{row['none_ns']:.2f},{row['floor_ns']:.2f},"
                  f"{row['c_added_ns']:.2f},{row['rhist_added_ns']:.2f},{row['ratio']:.3f},{ic}"
                  f"{bpf}\n")
    for row in mem_rows:
        out.write(f"memory_{row['size']},,,{row['c_kb']},{row['rhist_kb']},{row['ratio']:.3f},"
                  f"{empty}\n")
    if read_row:
        out.write(f"read_{read_row['entries']},,,{read_row['c_ms']:.2f},"
                  f"{read_row['rhist_ms']:.2f},{read_row['ratio']:.3f},{empty}\n")

if chart:
    data = prefix + ".dat"

    def r(x):
        return "NaN" if x is None else f"{x:.3f}"
    with open(data, "w") as out:
        for row in rows:
            out.write(f"{row['scenario']} {row['ratio']:.3f} {r(row['ratio_bpf_hash'])} "
                      f"{r(row['ratio_bpf_percpu'])}\n")
        for row in mem_rows:
            out.write(f"mem_{row['size']} {row['ratio']:.3f} NaN NaN\n")
        if read_row:
            out.write(f"read {read_row['ratio']:.3f} NaN NaN\n")
    script = f"""
set terminal pngcairo size 1200,500 noenhanced
set output '{prefix}.png'
set title 'rhist / C hist over the floor, rhist / eBPF over none (below 1 is better) -- {description}' font ',9'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.6
set boxwidth 0.9
set yrange [0:*]
set xtics rotate by -35
set grid ytics
set key tmargin center horizontal reverse Left
plot '{data}' using 2:xtic(1) title 'rhist / C hist', \\
     '' using 3 title 'rhist / bpf-hash', '' using 4 title 'rhist / bpf-percpu', \\
     1 with lines dt 2 lc rgb 'black' notitle
"""
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
    print(f"\nchart: {prefix}.png")
print(f"results: {prefix}.csv, {prefix}.json")
