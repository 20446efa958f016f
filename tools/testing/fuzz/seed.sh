#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# Seeds corpus/parse_build with every `hist:` trigger of the kernel's
# Documentation/trace/histogram.rst (`hist:` stripped), once per event of
# the target, each followed by a few records of that event.
#
# Usage: seed.sh [histogram.rst]
# Default: the kernel tree tools/testing/vm unpacks,
# ${RHIST_KCACHE:-~/.cache/rhist}/linux-test/Documentation/trace/histogram.rst.

set -eu

here=$(cd "$(dirname "$0")" && pwd)
cache=${RHIST_KCACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rhist}
doc=${1:-$cache/linux-test/Documentation/trace/histogram.rst}
out=$here/corpus/parse_build

if [ ! -r "$doc" ]; then
	echo "seed.sh: no $doc (build the test kernel first, or pass the file)" >&2
	exit 1
fi
mkdir -p "$out"

perl -e '
use strict;
use warnings;
no warnings "portable";
my ($doc, $out) = @ARGV;
open(my $in, "<", $doc) or die "$doc: $!";
my @lines = <$in>;
close $in;

# Join the lines a quoted echo continues with a backslash.
my @joined;
while (defined(my $l = shift @lines)) {
	chomp $l;
	while ($l =~ /\\\s*$/ && ($l =~ tr/\x27//) % 2 == 1 && @lines) {
		$l =~ s/\\\s*$//;
		(my $next = shift @lines) =~ s/^\s*#?\s*//;
		chomp $next;
		$l .= $next;
	}
	push @joined, $l;
}

# Every hist: not part of a longer word (enable_hist:, ...): up to the
# closing quote, or " [active]"-like state, or the end of the line.
my %seen;
my @triggers;
for my $l (@joined) {
	while ($l =~ /(?<![\w])hist:([^\x27\n]*)/g) {
		my $t = $1;
		$t =~ s/\s+\[(active|paused)\].*//;
		$t =~ s/\s+$//;
		next if $t eq "" || $seen{$t}++;
		push @triggers, $t;
	}
}

# A few more for the events of the target, which histogram.rst lacks.
for my $t ("keys=a,b:vals=c", "keys=s,d:vals=a.hex,b",
	"keys=ip.sym-offset:vals=hitcount.percent,a.graph:sort=a.descending,hitcount",
	"keys=c.log2:vals=b:sort=c", "keys=b.buckets=10,common_pid.execname:vals=a:nohitcount",
	"keys=comm,pid:vals=prio:sort=pid.descending:size=128",
	"keys=target_cpu,cpu,common_timestamp.usecs:vals=prio:clock=mono",
	"keys=r,p:vals=w,sc", "keys=stack.stacktrace,odd:vals=sc",
	"keys=common_stacktrace:vals=hitcount:size=128") {
	push @triggers, $t unless $seen{$t}++;
}

# One record set per event, as the target lays them out: length byte,
# record (common fields first: type, flags, preempt count, pid).
sub common { pack("S C C l", 42, 1, 0, 1234) }
my @recs = (
	# rhist_test:rhist_sample: a, b, c, s[16], d (__data_loc), ip, then d
	sub { my ($i) = @_;
		common() . pack("Q L l a16 L x4 Q", 1 << $i, 100 * $i, -$i, "sample$i",
			(6 << 16) | 56, 0xffffffff81000000 + $i) . "dyn$i\0\0" },
	# sched:sched_waking: comm[16], pid, prio, target_cpu
	sub { my ($i) = @_; common() . pack("a16 l l l", "task$i", 100 + $i, 120, $i % 2) },
	# raw_syscalls:sys_enter: id, args[6]
	sub { my ($i) = @_; common() . pack("q Q6", $i * 3, 1, 2, 3, 4, 5, 6) },
	# kmem:kmalloc: call_site, ptr, bytes_req, bytes_alloc, gfp_flags, node
	sub { my ($i) = @_;
		common() . pack("Q Q Q Q L l", 0xffffffff81000000 + 16 * $i,
			0xffff888000000000 + 64 * $i, 8 << $i, 16 << $i, 0xcc0, -1) },
	# rhist_test:rhist_exotic: r (__rel_loc), p, comm[16], cpu, odd[3],
	# stack (__data_loc), w, sc, then r and the stack
	sub { my ($i) = @_;
		common() . pack("L x4 Q a16 l a3 x L S c x", (4 << 16) | 44,
			0xffff888000001000, "comm$i", $i, "abc", (24 << 16) | 60,
			65535 - $i, -$i) . "rel$i" . pack("Q Q Q", 2, 0xffffffff81000010,
			0xffffffff81000020) },
);

my $n = 0;
for my $t (@triggers) {
	for my $ev (0 .. $#recs) {
		my $data = chr($ev) . $t . "\0";
		for my $i (1 .. 3) {
			my $r = $recs[$ev]->($i);
			$data .= chr(length($r)) . $r;
		}
		# and one cut short
		my $r = $recs[$ev]->(4);
		$data .= chr(length($r)) . substr($r, 0, 20);
		my $name = sprintf("%s/hist-%03d-%d", $out, $n, $ev);
		open(my $fh, ">:raw", $name) or die "$name: $!";
		print $fh $data;
		close $fh;
	}
	$n++;
}
print STDERR "seed.sh: $n triggers, ", $n * @recs, " inputs in $out\n";
' "$doc" "$out"
