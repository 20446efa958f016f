// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's eBPF peer: programs on rhist_test/rhist_sample that do what
 * the bench's hist triggers do (count per key, sums of values), and on
 * the real workloads' events (their SEC() names the tracepoint). Built
 * twice, with PERCPU 0 (BPF_MAP_TYPE_HASH, atomic adds) and 1
 * (BPF_MAP_TYPE_PERCPU_HASH, plain adds). Each program has its own map,
 * m_PROGRAM, or for several triggers its own maps, m_PROGRAM_0, _1, ...;
 * the loader (rhist_bpf.c) loads one program and creates its maps only.
 * When map n is full, the event counts in drops[n], as hist's drops do.
 * A value's first u64 is its hit count (the loader sums it); sums of a
 * signed field add it sign-extended, as hist's do.
 */
#include <linux/types.h>
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>

#if PERCPU
#define MAP_TYPE BPF_MAP_TYPE_PERCPU_HASH
#define ADD(p, v) (*(p) += (v))
#else
#define MAP_TYPE BPF_MAP_TYPE_HASH
#define ADD(p, v) __sync_fetch_and_add(p, v)
#endif

#define S_LEN 16
#define D_LEN 256

/* rhist_test/rhist_sample's record, from its format file. */
struct sample {
	__u16 common_type;
	__u8 common_flags;
	__u8 common_preempt_count;
	__s32 common_pid;
	__u64 a;
	__u32 b;
	__s32 c;
	char s[S_LEN];
	__u32 d_loc;	/* __data_loc: offset in the low, length in the high half */
	__u64 ip;
};

struct count {
	__u64 hits;
};

/* Hit count and one sum, and hit count and two sums. */
struct sums1 {
	__u64 hits;
	__u64 v;
};

struct sums2 {
	__u64 hits;
	__u64 v[2];
};

struct key_abc {
	__u64 a;
	__u32 b;
	__s32 c;
};

/*
 * hist gives each key field 8 bytes (a string field its length rounded
 * up to 8): keys=a,b,c is a 24-byte key, keys=s,a,b a 32-byte one, which
 * the key_24 and key_32 scenarios measure. These keys are those sizes.
 */
struct key_abc24 {
	__u64 a;
	__u64 b;
	__s64 c;
};

struct key_s {
	char s[S_LEN];
};

struct key_sab {
	char s[S_LEN];
	__u64 a;
	__u64 b;
};

struct key_d {
	char d[D_LEN];
};

#define MAP(name, k, v)					\
	struct {						\
		__uint(type, MAP_TYPE);				\
		__uint(max_entries, 2048);			\
		__type(key, k);					\
		__type(value, v);				\
	} name SEC(".maps")

MAP(m_keys_a, __u64, struct count);
MAP(m_keys_abc_vals_ab, struct key_abc, struct sums2);
MAP(m_keys_s, struct key_s, struct count);
MAP(m_keys_d, struct key_d, struct count);
MAP(m_keys_common_type, __u64, struct count);
MAP(m_keys_a_log2_vals_b, __u64, struct sums1);
MAP(m_keys_a_vals_bc, __u64, struct sums2);
MAP(m_keys_a_vals_b, __u64, struct sums1);
MAP(m_keys_abc, struct key_abc24, struct count);
MAP(m_keys_sab, struct key_sab, struct count);
MAP(m_triggers_2_0, __u64, struct sums1);
MAP(m_triggers_2_1, __u64, struct sums1);
MAP(m_triggers_4_0, __u64, struct sums1);
MAP(m_triggers_4_1, __u64, struct sums1);
MAP(m_triggers_4_2, __u64, struct sums2);
MAP(m_triggers_4_3, __u64, struct sums2);

/* Events that found map n full, in entry n. */
#define MAX_MAPS 4
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, MAX_MAPS);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void drop(__u32 n)
{
	__u64 *p = bpf_map_lookup_elem(&drops, &n);

	if (p)
		__sync_fetch_and_add(p, 1);
}

/*
 * The entry of @key in @map, inserted zeroed if missing, or NULL when the
 * map is full (counted in drops[@n]). @zero is a zeroed value of the
 * map's type.
 */
static __always_inline void *entry(void *map, __u32 n, const void *key,
				   const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	/* -EEXIST: another CPU inserted it first. */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		drop(n);
	return v;
}

/* Counts @key in @map, map number @n of the program. */
static __always_inline int count_n(void *map, __u32 n, const void *key)
{
	struct count zero = {}, *v = entry(map, n, key, &zero);

	if (v)
		ADD(&v->hits, 1);
	return 0;
}

static __always_inline int count(void *map, const void *key)
{
	return count_n(map, 0, key);
}

SEC("tracepoint/rhist_test/rhist_sample")
int keys_a(struct sample *ctx)
{
	__u64 key = ctx->a;

	return count(&m_keys_a, &key);
}

