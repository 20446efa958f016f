#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# rhist's benchmark, run in the VM (see tools/testing/bench/run.sh).
# Prints one line per measurement:
#   RESULT path <scenario> <mode> <round> <ns> <events>
#   RESULT memory <size> <impl> <kB> <create_ns> <destroy_ns>
#   RESULT read <entries> <impl> <round> <ns>
#   RESULT real <workload> <mode> <round> <ns>
# Modes: none (no trigger), noop (the rhist_noop trigger: the framework's
# floor), hist (C), rhist, and for the scenarios the eBPF peer has a
# program for (bpf_of below) bpf-hash and bpf-percpu: rhist_bpf
# (tools/testing/bench/bpf/) with the program attached to the event
# through perf, its map a BPF_MAP_TYPE_HASH or a BPF_MAP_TYPE_PERCPU_HASH.
# Rounds alternate the order of the modes. A bpf mode checks that its
# map's hits and drops add up to the events fired (BENCH-ERROR if not).
# ICOUNT=1 (the VM counts instructions, see run.sh): the single-CPU
# scenarios and the real workloads only. PATH_ONLY=1: the event path's
# scenarios only. REAL_WORKLOADS, REAL_ROUNDS, REAL_READS and REAL_PINGS
# size the real workloads (see real_triggers).
EV=events/rhist_test/rhist_sample
D=/sys/kernel/debug/rhist_test
ROUNDS=${ROUNDS:-11}
COUNT=${COUNT:-50000}
now() { cat $D/now_ns; }

# scenario name|trigger text|fire arguments (SCENARIOS= may replace them).
# A text of several triggers separates them with ';'. The fill_*,
# key_* and triggers_* scenarios show how the cost grows with the map's
# fill (of 2048 entries; 100% drops), the key size (8, 24, 32 and 256
# bytes: a __data_loc string key takes 256) and the number of
# triggers on the event (which differ in their values: hist refuses a
# second trigger with the same keys and values). vars_*: the first half
# of an inter-event pipeline, a variable set by every event (a field, a
# timestamp): what the compiled programs do not cover, the general path.
SCENARIOS=${SCENARIOS:-"
keys_a|keys=a|keys=64
keys_abc_vals_ab|keys=a,b,c:vals=a,b|keys=64
keys_s|keys=s|keys=64
keys_d|keys=d|keys=64
log2_vals_b|keys=a.log2:vals=b|keys=64
sort_3vals|keys=a:vals=b,c:sort=b.descending|keys=64
cpu_all_hot|keys=common_type|keys=64 cpu=all
cpu_all_many|keys=a|keys=4096 cpu=all
full_map|keys=a:size=128|keys=5000
fill_10|keys=a|keys=205
fill_50|keys=a|keys=1024
fill_90|keys=a|keys=1843
fill_100|keys=a|keys=4096
key_8|keys=a|keys=1024
key_24|keys=a,b,c|keys=1024
key_32|keys=s,a,b|keys=1024
key_256|keys=d|keys=1024
triggers_1|keys=a:vals=b|keys=64
triggers_2|keys=a:vals=b;keys=a:vals=c|keys=64
triggers_4|keys=a:vals=b;keys=a:vals=c;keys=a:vals=b,c;keys=a:vals=c,b|keys=64
vars_field|keys=a:x=b|keys=64
vars_ts|keys=a:ts0=common_timestamp.usecs|keys=64
"}
# rhist's extensions, which hist rejects: run as none, noop and rhist only.
# Each is triggers_1's text with its value b given a statistic, so that
# report.py sets the statistic's added cost (over keys_a) beside a plain
# sum's (triggers_1 over keys_a). ext_grow_steady: a :grow map that
# never fills (the generation's pointer and its threshold, then keys_a's
# program); ext_grow_switch: one grown from 128 to 8192 entries as the
# events come (keys=4096: three grows per round, a fourth when all are
# drawn). ext_comm: a key of the task's name (common_comm, 16 bytes, one
# task), which report.py sets beside keys_s's 16-byte string of the
# record.
EXT_SCENARIOS=${EXT_SCENARIOS-"
ext_max_b|keys=a:vals=b.max|keys=64
ext_quantiles_b|keys=a:vals=b.quantiles|keys=64
ext_grow_steady|keys=a:grow|keys=64
ext_grow_switch|keys=a:size=128:grow|keys=4096
ext_comm|keys=common_comm|keys=64
"}

# Runs "echo PREFIX<trigger> >> trigger" for each trigger of TEXT.
each_trigger() { # prefix text
	echo "$2" | tr ';' '\n' | while read -r t; do
		echo "$1$t" >> $EV/trigger || return 1
	done
}
attach() { # mode text
	case $1 in
	none) ;;
	noop) echo rhist_noop >> $EV/trigger ;;
	bpf-*) bpf_start "${1#bpf-}" ;;
	*) each_trigger "$1:" "$2" ;;
	esac
}
detach() {
	case $1 in
	none) ;;
	noop) echo '!rhist_noop' >> $EV/trigger ;;
	bpf-*) bpf_stop "$1" ;;
	*)
		[ $1 != hist ] || grep -q '^    Dropped: [1-9]' $EV/hist ||
			hist_sums "$2" > /tmp/sums.hist
		each_trigger "!$1:" "$2"
		;;
	esac
}

