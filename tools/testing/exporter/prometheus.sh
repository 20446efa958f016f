#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# rhist-exporter scraped by a real Prometheus (Debian's prometheus
# package): the guest (guest.sh) serves rhist's histogram of rhist_sample
# on its port 9464, forwarded by QEMU's user network to a free port of
# the host's 127.0.0.1, which a Prometheus started here scrapes every
# 10 seconds. A scrape reads the ~1,000 events' files: 1.1 to 2.7 s under
# TCG on an idle host, up to 4.5 s while two busy threads share the
# host's two cores (make check's fuzz-seq beside this).
# Through Prometheus's HTTP API:
#   prometheus-count: each key's hitcount_total equals what the guest's
#                     rhist file shows for it;
#   prometheus-quantiles: the wakeup latency per pid's percentiles and
#                     count (a summary) equal what the rhist file shows;
#   prometheus-rate:  rate(rhist_hits_total[40s]) is within 20% of the
#                     events the guest fired over those 40 s of the host's
#                     clock (its "FIRED n" lines, timed as they arrive);
#   exporter-folded:  the scheduler's stack traces from /folded, checked
#                     in the guest against its rhist file (guest.sh);
#   prometheus-fleet-p99: two exporters (two instances of the guest, as
#                     two machines) of one histogram with .quantiles, as
#                     Prometheus histograms: the p99 of both together
#                     through histogram_quantile() lies in the bucket of
#                     the exact p99 (from hist's counts of the events);
#   prometheus-fleet-count: their _count added up is every event, and
#                     what it grew by over a window the events fired in
#                     it;
#   prometheus-fleet-shift: after five times the events with four times
#                     the values, the p99 over the last minute lies in
#                     the new exact p99's bucket two scrape intervals on;
#   exporter-triggers: --triggers, checked in the guest (guest.sh);
#   prometheus-clean: the guest's kernel reported nothing.
# Prints "ok NAME" or "FAIL NAME: why" per test; exits 1 if one failed.
#
# Usage: prometheus.sh [WORKDIR]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../../.." && pwd)
. "$top/tools/testing/vm/lib.sh"
work=${1:-$(mktemp -d)}
mkdir -p "$work/signal" "$work/prom"

# Debian's prometheus and curl: tools/testing/vm/setup.sh installs them.
command -v prometheus > /dev/null && command -v curl > /dev/null ||
	{ echo "FAIL prometheus-count: no prometheus or curl (tools/testing/vm/setup.sh)"; exit 1; }
# The VM's kernel (rhist.config gives each of its flavours a virtio-net
# driver) and its modules, then the exporter.
flavour=${RHIST_FLAVOUR:-test}
"$top/tools/testing/vm/kernel.sh" "$flavour" && "$top/tools/testing/vm/modules.sh" "$flavour" ||
	{ echo "FAIL prometheus-count: the $flavour kernel or its modules did not build"; exit 1; }
"$top/tools/rhist-exporter/build.sh" "$work/overlay" ||
	{ echo "FAIL prometheus-count: rhist-exporter did not build"; exit 1; }