SEC("tracepoint/rhist_test/rhist_sample")
int keys_abc_vals_ab(struct sample *ctx)
{
	struct key_abc key = { .a = ctx->a, .b = ctx->b, .c = ctx->c };
	struct sums2 zero = {}, *v = entry(&m_keys_abc_vals_ab, 0, &key, &zero);

	if (v) {
		ADD(&v->hits, 1);
		ADD(&v->v[0], ctx->a);
		ADD(&v->v[1], ctx->b);
	}
	return 0;
}

SEC("tracepoint/rhist_test/rhist_sample")
int keys_s(struct sample *ctx)
{
	struct key_s key;

	__builtin_memcpy(&key, ctx->s, sizeof(key));
	return count(&m_keys_s, &key);
}

/* A per-CPU buffer for the 256-byte key: half the BPF stack otherwise. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct key_d);
} key_d_buf SEC(".maps");

SEC("tracepoint/rhist_test/rhist_sample")
int keys_d(struct sample *ctx)
{
	__u32 zero = 0, off = ctx->d_loc & 0xffff;
	struct key_d *key = bpf_map_lookup_elem(&key_d_buf, &zero);

	if (!key)
		return 0;
	/* Zero-padded, as hist's string keys are. */
	__builtin_memset(key, 0, sizeof(*key));
	bpf_probe_read_kernel_str(key->d, sizeof(key->d), (char *)ctx + off);
	return count(&m_keys_d, key);
}

SEC("tracepoint/rhist_test/rhist_sample")
int keys_common_type(struct sample *ctx)
{
	__u64 key = 0;

	/* The verifier refuses loads from a tracepoint's first 8 bytes. */
	bpf_probe_read_kernel(&key, sizeof(ctx->common_type), ctx);
	return count(&m_keys_common_type, &key);
}

/* keys=KEY:vals=X into map number @n: hit count and the sum of @x. */
static __always_inline void sum1(void *map, __u32 n, __u64 key, __u64 x)
{
	struct sums1 zero = {}, *v = entry(map, n, &key, &zero);

	if (v) {
		ADD(&v->hits, 1);
		ADD(&v->v, x);
	}
}

/* keys=KEY:vals=X,Y into map number @n. */
static __always_inline void sum2(void *map, __u32 n, __u64 key, __u64 x,
				 __u64 y)
{
	struct sums2 zero = {}, *v = entry(map, n, &key, &zero);

	if (v) {
		ADD(&v->hits, 1);
		ADD(&v->v[0], x);
		ADD(&v->v[1], y);
	}
}

/* The last set bit's position, 1 to 64, or 0 for 0 (BPF has no clz). */
static __always_inline __u64 fls64(__u64 x)
{
	__u64 r = 0;
	int sh;

#pragma unroll
	for (sh = 32; sh; sh /= 2) {
		if (x >> sh) {
			r += sh;
			x >>= sh;
		}
	}
	return r + x;
}

/* hist's .log2, order_base_2(): 0 and 1 give 0, else ilog2(n - 1) + 1. */
static __always_inline __u64 log2_bucket(__u64 n)
{
	return n > 1 ? fls64(n - 1) : 0;
}

/* keys=a.log2:vals=b (log2_vals_b). */
SEC("tracepoint/rhist_test/rhist_sample")
int keys_a_log2_vals_b(struct sample *ctx)
{
	sum1(&m_keys_a_log2_vals_b, 0, log2_bucket(ctx->a), ctx->b);
	return 0;
}

/*
 * keys=a:vals=b,c (sort_3vals, whose sort=b.descending orders the read
 * only: the event path is that of keys=a:vals=b,c).
 */
SEC("tracepoint/rhist_test/rhist_sample")
int keys_a_vals_bc(struct sample *ctx)
{
	sum2(&m_keys_a_vals_bc, 0, ctx->a, ctx->b, (__s64)ctx->c);
	return 0;
}

/* keys=a:vals=b (triggers_1). */
SEC("tracepoint/rhist_test/rhist_sample")
int keys_a_vals_b(struct sample *ctx)
{
	sum1(&m_keys_a_vals_b, 0, ctx->a, ctx->b);
	return 0;
}

/* keys=a,b,c (key_24). */
SEC("tracepoint/rhist_test/rhist_sample")
int keys_abc(struct sample *ctx)
{
	struct key_abc24 key = { .a = ctx->a, .b = ctx->b, .c = ctx->c };

	return count(&m_keys_abc, &key);
}

/* keys=s,a,b (key_32). */
SEC("tracepoint/rhist_test/rhist_sample")
int keys_sab(struct sample *ctx)
{
	struct key_sab key = { .a = ctx->a, .b = ctx->b };

	__builtin_memcpy(key.s, ctx->s, sizeof(key.s));
	return count(&m_keys_sab, &key);
}

