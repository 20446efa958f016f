#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The differential suite on real kernel events: every case below is
# attached paused (":pause") as hist and as rhist, both start and stop at
# one point, and their files must then agree exactly (hist_same: in order,
# but for entries whose sort keys print the same, whose order C leaves to
# its hash table). Each key and value modifier and sort form is there on
# two events or more; a named histogram, an instance, a kprobe, an eprobe
# and each inter-event pipeline once or more.
#
# One point: cpu1 goes offline, and the test events module fires
# rhist_other (start: enable_hist and enable_rhist of every target event)
# and rhist_sample (stop: disable_hist and disable_rhist) with interrupts
# off. With one CPU and no interrupt, no event runs between the two
# triggers of a pair, so hist and rhist see the same events.
#
# A case is "DIR|TEXT": DIR the event's directory, TEXT the trigger's
# (" if FILTER" last). "@" in either is "zzh_" for hist and "zzr_" for
# rhist (variables, synthetic events, named histograms, instances: the
# two must not share them), and the hist files are compared with zzh_
# read as zzr_. Every rhist histogram must have counted something.
#
# snapshot() takes an instance's one condition, so hist's and rhist's are
# in two instances (@snap); each instance stamps its own copy of an
# event, so what they track there is made of fields, not timestamps.
. /test/lib.sh.inc

SW=events/sched/sched_switch
WK=events/sched/sched_waking
KM=events/kmem/kmalloc
KF=events/kmem/kfree
CA=events/kmem/kmem_cache_alloc
CF=events/kmem/kmem_cache_free
SE=events/raw_syscalls/sys_enter
SX=events/raw_syscalls/sys_exit
RD=events/syscalls/sys_exit_read
EX=events/sched/sched_process_exec
WQ=events/workqueue/workqueue_queue_work
HT=events/timer/hrtimer_expire_entry
KP=events/kprobes/zzkp
EP=events/zzep/sw
IN=instances/zzin/events
SN=instances/@snap/events