# Five free ports of 127.0.0.1: the guest's exporter, the guest's
# signals ("done", ...), Prometheus, the two exporters of the pair.
read -r p_exp p_sig p_prom p_pair1 p_pair2 < <(python3 -c '
import socket
s = [socket.socket() for _ in range(5)]
for x in s: x.bind(("127.0.0.1", 0))
print(*[x.getsockname()[1] for x in s])')

pids=()
cleanup() { kill "${pids[@]}" 2> /dev/null; wait 2> /dev/null; }
trap cleanup EXIT

python3 -m http.server "$p_sig" --bind 127.0.0.1 --directory "$work/signal" \
	> "$work/signal.log" 2>&1 &
pids+=($!)

# The guest reaches the signal server as 10.0.2.2 (QEMU's host address).
echo "$p_sig" > "$work/signal-port"
RHIST_HOSTFWD="tcp:127.0.0.1:$p_exp-:9464 tcp:127.0.0.1:$p_pair1-:9465 tcp:127.0.0.1:$p_pair2-:9466" \
	"$top/tools/testing/vm/run.sh" --flavour "$flavour" --timeout 900 --log "$work/guest.log" \
	--file "$work/overlay/usr/bin/rhist-exporter" --file "$work/signal-port" \
	--file "$top/tools/testing/tests/lib.sh.inc" \
	"$here/guest.sh" > "$work/run.out" 2>&1 &
vm=$!
pids+=($vm)
# The guest's console, each line with the host's time it came at (the
# log is written as the guest prints: tee, no buffer).
touch "$work/guest.log"
tail -n +1 -F "$work/guest.log" 2> /dev/null | while IFS= read -r line; do
	printf '%s %s\n' "$(date +%s.%N)" "$line"
done > "$work/console" &
pids+=($!)

# wait_for PATTERN SECONDS: until the guest's console has PATTERN.
wait_for() {
	local t=0
	until grep -q "$1" "$work/console"; do
		sleep 1
		t=$((t + 1))
		if [ $t -ge "$2" ] || ! kill -0 $vm 2> /dev/null; then
			return 1
		fi
	done
}

failed=0
fail() { echo "FAIL $1: $2"; failed=1; }
if ! wait_for 'EXPORTER-READY' 300; then
	fail prometheus-count "the guest's exporter did not start"
	cut -d' ' -f2- "$work/console" | tail -30
	exit 1
fi

cat > "$work/prometheus.yml" << EOF
global:
  scrape_interval: 10s
  scrape_timeout: 10s
scrape_configs:
  - job_name: rhist
    static_configs:
      - targets: ['127.0.0.1:$p_exp']
  - job_name: rhist-pair
    static_configs:
      - targets: ['127.0.0.1:$p_pair1', '127.0.0.1:$p_pair2']
EOF
prometheus --config.file="$work/prometheus.yml" --storage.tsdb.path="$work/prom" \
	--web.listen-address="127.0.0.1:$p_prom" > "$work/prometheus.log" 2>&1 &
pids+=($!)

# query EXPR [TIME]: the value of the instant query's single result (""
# if none), now or at TIME (Unix seconds).
query() {
	curl -s --get "http://127.0.0.1:$p_prom/api/v1/query" --data-urlencode "query=$1" \
		${2:+--data-urlencode "time=$2"} |
		python3 -c '
import json, sys
r = json.load(sys.stdin).get("data", {}).get("result", [])
print(r[0]["value"][1] if len(r) == 1 else "")' 2> /dev/null
}

# samples SELECTOR: the raw samples' values Prometheus holds for it (one
# series) over the last 10 minutes, one a line.
samples() {
	curl -s --get "http://127.0.0.1:$p_prom/api/v1/query" --data-urlencode "query=$1[10m]" |
		python3 -c '
import json, sys
r = json.load(sys.stdin).get("data", {}).get("result", [])
for v in (r[0]["values"] if len(r) == 1 else []):
    print(v[1])' 2> /dev/null
}

# --- the pair: a fleet's p99 ---------------------------------------------
# exact PHASE [BEFORE]: from hist's counts of rhist_other's a the guest
# printed after PHASE (less those after BEFORE), "p99 lower upper n": the
# exact p99 (the nearest rank's value, ceil(0.99 n)-th smallest), the
# default le bucket that holds it, (lower, upper], and the events.
exact() {
	python3 -c '
import sys
console, phase, before = sys.argv[1:]
counts = {phase: {}, before: {}}
for line in open(console, errors="replace"):
    f = line.split()
    if len(f) == 5 and f[1] == "PAIR" and f[2] in counts:
        counts[f[2]][int(f[3])] = int(f[4])
c = counts[phase]
if before:
    c = {a: k - counts[before].get(a, 0) for a, k in c.items()}
n = sum(c.values())
rank, seen = -(-99 * n // 100), 0
for v in sorted(c):
    seen += c[v]
    if seen >= rank:
        break
# The exporter default edges: 1, 3, 7, ..., 2^36 - 1.
upper = 1
while upper < v:
    upper = upper * 2 + 1
print(v, (upper - 1) // 2, upper, n)' "$work/console" "$1" "${2:-}"
}
# within X LOW HIGH: LOW <= X <= HIGH.
within() {
	python3 -c 'import sys; x, lo, hi = map(float, sys.argv[1:]); sys.exit(not lo <= x <= hi)' "${1:-nan}" "$2" "$3"
}
# until_query EXPR VALUE SECONDS: until EXPR is VALUE.
until_query() {
	local t=0
	until [ "$(query "$1")" = "$2" ]; do
		sleep 2
		t=$((t + 2))
		[ $t -lt "$3" ] || return 1
	done
}
# (The guest's first exporter serves the two instances too.)
pfam=rhist_rhist_test_rhist_other_a
pair='{job="rhist-pair"}'
p99="histogram_quantile(0.99, sum by (le) (rate(${pfam}_bucket$pair[1m])))"
pair_checks() {
	# Both exporters' series, from the guest's first events.
	until_query "count(${pfam}_count$pair)" 2 180 ||
		{ echo "FAIL prometheus-fleet-p99: no series from the two exporters"; return; }
	echo "    series per family, both exporters: $(query "count({__name__=~\"${pfam}_(bucket|sum|count)\",job=\"rhist-pair\"})")"
	touch "$work/signal/pair1"
	wait_for 'PAIR-END 1' 120 || { echo "FAIL prometheus-fleet-p99: the guest did not fire"; return; }
	read -r v lo hi n < <(exact 1)
	until_query "sum(${pfam}_count$pair)" "$n" 60 ||
		{ echo "FAIL prometheus-fleet-count: sum of _count $(query "sum(${pfam}_count$pair)"), $n fired"; return; }
	got=$(query "$p99")
	echo "    $p99 = $got; exact p99 $v, in the bucket ($lo, $hi]"
	within "$got" "$lo" "$hi" && echo "ok prometheus-fleet-p99" ||
		echo "FAIL prometheus-fleet-p99: $got is not in ($lo, $hi], the exact p99's ($v)"
	# The shift, five times the events and four times the values.
	t0=$(date +%s.%N)
	touch "$work/signal/pair2"
	wait_for 'PAIR-END 2' 120 || { echo "FAIL prometheus-fleet-shift: the guest did not fire"; return; }
	sleep 20
	t1=$(date +%s.%N)
	read -r v2 lo2 hi2 n2 < <(exact 2)
	read -r vs los his ns < <(exact 2 1)
	got=$(query "$p99")
	echo "    20 s after: $p99 = $got; exact p99 of every event $v2, of the shift's $vs, in ($lo2, $hi2]"
	[ "$hi2" = "$his" ] && within "$got" "$lo2" "$hi2" && echo "ok prometheus-fleet-shift" ||
		echo "FAIL prometheus-fleet-shift: $got is not in ($lo2, $hi2] ($v2; the shift's alone $vs)"
	# Over the window: the sum of _count at its end less at its start
	# (increase() extrapolates to the window's edges: shown, not compared).
	a=$(query "sum(${pfam}_count$pair)" "$t0") b=$(query "sum(${pfam}_count$pair)" "$t1")
	inc=$(query "sum(increase(${pfam}_count$pair[1m]))")
	echo "    window: the sum of _count from $a to $b, $ns fired in it; increase()[1m] = $inc"
	[ "$(query "sum(${pfam}_count$pair)")" = "$n2" ] && [ -n "$a" ] && [ -n "$b" ] && [ $((b - a)) = "$ns" ] &&
		echo "ok prometheus-fleet-count (_count added up: $n2, every event; $ns over the window)" ||
		echo "FAIL prometheus-fleet-count: _count grew by $((${b:-0} - ${a:-0})) over the window, $ns fired"
}
# The guest waits for its pair before it fires the bursts of
# prometheus-rate: whatever the checks found, they let it go on.
{ pair_checks; touch "$work/signal/pair1" "$work/signal/pair2" "$work/signal/pair-done"; } \
	> "$work/pair.out" 2>&1 &
pair_checker=$!

# prometheus-count: every key of the rhist file, as Prometheus has it:
# the guest waits 25 s (two scrapes) after printing the counts before it
# fires more, so that one scrape holds exactly these.
wait_for COUNTS-END 120 || fail prometheus-count "the guest printed no counts"
wait_for 'FIRED ' 300
metric=rhist_rhist_test_rhist_sample_hitcount_total
ok=1 n=0
while read -r a count; do
	n=$((n + 1))
	seen=$(samples "${metric}{a=\"$a\"}" | sort -un | tr '\n' ' ')
	echo "    key a=$a: rhist $count, Prometheus's samples: $seen"
	case " $seen" in *" $count "*) ;; *) ok=0 ;; esac
done < <(sed -n '/COUNTS-START/,/COUNTS-END/p' "$work/console" |
	sed -n 's/.*{ a: *\([0-9]*\) } hitcount: *\([0-9]*\).*/\1 \2/p')
[ $n -gt 0 ] && [ $ok = 1 ] && echo "ok prometheus-count ($n keys)" ||
	fail prometheus-count "a key's count is not among Prometheus's samples"

# prometheus-quantiles: the wakeup latency per pid of rhist.rst's
# example, its percentiles as the guest's rhist file shows them once its
# three shells had exited, and Prometheus's samples of the summary's
# quantiles and _count for each of those pids; then the exporter's
# /metrics for them and the p99 per pid through PromQL.
family=rhist_synthetic_rv_wakeup_latency_lat
ok=1 n=0
while read -r pid hits p50 p90 p99 p999; do
	n=$((n + 1))
	for qv in "0.5 $p50" "0.9 $p90" "0.99 $p99" "0.999 $p999" "count $hits"; do
		set -- $qv
		case $1 in
		count) sel="${family}_count{pid=\"$pid\"}" ;;
		*) sel="${family}{pid=\"$pid\",quantile=\"$1\"}" ;;
		esac
		seen=$(samples "$sel" | sort -un | tr '\n' ' ')
		case " $seen" in
		*" $2 "*) ;;
		*) ok=0; echo "    pid $pid $1: rhist $2, Prometheus's samples: $seen" ;;
		esac
	done
