// SPDX-License-Identifier: GPL-2.0
/*
 * The bench's eBPF peer: programs on rhist_test/rhist_sample that do what
 * the bench's hist triggers do (count per key, sums of values). Built
 * twice, with PERCPU 0 (BPF_MAP_TYPE_HASH, atomic adds) and 1
 * (BPF_MAP_TYPE_PERCPU_HASH, plain adds). Each program has its own map;
 * the loader (rhist_bpf.c) loads one program and creates its map only.
 * When a map is full, the event counts in "drops", as hist's drops do.
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

struct sums {
	__u64 hits;
	__u64 a;
	__u64 b;
};

struct key_abc {
	__u64 a;
	__u32 b;
	__s32 c;
};

struct key_s {
	char s[S_LEN];
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
MAP(m_keys_abc_vals_ab, struct key_abc, struct sums);
MAP(m_keys_s, struct key_s, struct count);
MAP(m_keys_d, struct key_d, struct count);
MAP(m_keys_common_type, __u64, struct count);

/* Events that found their map full. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} drops SEC(".maps");

static __always_inline void drop(void)
{
	__u32 zero = 0;
	__u64 *n = bpf_map_lookup_elem(&drops, &zero);

	if (n)
		__sync_fetch_and_add(n, 1);
}

/*
 * The entry of @key in @map, inserted zeroed if missing, or NULL when the
 * map is full. @zero is a zeroed value of the map's type.
 */
static __always_inline void *entry(void *map, const void *key, const void *zero)
{
	void *v = bpf_map_lookup_elem(map, key);

	if (v)
		return v;
	/* -EEXIST: another CPU inserted it first. */
	bpf_map_update_elem(map, key, zero, BPF_NOEXIST);
	v = bpf_map_lookup_elem(map, key);
	if (!v)
		drop();
	return v;
}

static __always_inline int count(void *map, const void *key)
{
	struct count zero = {}, *v = entry(map, key, &zero);

	if (v)
		ADD(&v->hits, 1);
	return 0;
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
	struct sums zero = {}, *v = entry(&m_keys_abc_vals_ab, &key, &zero);

	if (v) {
		ADD(&v->hits, 1);
		ADD(&v->a, ctx->a);
		ADD(&v->b, ctx->b);
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

char LICENSE[] SEC("license") = "GPL";