CASES="
$WK|keys=pid:@ts0=common_timestamp.usecs,@ts1=common_timestamp.usecs,@ts2=common_timestamp.usecs
$SW|keys=next_pid.hex
$KM|keys=bytes_req.hex
$KM|keys=call_site.sym
$KF|keys=call_site.sym
$HT|keys=function.sym
$KM|keys=call_site.sym-offset:vals=bytes_alloc
$KF|keys=call_site.sym-offset
$WQ|keys=function.sym-offset,workqueue
$SE|keys=id.syscall
$SX|keys=id.syscall:vals=ret
$SW|keys=common_pid.execname
$SE|keys=common_pid.execname,id.syscall
$KM|keys=bytes_req.log2:vals=bytes_alloc
$RD|keys=ret.log2
$KM|keys=bytes_alloc.buckets=64
$SW|keys=prev_prio.buckets=10:vals=next_prio
$SW|keys=next_pid:vals=common_timestamp.usecs
$KM|keys=gfp_flags:vals=common_timestamp.usecs,bytes_req/16
$KM|keys=bytes_req:vals=bytes_alloc*8
$SW|keys=next_prio:vals=next_prio-prev_prio,prev_prio*3+1
$KM|keys=call_site.sym:vals=bytes_req.percent,bytes_alloc.graph
$SW|keys=next_pid:vals=prev_prio.percent,next_prio.graph
$SE|keys=id:vals=hitcount.percent:nohitcount
$KM|keys=call_site:vals=bytes_alloc.hex
$SX|keys=id:vals=ret.hex
$SW|keys=common_stacktrace
$KM|keys=common_stacktrace:vals=bytes_req
$WK|keys=stacktrace
$SE|keys=stacktrace
$SW|keys=next_comm
$WK|keys=comm:vals=prio
$SW|keys=prev_comm,next_comm
$EX|keys=filename
$WQ|keys=workqueue:vals=req_cpu
$SW|keys=prev_pid,next_pid,prev_state
$KM|keys=call_site.sym,bytes_req,gfp_flags
$SW|keys=next_pid:sort=next_pid
$SE|keys=id:sort=id
$SW|keys=next_pid:sort=next_pid.descending:vals=prev_prio
$SE|keys=id.syscall:sort=id.descending
$SW|keys=prev_pid:sort=prev_pid.ascending
$SX|keys=id:vals=ret:sort=ret
$KM|keys=call_site.sym:vals=bytes_req:sort=bytes_req
$KM|keys=call_site.sym:vals=bytes_alloc:sort=bytes_alloc.descending
$SX|keys=common_pid:vals=ret:sort=ret.descending
$SW|keys=prev_pid:sort=hitcount.descending
$SE|keys=common_pid:sort=hitcount
$KM|keys=bytes_req,gfp_flags:vals=bytes_alloc:sort=bytes_alloc.descending,bytes_req
$SW|keys=prev_pid,next_pid:sort=next_pid,prev_pid.descending
$CA|keys=ptr:size=128
$CF|keys=ptr:vals=call_site:size=128
$SW|keys=next_pid if prev_pid == 0
$KM|keys=call_site.sym if bytes_req > 100
$SW|keys=prev_pid if next_comm ~ \"sh*\"
$SW|name=@shared:keys=common_pid
$WK|name=@shared:keys=common_pid
$KP|keys=count.log2
$KP|keys=common_pid.execname:vals=count
$EP|keys=pid:vals=prio
$EP|keys=prio.buckets=10:sort=prio
$IN/sched/sched_switch|keys=next_pid:vals=prev_prio
$IN/kmem/kmalloc|keys=call_site.sym:vals=bytes_req
events/synthetic/@wakeup|keys=pid,lat:sort=pid,lat
events/synthetic/@wakeup2|keys=pid,prio:vals=lat:sort=pid
$SW|keys=next_pid:@lat=common_timestamp.usecs-\$@ts0:onmatch(sched.sched_waking).trace(@wakeup,\$@lat,next_pid)
$SW|keys=next_pid:@lat2=common_timestamp.usecs-\$@ts1:onmatch(sched.sched_waking).@wakeup2(\$@lat2,next_pid,next_prio)
$SW|keys=next_pid:@lat3=common_timestamp.usecs-\$@ts2:onmax(\$@lat3).save(next_comm,prev_pid,prev_prio)
$SW|keys=prev_pid:@pp=prev_prio:onchange(\$@pp).save(next_comm,next_pid)
$WK|keys=target_cpu:@wp=prio:onchange(\$@wp).save(comm,pid)
$SN/sched/sched_waking|keys=pid:wp=prio
$SN/sched/sched_switch|keys=next_pid:m=prev_pid+\$wp:onmax(\$m).save(next_comm,prev_pid):onmax(\$m).snapshot()
$SN/sched/sched_waking|keys=common_pid:w=prio:onmax(\$w).save(comm,target_cpu)
"

# cases SIDE: "dir|text" of each case, with hist's names or rhist's.
cases() {
	p=zzh_; [ $1 = rhist ] && p=zzr_
	echo "$CASES" | sed "/^$/d; s/@/$p/g"
}

# The dynamic events, the instances and the synthetic events the cases use.
expect_write 'p:zzkp vfs_read count=$arg3:u64' kprobe_events
expect_write 'e:zzep/sw sched/sched_switch pid=$next_pid:s32 prio=$next_prio:s32' dynamic_events
for p in zzh_ zzr_; do
	expect_write "${p}wakeup u64 lat; pid_t pid" synthetic_events
	expect_write "${p}wakeup2 u64 lat; pid_t pid; int prio" synthetic_events
done
mkdir instances/zzin instances/zzh_snap instances/zzr_snap || fail "mkdir instances"