/*
 * Several triggers on one event: one program updating one map per
 * trigger, in the triggers' order. That is what bpftrace makes of one
 * probe whose statements fill several maps, e.g. for triggers_2
 *
 *   tracepoint:rhist_test:rhist_sample {
 *	@b[args.a] = stats(args.b); @c[args.a] = stats(args.c); }
 *
 * (stats(): a count and a total per key, hist's hitcount and sum), and
 * what a user writing those maps for one event writes. One probe per map
 * would give one program per map, which the event's perf probe runs in
 * turn from its program array on the record it built once: the same
 * map updates, plus a program call and its prologue for each. So the
 * peer takes the cheaper form, and rhist is not measured against a
 * handicapped eBPF.
 */

/* keys=a:vals=b;keys=a:vals=c (triggers_2). */
SEC("tracepoint/rhist_test/rhist_sample")
int triggers_2(struct sample *ctx)
{
	__u64 a = ctx->a, b = ctx->b, c = (__s64)ctx->c;

	sum1(&m_triggers_2_0, 0, a, b);
	sum1(&m_triggers_2_1, 1, a, c);
	return 0;
}

/* keys=a:vals=b;keys=a:vals=c;keys=a:vals=b,c;keys=a:vals=c,b (triggers_4). */
SEC("tracepoint/rhist_test/rhist_sample")
int triggers_4(struct sample *ctx)
{
	__u64 a = ctx->a, b = ctx->b, c = (__s64)ctx->c;

	sum1(&m_triggers_4_0, 0, a, b);
	sum1(&m_triggers_4_1, 1, a, c);
	sum2(&m_triggers_4_2, 2, a, b, c);
	sum2(&m_triggers_4_3, 3, a, c, b);
	return 0;
}

/*
 * The real workloads (guest.sh's real_*): the records of the events they
 * trace, from their format files (6.12). The first 8 bytes, the common
 * fields, are never read (see keys_common_type).
 */
struct sys_enter {
	__u64 common;
	__s64 id;
	__u64 args[6];
};

struct sys_exit {
	__u64 common;
	__s32 nr;
	__s64 ret;
};

struct sched_switch {
	__u64 common;
	char prev_comm[16];
	__s32 prev_pid;
	__s32 prev_prio;
	__s64 prev_state;
	char next_comm[16];
	__s32 next_pid;
	__s32 next_prio;
};

struct sched_waking {
	__u64 common;
	char comm[16];
	__s32 pid;
	__s32 prio;
	__s32 target_cpu;
};

struct key_pid_id {
	__u64 pid;
	__u64 id;
};

MAP(m_sys_enter_pid_id, struct key_pid_id, struct count);
MAP(m_sys_exit_read_ret_log2, __u64, struct count);
MAP(m_sched_switch_next_pid, __u64, struct count);
MAP(m_runqlat_switch, __u64, struct count);

/*
 * keys=common_pid,id on raw_syscalls/sys_enter and keys=ret.log2 on
 * syscalls/sys_exit_read, loaded together: maps 0 and 1.
 */
SEC("tracepoint/raw_syscalls/sys_enter")
int sys_enter_pid_id(struct sys_enter *ctx)
{
	struct key_pid_id key = {
		.pid = (__u32)bpf_get_current_pid_tgid(),
		.id = ctx->id,
	};

	return count_n(&m_sys_enter_pid_id, 0, &key);
}

SEC("tracepoint/syscalls/sys_exit_read")
int sys_exit_read_ret_log2(struct sys_exit *ctx)
{
	__u64 key = log2_bucket(ctx->ret);

	return count_n(&m_sys_exit_read_ret_log2, 1, &key);
}

/* keys=next_pid on sched/sched_switch. */
SEC("tracepoint/sched/sched_switch")
int sched_switch_next_pid(struct sched_switch *ctx)
{
	__u64 key = ctx->next_pid;

	return count(&m_sched_switch_next_pid, &key);
}

/*
 * The wakeup latency (runqlat): the time of each pid's sched_waking,
 * taken at its next sched_switch in, as a log2 histogram of
 * microseconds; the pair of hist triggers and the synthetic event's
 * keys=lat.log2. The start times are a plain hash in both builds: the
 * switch may come on another CPU than the wakeup.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 10240);
	__type(key, __u32);
	__type(value, __u64);
} runqlat_start SEC(".maps");

SEC("tracepoint/sched/sched_waking")
int runqlat_waking(struct sched_waking *ctx)
{
	__u32 pid = ctx->pid;
	__u64 ts = bpf_ktime_get_ns();

	bpf_map_update_elem(&runqlat_start, &pid, &ts, BPF_ANY);
	return 0;
}

SEC("tracepoint/sched/sched_switch")
int runqlat_switch(struct sched_switch *ctx)
{
	__u32 pid = ctx->next_pid;
	__u64 *ts = bpf_map_lookup_elem(&runqlat_start, &pid), key;

	if (!ts)
		return 0;
	key = log2_bucket((bpf_ktime_get_ns() - *ts) / 1000);
	bpf_map_delete_elem(&runqlat_start, &pid);
	return count(&m_runqlat_switch, &key);
}

char LICENSE[] SEC("license") = "GPL";
