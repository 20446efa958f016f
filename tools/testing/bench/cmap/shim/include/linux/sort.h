/* SPDX-License-Identifier: GPL-2.0 */
/* sort() as qsort(); the benchmark never sorts, but the code must link. */
#ifndef CMAP_SHIM_SORT_H
#define CMAP_SHIM_SORT_H

#include <stdlib.h>

static inline void sort(void *base, size_t num, size_t size,
			int (*cmp)(const void *, const void *),
			void (*swap)(void *, void *, int))
{
	(void)swap;
	qsort(base, num, size, cmp);
}

#endif /* CMAP_SHIM_SORT_H */
