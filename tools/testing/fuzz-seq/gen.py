#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Random sequences of tracefs writes for `make fuzz-seq` (seq.sh runs them).

Each sequence is a block of steps, one a line, ended by "end"; "@" in a
step stands for the trigger command (hist or rhist), which the guest fills
in. The same seed gives the same sequences. Steps:

  mk I | rm I                 mkdir / rmdir instances/I
  tw I E TEXT                 append TEXT to instance I's event E's trigger
  tt I E                      truncate that trigger file
  se TEXT | st                append to / truncate synthetic_events
  de TEXT | dt                append to / truncate dynamic_events
  en I E 0|1                  disable / enable the event
  fx ARGS                     fire rhist_test events (rhist_test/fire)
  ck I E                      checkpoint: the event's hist file, debug file
                              and trigger file (rhist's run checks its
                              totals too: seq.sh)
  el                          checkpoint: error_log
  cpu 0|1                     take cpu1 offline / online
  pl I E                      open the event's hist file in a reader that
                              polls it and reads it at each wakeup, until
                              killed (at most two at a time)
  pk                          kill the oldest reader (the rest go at the
                              end of the run)
  mod                         rmmod and insmod rhist (rhist's run only;
                              nothing is compared after it)
  cj I E                      --ext: read the event's rhist_json and check
                              that it is JSON (rhist's run only)
  ko 0|1                      --ext: /proc/sys/debug/kprobes-optimization
                              (0: kprobes stay int3s, their handlers run
                              in NMI; the reset sets it back to 1)
  po I E json|text N          --ext: open the event's rhist_json or rhist
                              file (hist's run: its hist file) and read N
                              bytes of it in one read(); the file stays
                              open (at most two)
  pr                          --ext: read the rest of the oldest one and
                              close it (rhist's run: the pieces make one
                              JSON document, or a text whose totals hold,
                              or the read fails EAGAIN)

I is "-" for the top instance, else i0 or i1. E is sample, other, y0..y2
(synthetic events), k0 (a kprobe: on vfs_read, or with --ext also on
sched_cpu_dying, which "cpu 0" fires on the dying CPU) or e0 (an eprobe
on rhist_sample).

What is not generated, because hist itself crashes or hangs on it (each
is a regression test of tools/testing/tests/combinations.sh or listed in
Documentation/trace/rhist.rst): a named histogram shared between
instances (hist deadlocks on trace_types_lock when the last trigger goes
with an instance), a number passed to a string field of a synthetic
event (hist reads it as an address), and, with --ext, a CPU taken
offline once a sequence has had both the kprobe on sched_cpu_dying and
a snapshot() action: a snapshot taken on the dying CPU queues irq_work
that never runs there, and hist's removal of the instance then spins
for ever in irq_work_sync() (rhist runs that work at once:
tools/testing/tests/offline_snapshot.sh).

rhist's extensions, which hist rejects, come with --ext (make fuzz-seq
EXT=1): a trigger text may carry pieces in braces (":grow", a statistic
or percentiles of a value, more keys and values, common_comm), which
hist's run leaves out and rhist's run writes without the braces. From
the first such step on, a run is not compared (the files differ by
design), but it is still checked for crashes, warnings, kernel reports
and leaks. --ext adds the steps ko, po and pr (5% of the steps) and
the kprobe on sched_cpu_dying. Without --ext, a seed gives the
sequences it always gave (none of this draws a number then).
"""

import argparse
import random

INSTANCES = ["-", "i0", "i1"]
SYNTH = ["y0", "y1", "y2"]
# Fields of each event: name -> kind ("n" number, "s" string).
FIELDS = {
    # No common_pid: fire's loops on every CPU run in kthreads, whose
    # pids differ from run to run.
    "sample": {"a": "n", "b": "n", "c": "n", "s": "s", "d": "s"},
    "other": {"a": "n", "b": "n"},
    "e0": {"x": "n", "y": "n"},
    "k0": {"common_pid": "n"},
}
SYSTEM = {"sample": "rhist_test.rhist_sample", "other": "rhist_test.rhist_other",
          "e0": "ep.e0", "k0": "kp.k0"}
SYNTH_DEFS = {
    "y0": ("u64 v; u64 w", {"v": "n", "w": "n"}),
    "y1": ("u64 v", {"v": "n"}),
    "y2": ("char name[16]; u64 v", {"name": "s", "v": "n"}),
}
NUM_VARS = ["v0", "v1", "v2"]
STR_VARS = ["t0"]


class Gen:
    def __init__(self, rng, ext=False):
        self.r = rng
        self.ext = ext
        self.reset()

    def reset(self):
        self.texts = []  # (instance, event, text) written so far
        # What probably exists (a step may have failed): most steps pick
        # from it, so that they do more than fail.
        self.instances = {"-"}
        self.events = {"sample", "other"}
        # For "cpu 0": whether the kprobe on sched_cpu_dying and a
        # snapshot() action may exist (a removal may have failed).
        self.dying_probe = False
        self.snapshot_written = False

    def pick(self, xs):
        return self.r.choice(xs)

    def fields(self, event):
        if event in SYNTH:
            return SYNTH_DEFS[event][1]
        return FIELDS[event]

    def system(self, event):
        return "synthetic." + event if event in SYNTH else SYSTEM[event]

    def key(self, event):
        f = self.fields(event)
        name = self.pick(sorted(f))
        if f[name] == "n" and self.r.random() < 0.3:
            name += self.pick([".hex", ".log2", ".buckets=10"])
        return name

    def trigger(self, inst, event):
        r = self.r
        # --ext: now and then a plain trigger (no name, variable or
        # action), the only kind :grow takes.
        plain = self.ext and r.random() < 0.15
        f = self.fields(event)
        nums = [k for k, v in f.items() if v == "n"]
        strs = [k for k, v in f.items() if v == "s"]
        keys = [self.key(event)]
        if r.random() < 0.3:
            keys.append(self.key(event))
        parts = ["keys=" + ",".join(dict.fromkeys(keys))]
        if r.random() < 0.75:
            # hist's maps of 2048 entries cost it 60 ms each to make
            # under kmemleak: most take the smallest sizes.
            parts.append("size=%d" % self.pick([128, 256]))
        if r.random() < 0.3 and nums:
            parts.append("vals=" + self.pick(nums))
        if not plain and r.random() < 0.2:
            # Names are per instance: hist deadlocks when one is shared
            # across instances (see the module doc).
            parts.insert(0, "name=n%s%d" % (inst.strip("-"), r.randrange(2)))
        var = None
        if not plain and r.random() < 0.6:
            var = self.pick(NUM_VARS)
            src = self.pick(["common_timestamp"] + nums)
            if r.random() < 0.3:
                src = "common_timestamp-$" + self.pick(NUM_VARS)
            parts.append("%s=%s" % (var, src))
        if not plain and strs and r.random() < 0.2:
            parts.append("%s=%s" % (self.pick(STR_VARS), self.pick(strs)))
        if not plain and r.random() < 0.15 and nums:
            parts.append("%s=$%s" % (self.pick(NUM_VARS), self.pick(NUM_VARS)))
        if not plain and r.random() < 0.5:
            parts.append(self.handler(event, var))
        if r.random() < 0.1:
            parts.append(self.pick(["pause", "clear", "cont"]))
        if plain or (self.ext and r.random() < 0.4):
            self.extend(parts, event, plain)
        text = "@:" + ":".join(parts)
        if r.random() < 0.15 and nums:
            text += " if %s < %d" % (self.pick(nums), r.randrange(1 << 31))
        return text

    def extend(self, parts, event, grow):
        """Adds one or two of rhist's extensions to a trigger's pieces, in
        braces (grow: :grow among them): hist's run leaves them out."""
        r = self.r
        nums = sorted(k for k, v in self.fields(event).items() if v == "n")
        k = next(i for i, p in enumerate(parts) if p.startswith("keys="))
        v = next((i for i, p in enumerate(parts) if p.startswith("vals=")), None)
        kinds = r.sample(["grow", "vals", "keys"], r.randrange(1, 3))
        if grow and "grow" not in kinds:
            kinds.append("grow")
        for kind in sorted(kinds, key=["keys", "vals", "grow"].index):
            if kind == "grow":
                sz = next((i for i, p in enumerate(parts) if p.startswith("size=")), None)
                if sz is None:
                    parts[k] += "{:size=%d:grow}" % self.pick([1, 128])
                else:
                    parts[sz] += "{:grow}"
            elif kind == "vals" and nums:
                # A statistic, percentiles (unsigned values only: not
                # rhist_sample's c), or more values than hist's two.
                pool = nums + ["%s.%s" % (n, st) for n in nums for st in ["min", "max", "avg"]]
                pool += ["%s.quantiles" % n for n in nums if n != "c"] * 2
                vals = ",".join(dict.fromkeys(r.sample(pool, min(len(pool), r.randrange(1, 6)))))
                if v is None:
                    parts[k] += "{:vals=%s}" % vals
                else:
                    parts[v] += "{,%s}" % vals
            elif kind == "keys":
                # Past hist's three keys, or one hist does not know.
                more = ["common_comm"] * 3 + ["common_cpu"] + sorted(self.fields(event))
                parts[k] += "{,%s}" % ",".join(dict.fromkeys(
                    self.pick(more) for _ in range(r.randrange(1, 5))))

    def param(self, event, kind):
        f = self.fields(event)
        if kind == "s":
            pool = ["$" + v for v in STR_VARS] + [k for k, v in f.items() if v == "s"]
        else:
            pool = ["$" + v for v in NUM_VARS] + [k for k, v in f.items() if v == "n"]
            pool.append("common_timestamp")
        if not pool:
            return None
        p = self.pick(pool)
        if not p.startswith("$") and self.r.random() < 0.3:
            # A field of the matching event named in full: a field
            # variable, maybe on a hidden histogram of another event.
            other = self.pick(["sample", "other"] + SYNTH)
            p = "%s.%s" % (self.system(other), p)
        return p

    def handler(self, event, var):
        r = self.r
        kind = r.random()
        if kind < 0.55 or var is None:
            match = self.pick(["sample", "other"] + SYNTH)
            synth = self.pick(SYNTH)
            params = []
            for _, k in SYNTH_DEFS[synth][1].items():
                p = self.param(event, k)
                if p is None or (k == "s" and not p.split(".")[-1].lstrip("$") in
                                 ["s", "d"] + STR_VARS):
                    p = "$t0" if k == "s" else "$v0"
                params.append(p)
            if r.random() < 0.5:
                return "onmatch(%s).trace(%s,%s)" % (self.system(match), synth, ",".join(params))
            return "onmatch(%s).%s(%s)" % (self.system(match), synth, ",".join(params))
        how = self.pick(["onmax", "onchange"])
        act = r.random()
        if act < 0.4:
            self.snapshot_written = True
            return "%s($%s).snapshot()" % (how, var)
        if act < 0.8:
            nums = [k for k, v in self.fields(event).items() if v == "n"]
            return "%s($%s).save(%s)" % (how, var, ",".join(nums[:2]))
        synth = self.pick(["y0", "y1"])
        params = ["$" + var] * len(SYNTH_DEFS[synth][1])
        return "%s($%s).trace(%s,%s)" % (how, var, synth, ",".join(params))

    def event(self):
        if self.r.random() < 0.85:
            return self.pick(sorted(self.events) + ["sample"] * 2)
        return self.pick(["sample"] * 4 + ["other"] * 2 + SYNTH + ["e0", "k0"])

    def instance(self):
        if self.r.random() < 0.85:
            return self.pick(sorted(self.instances))
        return self.pick(INSTANCES)

    def ext_step(self):
        """--ext's own steps: kprobes-optimization, and partial reads kept
        open across the steps between."""
        r = self.r
        y = r.random()
        if y < 0.15:
            return "ko %d" % r.randrange(2)
        if y < 0.6:
            # Mostly of an event given triggers: a document with entries.
            if self.texts and r.random() < 0.7:
                inst, ev, _ = self.pick(self.texts)
            else:
                inst, ev = self.instance(), self.event()
            return "po %s %s %s %d" % (inst, ev, self.pick(["json", "json", "text"]),
                                       self.pick([1, 64, 300, 1000, 4096]))
        return "pr"

    def step(self):
        r = self.r
        if self.ext and r.random() < 0.05:
            return self.ext_step()
        x = r.random()
        inst = self.instance()
        ev = self.event()
        if x < 0.30:
            text = self.trigger(inst, ev)
            self.texts.append((inst, ev, text))
            return "tw %s %s %s" % (inst, ev, text)
        if x < 0.40 and self.texts:
            i, e, t = self.pick(self.texts)
            return "tw %s %s !%s" % (i, e, t.split(" if ")[0] if r.random() < 0.2 else t)
        if x < 0.45:
            return "tt %s %s" % (inst, ev)
        if x < 0.52:
            i = self.pick(INSTANCES[1:])
            self.instances.add(i)
            return "mk " + i
        if x < 0.56:
            i = self.pick(INSTANCES[1:])
            if r.random() < 0.5:
                self.instances.discard(i)
            return "rm " + i
        if x < 0.63:
            y = self.pick(SYNTH)
            if r.random() < 0.25:
                self.events.discard(y)
                return "se !%s %s" % (y, SYNTH_DEFS[y][0])
            self.events.add(y)
            return "se %s %s" % (y, SYNTH_DEFS[y][0])
        if x < 0.64:
            return "st"
        if x < 0.69:
            probes = ["p:kp/k0 vfs_read", "-:kp/k0",
                      "e:ep/e0 rhist_test/rhist_sample x=$a:u64 y=$b:u32",
                      "-:ep/e0"]
            if self.ext:
                # Fired by "cpu 0" on the CPU going offline.
                probes.insert(1, "p:kp/k0 sched_cpu_dying")
            d = self.pick(probes)
            if d == "p:kp/k0 sched_cpu_dying":
                self.dying_probe = True
            name = "k0" if "kp" in d else "e0"
            if d.startswith("-"):
                self.events.discard(name)
            else:
                self.events.add(name)
            return "de " + d
        if x < 0.70:
            return "dt"
        if x < 0.74:
            return "en %s %s %d" % (inst, ev, r.randrange(2))
        if x < 0.86:
            args = "count=%d seed=%d keys=%d" % (r.randrange(1, 50), r.randrange(100),
                                                 r.randrange(1, 8))
            if r.random() < 0.3:
                args += " cpu=all"
            if r.random() < 0.3:
                args += " event=other"
            return "fx " + args
        if x < 0.925:
            # Not k0's: any task's reads fire it.
            return "ck %s %s" % (inst, ev if ev != "k0" else "sample")
        if x < 0.945:
            if self.ext and r.random() < 0.5:
                return "cj %s %s" % (inst, ev)
            return "pl %s %s" % (inst, ev)
        if x < 0.95:
            return "pk"
        if x < 0.97:
            return "el"
        if x < 0.997:
            online = r.randrange(2)
            if self.dying_probe and self.snapshot_written:
                # Not offline: hist would hang (see above).
                online = 1
            return "cpu %d" % online
        return "mod"

    def sequence(self):
        self.reset()
        steps = [self.step() for _ in range(self.r.randrange(20, 61))]
        return steps


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=100)
    ap.add_argument("-s", "--seed", type=int, default=1)
    ap.add_argument("-o", "--out", required=True)
    ap.add_argument("--ext", action="store_true",
                    help="rhist's extensions too (see above)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    g = Gen(rng, a.ext)
    with open(a.out, "w") as f:
        f.write("seed %d%s\n" % (a.seed, " ext" if a.ext else ""))
        for i in range(a.n):
            f.write("seq %d\n" % i)
            for s in g.sequence():
                f.write(s + "\n")
            f.write("end\n")


if __name__ == "__main__":
    main()
