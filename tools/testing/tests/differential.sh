#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The differential suite: for every trigger text below, attach it as hist
# and as rhist to rhist_test:rhist_sample, fire deterministic events, and
# require the same file from both (but for "rhist:" in the trigger info
# line; entries whose sort keys are equal may come in another order, as C
# itself does not define it). Then clear both and compare again on other
# events: every text through :clear too.
. /test/lib.sh.inc

TRIGGERS='
keys=a
key=a
keys=b
keys=c
keys=a,b
keys=a,b,c
keys=s
keys=d
keys=s,d
keys=a,s
keys=ip
keys=common_pid
keys=common_cpu
keys=cpu
keys=common_preempt_count
keys=a.hex
keys=b.hex
keys=c.hex
keys=a.log2
keys=b.log2
keys=c.log2
keys=b.buckets=100000000
keys=a.buckets=3
keys=c.buckets=1000
keys=ip.sym
keys=ip.sym-offset
keys=stacktrace
keys=a:.sym-offset=b.usecs:vals=b
name=n.sym-offset:keys=ip.sym-offset
keys=common_stacktrace
keys=a,common_stacktrace:vals=b
keys=common_pid.execname
keys=a:vals=b
keys=a:vals=c
keys=a:vals=b,c
keys=a:vals=hitcount,b
keys=a:values=b
keys=a:val=b.hex
keys=a:vals=b.percent
keys=a:vals=b.graph
keys=a:vals=b.percent,c.graph
keys=a:vals=b:nohitcount
keys=a:vals=b:NOHC
keys=a:sort=a
keys=a:sort=a.descending
keys=a:sort=a.ascending
keys=a:sort=hitcount.descending
keys=a:vals=b:sort=b
keys=a:vals=b:sort=b.descending
keys=a,b:sort=a,b
keys=a,b:sort=b.descending,a
keys=c:sort=c
keys=c:sort=c.descending
keys=s:sort=s
keys=s:sort=s.descending
keys=d:sort=d
keys=a:vals=b,c:sort=c.descending,b
keys=a:size=256
keys=a:size=200
keys=a:size=4096
keys=s:size=128
keys=a if b > 1000000000
keys=a:vals=c if c < 0
keys=s if s ~ "key1*"
keys=d:vals=b if a == 3
keys=a.log2:vals=b
keys=a:vals=common_timestamp.usecs
keys=a.syscall
keys=a:vals=b:sort=b.descending:size=512
keys=a:vals=b+c
keys=a:vals=b-c,c*3
keys=a:vals=b/3
keys=a:vals=b/8
keys=a:vals=b/1000000
keys=a:vals=b:x=c*2:y=b-c
keys=a:x=16-8-4-2
keys=a:x=s
keys=b:x=d,y=s.hex:vals=c
keys=a:e=common_pid.execname
keys=common_pid.execname:e=common_pid.execname,n=b
keys=a:t=common_stacktrace,u=stacktrace,x=d
keys=a:vals=b:t=common_timestamp.usecs
keys=a:vals=-(b)
keys=a:vals=s,d
keys=a*2:vals=b
'

# same T SEED: fire SEED's events, then both files and both debug files
# agree; prints "ok T seed=SEED", or the differences.
same() {
	fire count=3000 seed=$2 keys=40
	sed 's/^# trigger info: hist:/# trigger info: rhist:/' $EV/hist > /tmp/c
	cat $EV/rhist > /tmp/r
	# hist_debug, but for the hashed address of the hist data.
	debug_mask='s/^# trigger info: hist:/# trigger info: rhist:/; s/^hist_data: .*/hist_data: (masked)/'
	sed "$debug_mask" $EV/hist_debug > /tmp/cd
	sed "$debug_mask" $EV/rhist_debug > /tmp/rd
	if ! cmp -s /tmp/cd /tmp/rd; then
		echo "FAIL: rhist_debug differs for '$1' seed=$2"
		diff /tmp/cd /tmp/rd | head -20
		echo bad >> /tmp/bad
	fi
	if ! hist_same /tmp/c /tmp/r > /tmp/why; then
		echo "FAIL: '$1' seed=$2"
		head -20 /tmp/why
		echo bad >> /tmp/bad
		return
	fi
	echo "ok $1 seed=$2"
}

echo "$TRIGGERS" | while read -r t; do
	[ -n "$t" ] || continue
	echo "hist:$t" >> $EV/trigger || { echo "FAIL: hist rejected '$t'"; echo bad >> /tmp/bad; continue; }
	if ! echo "rhist:$t" >> $EV/trigger; then
		echo "FAIL: rhist rejected '$t'"
		echo bad >> /tmp/bad
		echo "!hist:$t" >> $EV/trigger
		continue
	fi
	same "$t" 1
	# Seed 2's events on both histograms cleared: the files start afresh
	# (a map that dropped has room again; hitcounts, sums and Totals go
	# back to 0). :clear goes before the filter, which must match.
	case $t in
	*' if '*) clear="${t%% if *}:clear if ${t#* if }" ;;
	*) clear="$t:clear" ;;
	esac
	if echo "hist:$clear" 2> /dev/null >> $EV/trigger; then
		echo "rhist:$clear" >> $EV/trigger || { echo "FAIL: rhist:$clear"; echo bad >> /tmp/bad; }
	else
		# A text that defines variables would define them twice: hist
		# rejects it, and so must rhist. Both are made anew instead.
		! echo "rhist:$clear" 2> /dev/null >> $EV/trigger ||
			{ echo "FAIL: rhist took '$clear'"; echo bad >> /tmp/bad; }
		echo "!hist:$t" >> $EV/trigger
		echo "!rhist:$t" >> $EV/trigger
		echo "hist:$t" >> $EV/trigger
		echo "rhist:$t" >> $EV/trigger
	fi
	same "$t" 2
	echo "!hist:$t" >> $EV/trigger
	echo "!rhist:$t" >> $EV/trigger
done
grep -q '^rhist:\|^hist:' $EV/trigger && { cat $EV/trigger; fail "triggers left behind"; }

# All CPUs at once, on one hot key and on many keys.
for t in 'keys=common_cpu' 'keys=a:vals=b,c' 'keys=s:sort=s'; do
	echo "hist:$t" >> $EV/trigger
	echo "rhist:$t" >> $EV/trigger
	# Both maps drop an insert that waits too long for another CPU to
	# publish the same new key (a vCPU the host preempted): C leaves that
	# drop to timing. Only when either map dropped are both cleared and
	# the events fired again, up to three times; files without a drop
	# must agree at once.
	for try in 1 2 3; do
		fire count=20000 seed=9 keys=500 cpu=all
		sed 's/^# trigger info: hist:/# trigger info: rhist:/' $EV/hist > /tmp/cs
		cat $EV/rhist > /tmp/rs
		grep -q '^    Dropped: 0$' /tmp/cs && grep -q '^    Dropped: 0$' /tmp/rs && break
		grep -H Dropped /tmp/cs /tmp/rs
		echo "hist:$t:clear" >> $EV/trigger
		echo "rhist:$t:clear" >> $EV/trigger
	done
	hist_same /tmp/cs /tmp/rs > /tmp/why || { head /tmp/why; echo bad >> /tmp/bad; echo "FAIL: cpu=all '$t'"; }
	echo "!hist:$t" >> $EV/trigger
	echo "!rhist:$t" >> $EV/trigger
done

[ ! -s /tmp/bad ] || fail "$(wc -l < /tmp/bad) differences"
echo PASS
