#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Trigger texts for the guest-side differential fuzzer (fuzz.sh).

  gen.py [-n N] [-s SEED] [-o FILE]

Mutates the valid texts of tools/testing/tests/differential.sh's table and
of corpus.txt: deletes a span, inserts grammar tokens, replaces and
duplicates tokens, splices in a ':' section of another text. Writes a
header line "# fuzz-guest seed=S n=N" and N distinct texts, one a line,
as written after "hist:". The same seed gives the same texts.

The last texts use rhist's extensions, which hist rejects: N/40 with
common_comm (the task's name, and the generic comm, which hist 6.12
rejects): a corpus text with a field replaced by one of COMM_FIELDS, then
mutated; N/20 with value statistics (.min, .max, .avg, .quantiles on
values): a corpus text given values with statistics, maybe a sort on one,
then mutated as the others are, the statistics among the tokens; then
N/20 with more keys (4 to 9), values (3 to 17) or sort keys (3 to 5) than
hist takes, some of them statistics, then mutated likewise. The other
texts are the first ones the generator gives for the seed, as before
these were made.
"""

import argparse
import os
import random
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DIFFERENTIAL = os.path.join(HERE, "..", "tests", "differential.sh")
CORPUS = os.path.join(HERE, "corpus.txt")
MAX_LEN = 200  # error_log carets stay short

FIELDS = ["a", "b", "c", "s", "d", "ip", "cpu", "common_pid", "common_cpu",
          "common_preempt_count", "common_flags", "common_type",
          "common_timestamp", "common_stacktrace", "stacktrace", "hitcount"]
BAD_FIELDS = ["nosuch", "x", "e", "A", "aa", "common_", "hitcounts",
              "common_timestamps", "ip2", "_"]
MODIFIERS = [".hex", ".sym", ".sym-offset", ".syscall", ".execname",
             ".log2", ".buckets=", ".buckets=10", ".usecs", ".percent",
             ".graph", ".stacktrace", ".descending", ".ascending", ".",
             ".foo"]
ATTRS = ["keys=", "key=", "vals=", "values=", "val=", "sort=", "size=",
         "name=", "clock=", ":pause", ":cont", ":continue", ":clear",
         ":nohitcount", ":NOHC", "x=", "y=b", "$x", "$y", "$a"]
OPS = ["+", "-", "*", "/", "(", ")", "==", "!=", "<", ">", "<=", ">=",
       "~", "&", "&&", "||", "!"]
NUMBERS = ["0", "1", "2", "3", "7", "10", "16", "100", "1000", "4096",
           "65536", "-1", "0x10", "4294967296", "18446744073709551616"]
PUNCT = [":", ",", "=", ".", " ", "  ", "if", " if ", '"key1"', '"a*"',
         "global", "local", "mono", "fz1"]
TOKENS = FIELDS + BAD_FIELDS + MODIFIERS + ATTRS + OPS + NUMBERS + PUNCT
# rhist's extension: statistics of values, and what they may be of.
STATS = [".min", ".max", ".avg", ".quantiles"]
STAT_VALUES = ["a", "b", "c", "ip", "cpu", "common_cpu", "common_pid",
               "common_timestamp", "common_timestamp.usecs", "b.hex",
               "c.hex", "b-c", "b*2", "a/3", "-(c)", "b+c-a", "hitcount",
               "s", "d", "stacktrace", "$x", "x", "b.log2", "b.percent"]

# rhist's extension: the task's name, and what may follow it.
COMM_FIELDS = ["common_comm", "common_comm", "comm", "COMM",
               "common_comm.hex", "common_comm.log2", "comm.buckets=10",
               "common_comm.execname", "common_comm.descending",
               "common_comm.stacktrace", "common_comm+1"]

# rhist's extension: more keys, values and sort keys than hist's.
MORE_KEYS = ["a", "b", "c", "s", "ip", "cpu", "common_pid", "common_cpu",
             "common_type", "b.hex", "c.log2", "a.buckets=100", "ip.sym",
             "common_pid.execname", "b-c"]
MORE_VALS = ["a", "b", "c", "ip", "cpu", "common_pid", "b.hex", "b-c",
             "a/3", "common_timestamp", "hitcount", "b.percent", "b.max",
             "c.min", "a.avg"]
# Now and then: big keys (d 256 bytes, a stack trace 128: the key's 384
# bytes run out), a sketch, what is not a value, or no field at all.
MORE_RARE = ["d", "stacktrace", "common_stacktrace", "b.quantiles", "s",
             "nosuch"]

TOKEN_RE = re.compile(r'"[^"]*"|\.sym-offset|\.buckets=|\$?[A-Za-z_][A-Za-z0-9_]*'
                      r'|0x[0-9a-fA-F]+|[0-9]+|==|!=|<=|>=|&&|\|\||\s+|.')


def load_corpus():
    texts = []
    with open(DIFFERENTIAL) as f:
        table = re.search(r"^TRIGGERS='\n(.*?)^'", f.read(), re.S | re.M)
    texts += [t for t in table.group(1).splitlines() if t.strip()]
    with open(CORPUS) as f:
        texts += [t.rstrip("\n") for t in f if t.strip() and not t.startswith("#")]
    return list(dict.fromkeys(texts))


def pool_for(tok):
    """Tokens of the same kind as tok, for replacements."""
    if tok.isdigit() or tok.startswith("0x"):
        return NUMBERS
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", tok):
        return FIELDS + BAD_FIELDS
    if tok.startswith("."):
        return MODIFIERS
    if tok in OPS:
        return OPS
    return TOKENS


def mutate(rng, text, corpus):
    toks = TOKEN_RE.findall(text)
    kind = rng.choice(["delete", "delete", "insert", "insert", "replace",
                       "replace", "duplicate", "splice"])
    if kind == "delete" and text:
        if rng.random() < 0.25:  # a span of characters
            i = rng.randrange(len(text))
            return text[:i] + text[i + rng.randint(1, 6):]
        i = rng.randrange(len(toks))
        del toks[i:i + rng.randint(1, 3)]
    elif kind == "insert":
        tok = rng.choice(TOKENS)
        if rng.random() < 0.25:  # anywhere, even inside a word
            i = rng.randrange(len(text) + 1)
            return text[:i] + tok + text[i:]
        toks.insert(rng.randrange(len(toks) + 1), tok)
    elif kind == "replace" and toks:
        i = rng.randrange(len(toks))
        pool = pool_for(toks[i]) if rng.random() < 0.7 else TOKENS
        toks[i] = rng.choice(pool)
    elif kind == "duplicate" and toks:
        i = rng.randrange(len(toks))
        j = min(len(toks), i + rng.randint(1, 4))
        toks[j:j] = toks[i:j]
    else:  # splice a ':' section of another text
        parts = rng.choice(corpus).split(":")
        part = rng.choice(parts)
        cut = [m.start() for m in re.finditer(":", text)] + [len(text)]
        i = rng.choice(cut)
        return text[:i] + ":" + part + text[i:]
    return "".join(toks)


def with_stats(rng, text):
    """text with values that have statistics, maybe sorted on one."""
    trig, sep, filt = text.partition(" if ")
    parts = [p for p in trig.split(":")
             if not p.startswith(("vals=", "values=", "val=", "sort="))]
    vals = []
    for _ in range(rng.choice([1, 1, 2, 3, 3, 4, 6, 7])):
        v = rng.choice(STAT_VALUES)
        if rng.random() < 0.8:
            v += rng.choice(STATS)
        vals.append(v)
    parts.insert(rng.randrange(1, len(parts) + 1) if parts else 0,
                 "vals=" + ",".join(vals))
    stats = [v for v in vals if v.endswith(tuple(STATS))]
    if stats and rng.random() < 0.4:
        key = rng.choice(stats) + rng.choice(["", "", ".descending",
                                              ".ascending", ".up"])
        parts.append("sort=" + key)
    return ":".join(parts) + sep + filt


def distinct(n, rng, make, seen):
    """n texts from make(rng) (None: none this try), each one line of at
    most MAX_LEN characters and not in seen, which takes them; at most
    100 * n tries."""
    out = []
    tries = 0
    while len(out) < n and tries < 100 * n:
        tries += 1
        text = make(rng)
        if (text is None or "\n" in text or len(text) > MAX_LEN
                or text in seen):
            continue
        seen.add(text)
        out.append(text)
    return out


def generate_stats(n, seed, corpus, seen):
    """n texts with statistics (rhist's extension), not in seen."""
    def make(rng):
        text = with_stats(rng, rng.choice(corpus))
        for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
            if rng.random() < 0.3:  # a statistic anywhere
                toks = TOKEN_RE.findall(text)
                toks.insert(rng.randrange(len(toks) + 1), rng.choice(STATS))
                text = "".join(toks)
            else:
                text = mutate(rng, text, corpus)
        return text
    return distinct(n, random.Random("stats %d" % seed), make, seen)


def generate_comm(n, seed, corpus, seen):
    """n texts with common_comm or comm (rhist's extension), not in seen."""
    def make(rng):
        toks = TOKEN_RE.findall(rng.choice(corpus))
        fields = [i for i, t in enumerate(toks) if t in FIELDS]
        if not fields:
            return None
        for i in rng.sample(fields, min(len(fields), rng.choice([1, 1, 2]))):
            toks[i] = rng.choice(COMM_FIELDS)
        text = "".join(toks)
        for _ in range(rng.choice([0, 0, 1, 1, 2])):
            text = mutate(rng, text, corpus)
        return text
    return distinct(n, random.Random("comm %d" % seed), make, seen)


def with_more(rng, text):
    """text with more keys, values or sort keys than hist takes."""
    trig, sep, filt = text.partition(" if ")
    parts = [p for p in trig.split(":")
             if not p.startswith(("keys=", "key=", "vals=", "values=",
                                  "val=", "sort="))]
    n_keys = rng.choice([1, 2, 3, 4, 4, 5, 6, 8, 8, 9])
    n_vals = rng.choice([0, 1, 2, 3, 3, 4, 8, 16, 16, 17])
    if n_keys <= 3 and n_vals <= 2:
        n_keys = rng.choice([4, 8])
    keys = [rng.choice(MORE_KEYS) for _ in range(n_keys)]
    vals = [rng.choice(MORE_VALS) for _ in range(n_vals)]
    for fields in (keys, vals):
        if fields and rng.random() < 0.25:
            fields[rng.randrange(len(fields))] = rng.choice(MORE_RARE)
    more = ["keys=" + ",".join(keys)]
    if vals:
        more.append("vals=" + ",".join(vals))
    if rng.random() < 0.5:
        names = [k for k in keys + vals if not k.startswith("nosuch")]
        names += ["hitcount"]
        sort = [rng.choice(names) + rng.choice(["", "", ".descending"])
                for _ in range(rng.choice([1, 2, 3, 4, 4, 5]))]
        more.append("sort=" + ",".join(sort))
    return ":".join(more + parts) + sep + filt


def generate_more(n, seed, corpus, seen):
    """n texts with more keys, values or sort keys (rhist's extension),
    not in seen."""
    def make(rng):
        text = with_more(rng, rng.choice(corpus))
        for _ in range(rng.choice([0, 0, 0, 1, 1, 2])):
            text = mutate(rng, text, corpus)
        return text
    return distinct(n, random.Random("more %d" % seed), make, seen)


def generate(n, seed):
    corpus = load_corpus()
    seen = set()
    n_stats = n_more = n // 20
    n_comm = n // 40

    def make(rng):
        text = rng.choice(corpus)
        # One text in ten is left valid; the others get 1 to 3 mutations.
        for _ in range(rng.choice([0, 1, 1, 1, 1, 1, 1, 2, 2, 3])):
            text = mutate(rng, text, corpus)
        return text
    out = distinct(n - n_stats - n_more - n_comm, random.Random(seed), make,
                   seen)
    return (out + generate_comm(n_comm, seed, corpus, seen)
            + generate_stats(n_stats, seed, corpus, seen)
            + generate_more(n_more, seed, corpus, seen))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("-n", type=int, default=2000)
    ap.add_argument("-s", "--seed", type=int, default=1)
    ap.add_argument("-o", "--output", default="-")
    args = ap.parse_args()
    texts = generate(args.n, args.seed)
    f = sys.stdout if args.output == "-" else open(args.output, "w")
    f.write("# fuzz-guest seed=%d n=%d\n" % (args.seed, len(texts)))
    for t in texts:
        f.write(t + "\n")
    if f is not sys.stdout:
        f.close()


if __name__ == "__main__":
    main()