done < <(sed -n '/WAKEUP-START/,/WAKEUP-END/p' "$work/console" |
	sed -n 's/.*{ pid: *\([0-9]*\) } hitcount: *\([0-9]*\)  lat.p50: *\([0-9]*\)  lat.p90: *\([0-9]*\)  lat.p99: *\([0-9]*\)  lat.p999: *\([0-9]*\).*/\1 \2 \3 \4 \5 \6/p')
sed -n '/WAKEUP-START/,/WAKEUP-END/p' "$work/console" | cut -d' ' -f2- | sed 's/^/    /'
shells=$(sed -n 's/.*WAKEUP-START //p' "$work/console" | tr ' ' '|')
curl -s "http://127.0.0.1:$p_exp/metrics" | grep -E "^${family}.*pid=\"($shells)\"" |
	sed 's/^/    \/metrics: /'
curl -s --get "http://127.0.0.1:$p_prom/api/v1/query" \
	--data-urlencode "query=${family}{pid=~\"$shells\",quantile=\"0.99\"}" |
	python3 -c '
import json, sys
for r in json.load(sys.stdin).get("data", {}).get("result", []):
    print("    PromQL %s{quantile=\"0.99\"}: pid %s: %s" % (sys.argv[1], r["metric"].get("pid"), r["value"][1]))' "$family"