# start_stop DIR: the pair of enable triggers for DIR's event on
# rhist_other, and the pair of disable triggers on rhist_sample, both in
# DIR's instance.
start_stop() {
	e=${1##*/events/} top=${1%%events/*}
	[ "$e" != "$1" ] || e=${1#events/}
	sys=${e%%/*} ev=${e#*/}
	for p in hist rhist; do
		expect_write "enable_$p:$sys:$ev" ${top}events/rhist_test/rhist_other/trigger
		expect_write "disable_$p:$sys:$ev" ${top}events/rhist_test/rhist_sample/trigger
	done
}

echo 0 > /sys/devices/system/cpu/cpu1/online || fail "cpu1 cannot go offline"

# Every case paused, hist's (on its directory) then rhist's; the triggers
# that define variables come before those that read them.
cases hist > /tmp/cases.hist
cases rhist > /tmp/cases.rhist
for side in hist rhist; do
	while IFS='|' read -r dir text; do
		body=${text%% if *} filter=
		[ "$body" = "$text" ] || filter=" if ${text#* if }"
		echo "$side:$body:pause$filter" >> $dir/trigger ||
			{ cat error_log; fail "$side:$body:pause$filter on $dir"; }
	done < /tmp/cases.$side
done
# Each event's directory once (hist's and rhist's where they differ).
cut -d'|' -f1 /tmp/cases.hist /tmp/cases.rhist | awk '!seen[$0]++' > /tmp/dirs
while read -r dir; do
	start_stop $dir
done < /tmp/dirs

# The window: what a shell does, on cpu0 only.
fire event=other irqoff
wakers
dd if=/dev/zero of=/dev/null bs=1 count=300 2> /dev/null
ls -R /sys/kernel/tracing/events/sched > /dev/null
cat /proc/self/status /proc/meminfo > /dev/null
sleep 0.05
fire irqoff

# Compare: hist's file in hist's directory with rhist's in rhist's.
cut -d'|' -f1 /tmp/cases.hist | awk '!seen[$0]++' > /tmp/hdirs
bad=0
while read -r dir; do
	rdir=$(echo "$dir" | sed 's/zzh_/zzr_/g')
	sed 's/zzh_/zzr_/g; s/^# trigger info: hist:/# trigger info: rhist:/' $dir/hist > /tmp/c
	if ! hist_same /tmp/c $rdir/rhist > /tmp/why; then
		echo "FAIL: $rdir"
		head -20 /tmp/why
		bad=$((bad + 1))
	elif grep -q '^    Hits: 0$' $rdir/rhist; then
		echo "FAIL: $rdir: a histogram counted nothing"
		awk '/^# trigger info/ { t = $0 } /^    Hits: 0$/ { print t }' $rdir/rhist
		bad=$((bad + 1))
	else
		echo "ok $rdir ($(grep -c '^# trigger info' $rdir/rhist) histograms)"
	fi
done < /tmp/hdirs

# What the cases are there for happened: drops, saved fields, a snapshot.
for what in "$CA Dropped: [1-9]" "$CF Dropped: [1-9]" "$SW max: " "$SW changed: " \
	"$WK changed: " "instances/zzr_snap/events/sched/sched_switch Snapshot taken" \
	"instances/zzr_snap/events/sched/sched_waking max: "; do
	f=${what%% *}/rhist
	grep -q "${what#* }" $f || { echo "FAIL: no '${what#* }' in $f"; bad=$((bad + 1)); }
done

# Everything goes, in the reverse order (readers of a variable first).
for side in rhist hist; do
	awk '{ l[NR] = $0 } END { for (i = NR; i > 0; i--) print l[i] }' /tmp/cases.$side |
	while IFS='|' read -r dir text; do
		echo "!$side:$text" >> $dir/trigger || fail "removing $side:$text from $dir"
	done
done
while read -r dir; do
	top=${dir%%events/*}
	: > ${top}events/rhist_test/rhist_other/trigger
	: > ${top}events/rhist_test/rhist_sample/trigger
done < /tmp/dirs
echo 1 > /sys/devices/system/cpu/cpu1/online || fail "cpu1 cannot come back"
rmdir instances/zzin instances/zzh_snap instances/zzr_snap || fail "rmdir instances"
: > synthetic_events || fail "synthetic events still in use"
expect_write '-:zzep/sw' dynamic_events
expect_write '-:zzkp' kprobe_events
[ $bad = 0 ] || fail "$bad event files differ"
echo PASS
