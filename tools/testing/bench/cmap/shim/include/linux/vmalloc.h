/* SPDX-License-Identifier: GPL-2.0 */
#ifndef CMAP_SHIM_VMALLOC_H
#define CMAP_SHIM_VMALLOC_H

#include <stdlib.h>

static inline void *vmalloc(size_t size)
{
	return malloc(size ? size : 1);
}

static inline void *vzalloc(size_t size)
{
	return calloc(1, size ? size : 1);
}

static inline void vfree(const void *p)
{
	free((void *)p);
}

#endif /* CMAP_SHIM_VMALLOC_H */