# hist_sums TEXT: for each trigger of TEXT in order, the sums of its
# values over the entries of its histogram in the hist file, modulo 2^64
# as an eBPF map adds them ("S1,S2"; empty with no vals=).
hist_sums() {
	echo "$1" | tr ';' '\n' | while read -r t; do
		keys=${t%%:*} vals=
		case $t in *:vals=*) vals=${t#*:vals=} vals=${vals%%:*} ;; esac
		out=
		for v in $(echo "$vals" | tr ',' ' '); do
			n=0
			for x in $(awk -v info="# trigger info: hist:$keys:vals=hitcount,$vals:" -v v="$v:" '
				/^# trigger info: / { on = index($0, info) == 1 }
				on && /^\{/ {
					sub(/^[^}]*[}]/, "")
					for (i = 1; i < NF; i++) if ($i == v) print $(i + 1)
				}' $EV/hist); do
				n=$((n + x))
			done
			out=$out${out:+,}$(printf '%u' $n)
		done
		echo "$out"
	done
}

# The eBPF peer. bpf_of TEXT ARGS sets bpf_prog (empty: no program does
# what TEXT does), bpf_size (the trigger's size, every map's), bpf_maps
# (the program's maps: one per trigger) and bpf_keys (the most entries a
# map may end with: a wrong field read shows as too many). A sort= orders
# the read only: the program is that of the text without it.
bpf_of() {
	bpf_prog= bpf_size=2048 bpf_keys= bpf_maps=1
	case $1 in
	*:size=*) bpf_size=${1##*:size=} ;;
	esac
	keys=$(echo "$2" | sed -n 's/.*keys=\([0-9]*\).*/\1/p')
	case $(echo "${1%:size=*}" | sed 's/:sort=[^:;]*//g') in
	keys=a) bpf_prog=keys_a bpf_keys=$keys ;;
	keys=a,b,c:vals=a,b) bpf_prog=keys_abc_vals_ab ;;
	keys=s) bpf_prog=keys_s bpf_keys=$keys ;;
	keys=d) bpf_prog=keys_d bpf_keys=$keys ;;
	keys=common_type) bpf_prog=keys_common_type bpf_keys=1 ;;
	keys=a.log2:vals=b)
		# a in [0, keys): buckets 0 to order_base_2(keys - 1).
		bpf_prog=keys_a_log2_vals_b bpf_keys=${keys:+1}
		while [ -n "$keys" ] && [ $((1 << (bpf_keys - 1))) -lt $((keys - 1)) ]; do
			bpf_keys=$((bpf_keys + 1))
		done ;;
	keys=a:vals=b,c) bpf_prog=keys_a_vals_bc bpf_keys=$keys ;;
	keys=a:vals=b) bpf_prog=keys_a_vals_b bpf_keys=$keys ;;
	keys=a,b,c) bpf_prog=keys_abc ;;
	keys=s,a,b) bpf_prog=keys_sab ;;
	"keys=a:vals=b;keys=a:vals=c") bpf_prog=triggers_2 bpf_keys=$keys bpf_maps=2 ;;
	"keys=a:vals=b;keys=a:vals=c;keys=a:vals=b,c;keys=a:vals=c,b")
		bpf_prog=triggers_4 bpf_keys=$keys bpf_maps=4 ;;
	esac
	[ -n "$bpf_keys" ] && [ "$bpf_keys" -le "$bpf_size" ] || bpf_keys=$bpf_size
}
# bpf_start hash|percpu: rhist_bpf attached in the background.
bpf_start() {
	# Not the last run's "ready": the job may start after the grep.
	rm -f /tmp/bpf.out
	rhist_bpf /usr/lib/rhist_bpf/$1.bpf.o $bpf_prog $bpf_size \
		< /dev/null > /tmp/bpf.out 2> /tmp/bpf.err &
	bpf_pid=$!
	until grep -q '^ready$' /tmp/bpf.out; do
		if ! kill -0 $bpf_pid 2> /dev/null; then
			sed 's/^/rhist_bpf: /' /tmp/bpf.err
			return 1
		fi
		usleep 20000
	done
}
# bpf_stop MODE: detaches and checks each of the bpf_maps maps against
# bpf_fired events.
bpf_stop() {
	kill -TERM $bpf_pid
	wait $bpf_pid || { echo "BENCH-ERROR $name $1 $bpf_prog: rhist_bpf failed"; cat /tmp/bpf.err; }
	n=$(grep -c '^bpf: ' /tmp/bpf.out)
	[ "$n" = "$bpf_maps" ] ||
		echo "BENCH-ERROR $name $1 $bpf_prog: $n maps read, expected $bpf_maps"
	grep '^bpf: ' /tmp/bpf.out | while read -r line; do
		set -- "$1" $(echo "$line" |
			sed -n 's/^bpf: hits=\([0-9]*\) drops=\([0-9]*\) entries=\([0-9]*\) sums=.*$/\1 \2 \3/p')
		if [ $# != 4 ] || [ $(($2 + $3)) != "$bpf_fired" ] || [ "$4" -lt 1 ] ||
		   [ "$4" -gt "$bpf_keys" ]; then
			echo "BENCH-ERROR $name $1 $bpf_prog: hits+drops, entries: $line," \
				"expected $bpf_fired events in 1 to $bpf_keys entries"
		fi
	done
	# Sums to check against hist's when no map dropped.
	grep '^bpf: ' /tmp/bpf.out | grep -qv ' drops=0 ' ||
		sed -n 's/^bpf: .* sums=//p' /tmp/bpf.out > /tmp/sums.$1
}
# check_sums: the sums of each bpf mode of the round are hist's (the same
# events: one seed a round), when neither dropped an event.
check_sums() {
	for f in /tmp/sums.bpf-*; do
		[ -f "$f" ] && [ -f /tmp/sums.hist ] || continue
		cmp -s /tmp/sums.hist "$f" ||
			echo "BENCH-ERROR $name ${f#/tmp/sums.} $bpf_prog: sums $(cat "$f" | tr '\n' ' ')," \
				"hist's $(cat /tmp/sums.hist | tr '\n' ' ')"
	done
}
# Tracepoint programs need BPF_SYSCALL (tools/testing/config/rhist.config).
BPF_MODES="bpf-hash bpf-percpu"
if [ ! -e /proc/sys/kernel/unprivileged_bpf_disabled ]; then
	BPF_MODES=
	echo "BENCH-ERROR: no BPF_SYSCALL in this kernel"
fi
NCPU=$(grep -c '^processor' /proc/cpuinfo)

printf '%s\n%s\n' "$SCENARIOS" "$EXT_SCENARIOS" | while IFS='|' read -r name text args; do
	[ -n "$name" ] || continue
	# Instruction counts miss what atomics and cache lines cost: the
	# scenarios on every CPU stay on the wall clock.
	case "$ICOUNT $args" in 1*cpu=all*) continue ;; esac
	bpf_of "$text" "$args"
	modes="none noop hist rhist"
	[ -z "$bpf_prog" ] || modes="$modes $BPF_MODES"
	case $name in ext_*) modes="none noop rhist" ;; esac
	bpf_fired=$COUNT
	case "$args" in *cpu=all*) bpf_fired=$((COUNT * NCPU)) ;; esac
	r=1
	while [ $r -le $ROUNDS ]; do
		order=$modes
		[ $((r % 2)) = 1 ] || order=$(echo $modes | tr ' ' '\n' | tac | tr '\n' ' ')
		rm -f /tmp/sums.*
		for mode in $order; do
			attach $mode "$text" || { echo "BENCH-ERROR attach $mode $text"; continue; }
			echo "count=$COUNT seed=$r $args" > $D/fire
			echo "RESULT path $name $mode $r $(cat $D/last_ns) $COUNT"
			detach $mode "$text"
		done
		check_sums
		r=$((r + 1))
	done
