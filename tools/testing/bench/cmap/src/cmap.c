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
static inline bool cmap_update_one(struct tracing_map *map, void *key,
				   unsigned int n_sums)
{
	struct tracing_map_elt *elt = tracing_map_insert(map, key);
	unsigned int i;

	if (!elt)
		return false;
	tracing_map_update_sum(elt, 0, 1);
	for (i = 1; i < n_sums; i++)
		tracing_map_update_sum(elt, i, (u64)i * 3);
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
