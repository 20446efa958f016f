// SPDX-License-Identifier: GPL-2.0
/*
 * A tiny API over the kernel's tracing_map for the benchmark: a map of
 * u64 keys and n_sums sums, updated the way event_hist_trigger() does.
 * Compiled apart from tracing_map.c, so tracing_map_insert() is a real
 * call, as it is from trace_events_hist.c.
 */
#include <linux/jhash.h>

#include "tracing_map.h"

struct tracing_map *cmap_create(unsigned int bits, unsigned int key_size,
				unsigned int n_sums)
{
	struct tracing_map *map;
	unsigned int i;

	map = tracing_map_create(bits, key_size, NULL, NULL);
	if (IS_ERR(map))
		return NULL;
	/* Sums first, then the key: the order hist triggers add fields. */
	for (i = 0; i < n_sums; i++)
		if (tracing_map_add_sum_field(map) < 0)
			goto fail;
	if (tracing_map_add_key_field(map, 0,
				      tracing_map_cmp_num(key_size, 0)) < 0)
		goto fail;
	if (tracing_map_init(map))
		goto fail;
	return map;
fail:
	tracing_map_destroy(map);
	return NULL;
}

void cmap_destroy(struct tracing_map *map)
{
	tracing_map_destroy(map);
}

/* Sum 0 is the hitcount; sum i > 0 gets i * 3, like the Rust bench. */
static inline void cmap_update_elt(struct tracing_map_elt *elt,
				   unsigned int n_sums)
{
	unsigned int i;

	tracing_map_update_sum(elt, 0, 1);
	for (i = 1; i < n_sums; i++)
		tracing_map_update_sum(elt, i, (u64)i * 3);
}

static inline bool cmap_update_one(struct tracing_map *map, void *key,
				   unsigned int n_sums)
{
	struct tracing_map_elt *elt = tracing_map_insert(map, key);

	if (!elt)
		return false;
	cmap_update_elt(elt, n_sums);
	return true;
}

/* One update; false when the key was dropped. */
bool cmap_update(struct tracing_map *map, const void *key,
		 unsigned int n_sums)
{
	return cmap_update_one(map, (void *)key, n_sums);
}

/*
 * iters updates with keys[i & mask] (u64 keys), the loop the Rust side
 * runs too; returns the number of drops.
 */
u64 cmap_run(struct tracing_map *map, const u64 *keys, size_t mask,
	     u64 iters, unsigned int n_sums)
{
	u64 i, drops = 0;

	for (i = 0; i < iters; i++)
		drops += !cmap_update_one(map, (void *)&keys[i & mask], n_sums);
	return drops;
}

/*
 * cmap_run() cut after a stage, for instruction counts per stage: 1 only
 * reads each key (the loop), 2 hashes it (jhash(), as
 * tracing_map_insert() does), 3 finds or inserts it, 4 also adds to its
 * sums. Returns something of each
 * iteration, so that none is optimised away.
 */
u64 cmap_stages(struct tracing_map *map, const u64 *keys, size_t mask,
		u64 iters, unsigned int n_sums, unsigned int stage)
{
	u64 i, out = 0;

	for (i = 0; i < iters; i++) {
		void *key = (void *)&keys[i & mask];
		struct tracing_map_elt *elt;

		if (stage <= 1) {
			out += keys[i & mask];
			continue;
		}
		if (stage == 2) {
			out += jhash(key, map->key_size, 0);
			continue;
		}
		elt = tracing_map_insert(map, key);
		if (!elt || stage == 3) {
			out += (unsigned long)elt;
			continue;
		}
		cmap_update_elt(elt, n_sums);
	}
	return out;
}

u64 cmap_read_sum(struct tracing_map *map, const void *key, unsigned int i)
{
	struct tracing_map_elt *elt = tracing_map_lookup(map, (void *)key);

	return elt ? tracing_map_read_sum(elt, i) : 0;
}

u64 cmap_hits(struct tracing_map *map)
{
	return atomic64_read(&map->hits);
}

u64 cmap_drops(struct tracing_map *map)
{
	return atomic64_read(&map->drops);
}

u32 cmap_jhash(const void *key, u32 len, u32 initval)
{
	return jhash(key, len, initval);
}
