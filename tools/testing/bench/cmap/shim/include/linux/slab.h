/* SPDX-License-Identifier: GPL-2.0 */
/* kmalloc family over the C library; GFP flags are ignored. */
#ifndef CMAP_SHIM_SLAB_H
#define CMAP_SHIM_SLAB_H

#include <stdlib.h>

#define GFP_KERNEL 0

static inline void *kzalloc(size_t size, int gfp)
{
	(void)gfp;
	return calloc(1, size ? size : 1);
}

static inline void *kcalloc(size_t n, size_t size, int gfp)
{
	(void)gfp;
	return n && size ? calloc(n, size) : calloc(1, 1);
}

static inline void kfree(const void *p)
{
	free((void *)p);
}

/* One zeroed, page-aligned page. */
static inline unsigned long get_zeroed_page(int gfp)
{
	void *p = aligned_alloc(PAGE_SIZE, PAGE_SIZE);

	(void)gfp;
	if (p)
		memset(p, 0, PAGE_SIZE);
	return (unsigned long)p;
}

static inline void free_page(unsigned long addr)
{
	free((void *)addr);
}

/* a * b, saturated to SIZE_MAX on overflow. */
static inline size_t array_size(size_t a, size_t b)
{
	size_t r;

	return __builtin_mul_overflow(a, b, &r) ? SIZE_MAX : r;
}

#endif /* CMAP_SHIM_SLAB_H */
