/* SPDX-License-Identifier: GPL-2.0 */
/* No leak detector here: the hooks do nothing. */
#ifndef CMAP_SHIM_KMEMLEAK_H
#define CMAP_SHIM_KMEMLEAK_H

#define kmemleak_alloc(ptr, size, min_count, gfp) \
	do { (void)(ptr); } while (0)
#define kmemleak_free(ptr) do { (void)(ptr); } while (0)

#endif /* CMAP_SHIM_KMEMLEAK_H */