done

# PATH_ONLY=1 (make bench's later boots): the event path only.
[ -z "$PATH_ONLY" ] || { echo BENCH-DONE; exit 0; }

# Memory held by one histogram of 3 keys and 3 sums (hitcount and 2
# values, the most a histogram has), and the time to create and destroy
# it: the drop in free pages over three such histograms (told apart by
# their filters), divided by three. Before each reading the slab caches
# are shrunk and deferred frees given a second, so that what an earlier
# run freed is not counted for this one.
settle() {
	sync
	# 3 drops the caches; 4 stops the kernel saying so on the console,
	# where its line landed in the middle of a RESULT line.
	echo 7 > /proc/sys/vm/drop_caches 2>/dev/null
	for f in /sys/kernel/slab/*/shrink; do echo 1 > "$f"; done 2>/dev/null
	sleep 1
	for f in /sys/kernel/slab/*/shrink; do echo 1 > "$f"; done 2>/dev/null
}
# Free pages, with those the per-CPU lists keep for the page allocator
# (freed pages wait there, and new ones are taken from there first).
free_kb() {
	echo $(( $(awk '/^MemFree:/ { print $2 }' /proc/meminfo) +
		 $(awk '/^ +count:/ { n += $2 } END { print n * 4 }' /proc/zoneinfo) ))
}
# The real workloads, each run with no histogram (none), hist's
# triggers, rhist's (the same text) and the eBPF peer's programs
# (bpf-percpu) on the same events, the modes interleaved in each round
# (their order alternating):
#   syscalls: dd reading and writing a byte at a time (REAL_READS reads),
#     keys=common_pid,id on raw_syscalls/sys_enter and keys=ret.log2 on
#     syscalls/sys_exit_read (rhist_bpf's sys_enter_pid_id and
#     sys_exit_read_ret_log2);
#   switch: pingpong (two tasks passing a byte over pipes REAL_PINGS
#     times, pinned to the two CPUs), keys=next_pid on sched/sched_switch
#     (sched_switch_next_pid);
#   wakeup: pingpong, the wakeup-latency pipeline of rhist.rst with a
#     log2 histogram of the latency (runqlat_waking and runqlat_switch,
#     bcc's runqlat).
# A rhist_noop trigger stays on the workload's events throughout, none
# included, so that their tracepoints are patched in once and out once:
# multi-threaded TCG now and then runs the int3 of a call site the kernel
# has finished patching (see tools/testing/vm/run.sh). After each run
# every histogram must hold its expected hits and key (BENCH-ERROR).
#   RESULT real <workload> <mode> <round> <ns>
REAL_READS=${REAL_READS:-200000}
REAL_PINGS=${REAL_PINGS:-20000}
# real_triggers WORKLOAD: "EVENT MIN_HITS KEY TRIGGER" a line, in the
# order they are added (removed in reverse); KEY: an extended regular
# expression one of the histogram's keys must match.
real_triggers() {
	case $1 in
	syscalls)
		echo "raw_syscalls/sys_enter $((2 * REAL_READS)) id:[[:space:]]+0[[:space:]]}" \
			"keys=common_pid,id"
		echo "syscalls/sys_exit_read $REAL_READS ret:[[:space:]]~[[:space:]]2\^0[[:space:]]" \
			"keys=ret.log2" ;;
	switch) echo "sched/sched_switch $REAL_PINGS next_pid: keys=next_pid" ;;
	wakeup)
		echo "sched/sched_waking $REAL_PINGS pid: keys=pid:ts0=common_timestamp.usecs"
		echo "sched/sched_switch $REAL_PINGS next_pid: keys=next_pid:wlat=common_timestamp.usecs-\$ts0:onmatch(sched.sched_waking).bench_wakeup_lat(\$wlat,next_pid)"
		echo "synthetic/bench_wakeup_lat $((REAL_PINGS / 2)) lat: keys=lat.log2" ;;
	esac
}
# real_bpf WORKLOAD: the programs, and each map's least hits.
real_bpf() {
	case $1 in
	syscalls) echo "sys_enter_pid_id,sys_exit_read_ret_log2 $((2 * REAL_READS)) $REAL_READS" ;;
	switch) echo "sched_switch_next_pid $REAL_PINGS" ;;
	wakeup) echo "runqlat_waking,runqlat_switch $((REAL_PINGS / 2))" ;;
	esac
}
real_run() {
	case $1 in
	syscalls) dd if=/dev/zero of=/dev/null bs=1 count=$REAL_READS 2> /dev/null ;;
	*) pingpong $REAL_PINGS ;;
	esac
}
# real_events WORKLOAD: the workload's events but synthetic ones.
real_events() {
	real_triggers $1 | while read -r ev rest; do
		case $ev in synthetic/*) ;; *) echo $ev ;; esac
	done | sort -u
}
real_attach() { # workload mode
	case $2 in
	none) ;;
	bpf-*)
		bpf_prog=$(real_bpf $1) bpf_size=2048
		bpf_prog=${bpf_prog%% *}
		bpf_start ${2#bpf-} ;;
	*)
		real_triggers $1 | while read -r ev min key t; do
			echo "$2:$t" >> events/$ev/trigger || return 1
		done && return
		# What was added goes.
		real_triggers $1 | tac | while read -r ev min key t; do
			echo "!$2:$t" >> events/$ev/trigger
		done 2> /dev/null
		return 1 ;;
	esac
}
# real_detach WORKLOAD MODE: removes MODE's triggers or programs, after
# checking what their histograms or maps hold.
real_detach() {
	case $2 in
	none) ;;
	bpf-*)
		kill -TERM $bpf_pid
		wait $bpf_pid || { echo "BENCH-ERROR real $1 $2: rhist_bpf failed"; cat /tmp/bpf.err; }
		mins=$(real_bpf $1)
		mins=${mins#* }
		grep '^bpf: ' /tmp/bpf.out > /tmp/bpf.maps
		[ $(wc -l < /tmp/bpf.maps) = $(echo $mins | wc -w) ] ||
			echo "BENCH-ERROR real $1 $2: $(wc -l < /tmp/bpf.maps) maps read, expected $(echo $mins | wc -w)"
		for min in $mins; do
			read -r line || break
			set -- $(echo "$line" |
				sed -n 's/^bpf: hits=\([0-9]*\) drops=\([0-9]*\) entries=\([0-9]*\) .*/\1 \2 \3/p')
			[ $# = 3 ] && [ "$1" -ge "$min" ] && [ "$2" = 0 ] && [ "$3" -ge 1 ] ||
				echo "BENCH-ERROR real $w bpf: $line, expected at least $min hits, no drops"
		done < /tmp/bpf.maps
		;;
	*)
		real_triggers $1 > /tmp/real.t
		while read -r ev min key t; do
			f=events/$ev/$2
			hits=$(awk '/^ *Hits:/ { print $2 }' $f)
			[ "${hits:-0}" -ge "$min" ] && grep '^{' $f | grep -Eq "$key" ||
				echo "BENCH-ERROR real $1 $2 $ev: ${hits:-no} hits (at least $min expected)," \
					"$(grep -c '^{' $f) entries, none with a key matching $key"
		done < /tmp/real.t
		tac /tmp/real.t | while read -r ev min key t; do
			echo "!$2:$t" >> events/$ev/trigger
		done ;;
	esac
}
REAL_MODES="none hist rhist"
case " $BPF_MODES " in *" bpf-percpu "*) REAL_MODES="$REAL_MODES bpf-percpu" ;; esac
echo 'bench_wakeup_lat u64 lat; pid_t pid' >> synthetic_events ||
	echo "BENCH-ERROR: synthetic event bench_wakeup_lat"