[ $n = 3 ] && [ $ok = 1 ] && echo "ok prometheus-quantiles ($n pids)" ||
	fail prometheus-quantiles "$n pids; a percentile is not among Prometheus's samples"

# exporter-folded: the guest's own check of /folded (guest.sh).
grep -q '^[0-9.]* FOLDED ok' "$work/console" && echo "ok exporter-folded ($(sed -n 's/^[0-9.]* FOLDED ok: //p' "$work/console"))" ||
	fail exporter-folded "$(sed -n 's/^[0-9.]* FOLDED //p' "$work/console" | head -1)"

# prometheus-rate: a window of bursts (four scrapes) after 10 s of them.
window=40
sleep $((window + 10))
now=$(date +%s.%N)
rate=$(query "rate(rhist_hits_total{histogram=\"rhist_rhist_test_rhist_sample\"}[${window}s])")
fired=$(awk -v t="$now" -v w="$window" '$2 == "FIRED" { if ($1 <= t - w) a = $3; if ($1 <= t) b = $3 }
	END { print (b - a) / w }' "$work/console")
echo "    rate: Prometheus $rate/s, fired $fired/s (host clock)"
python3 -c "import sys; r, f = float('${rate:-nan}'), float('$fired'); sys.exit(not (f > 0 and abs(r - f) <= 0.2 * f))" &&
	echo "ok prometheus-rate" || fail prometheus-rate "rate $rate against $fired fired"

wait $pair_checker
cat "$work/pair.out"
grep -q '^FAIL' "$work/pair.out" && failed=1
# The guest's pair goes on to its end whatever the checks found.
touch "$work/signal/pair1" "$work/signal/pair2" "$work/signal/pair-done" "$work/signal/done"
wait $vm
vmrc=$?
# exporter-triggers: the guest's own check of --triggers (guest.sh).
grep -q '^[0-9.]* TRIGGERS ok' "$work/console" && echo "ok exporter-triggers ($(sed -n 's/^[0-9.]* TRIGGERS ok: //p' "$work/console"))" ||
	fail exporter-triggers "$(sed -n 's/^[0-9.]* TRIGGERS //p' "$work/console" | head -1)"
if [ $vmrc = 0 ]; then
	echo "ok prometheus-clean"
else
	fail prometheus-clean "the guest's run exited $vmrc (run.sh: a kernel problem, a failure or a hang)"
	cat "$work/run.out"
fi
exit $failed