for w in ${REAL_WORKLOADS-syscalls switch wakeup}; do
	for ev in $(real_events $w); do
		echo rhist_noop >> events/$ev/trigger || echo "BENCH-ERROR attach rhist_noop $ev"
	done
	r=1
	while [ $r -le ${REAL_ROUNDS:-5} ]; do
		order=$REAL_MODES
		[ $((r % 2)) = 1 ] || order=$(echo $order | tr ' ' '\n' | tac | tr '\n' ' ')
		for mode in $order; do
			real_attach $w $mode || { echo "BENCH-ERROR attach real $w $mode"; continue; }
			# What the last mode left to RCU and the workqueues
			# (rhist_bpf's maps, its perf events) is done first.
			usleep 200000
			t0=$(now)
			real_run $w || echo "BENCH-ERROR real $w: the workload failed"
			t1=$(now)
			echo "RESULT real $w $mode $r $((t1 - t0))"
			real_detach $w $mode
		done
		r=$((r + 1))
	done
	for ev in $(real_events $w); do echo '!rhist_noop' >> events/$ev/trigger; done
done
echo '!bench_wakeup_lat' >> synthetic_events

[ -z "$ICOUNT" ] || { echo BENCH-DONE; exit 0; }
for size in ${SIZES:-2048 16384 131072}; do
	for impl in hist rhist rhist hist hist rhist; do
		t="keys=a,b,c:vals=b,c:size=$size"
		settle
		before=$(free_kb)
		t0=$(now)
		for n in 1 2 3; do
			echo "$impl:$t if a == $n" >> $EV/trigger || echo "BENCH-ERROR attach $impl:$t"
		done
		t1=$(now)
		settle
		after=$(free_kb)
		t2=$(now)
		for n in 1 2 3; do echo "!$impl:$t if a == $n" >> $EV/trigger; done
		t3=$(now)
		echo "RESULT memory $size $impl $(((before - after) / 3)) $(((t1 - t0) / 3)) $(((t3 - t2) / 3))"
	done
done

# Reading a histogram of about 100,000 entries.
if [ -z "$SMOKE" ]; then
	t='keys=a:size=131072'
	echo "hist:$t" >> $EV/trigger
	echo "rhist:$t" >> $EV/trigger
	echo "count=1200000 seed=1 keys=100000" > $D/fire
	entries=$(awk '/Entries:/ { print $2 }' $EV/hist)
	for r in 1 2 3 4 5; do
		for impl in hist rhist; do
			t0=$(now); cat $EV/$impl > /dev/null; t1=$(now)
			echo "RESULT read $entries $impl $r $((t1 - t0))"
		done
	done
	echo "!hist:$t" >> $EV/trigger
	echo "!rhist:$t" >> $EV/trigger
fi
echo BENCH-DONE
