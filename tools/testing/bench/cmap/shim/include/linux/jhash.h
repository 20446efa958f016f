/* SPDX-License-Identifier: GPL-2.0 */
/*
 * jhash() with the kernel's semantics: Bob Jenkins' lookup3 hash of a byte
 * string, 12 bytes a round, the tail read byte-wise little-endian, no final
 * mix for an empty tail.  Written from the algorithm's description.
 */
#ifndef CMAP_SHIM_JHASH_H
#define CMAP_SHIM_JHASH_H

#include <stdint.h>
#include <string.h>

#define JHASH_INITVAL 0xdeadbeefU

_Static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
	       "full words are read in CPU order, tails little-endian");

/* Little-endian 32-bit word from n (<= 4) bytes, zero padded. */
static inline uint32_t jhash_le(const uint8_t *p, unsigned int n)
{
	uint32_t w = 0;

	if (n == 4) {
		memcpy(&w, p, 4);
		return w;
	}
	while (n--)
		w = (w << 8) | p[n];
	return w;
}

/* One mixing step: x -= z; x ^= z <<< s; z += y. */
#define JHASH_MIX_STEP(x, y, z, s) \
	do { x -= z; x ^= rol32(z, s); z += y; } while (0)

/* One finishing step: z ^= y; z -= y <<< s. */
#define JHASH_FINAL_STEP(z, y, s) \
	do { z ^= y; z -= rol32(y, s); } while (0)

#define jhash_mix(a, b, c)						\
	do {								\
		JHASH_MIX_STEP(a, b, c, 4);				\
		JHASH_MIX_STEP(b, c, a, 6);				\
		JHASH_MIX_STEP(c, a, b, 8);				\
		JHASH_MIX_STEP(a, b, c, 16);				\
		JHASH_MIX_STEP(b, c, a, 19);				\
		JHASH_MIX_STEP(c, a, b, 4);				\
	} while (0)

#define jhash_final(a, b, c)						\
	do {								\
		JHASH_FINAL_STEP(c, b, 14);				\
		JHASH_FINAL_STEP(a, c, 11);				\
		JHASH_FINAL_STEP(b, a, 25);				\
		JHASH_FINAL_STEP(c, b, 16);				\
		JHASH_FINAL_STEP(a, c, 4);				\
		JHASH_FINAL_STEP(b, a, 14);				\
		JHASH_FINAL_STEP(c, b, 24);				\
	} while (0)

static inline uint32_t jhash(const void *key, uint32_t length,
			     uint32_t initval)
{
	const uint8_t *k = key;
	uint32_t a, b, c;

	a = b = c = JHASH_INITVAL + length + initval;
	for (; length > 12; length -= 12, k += 12) {
		a += jhash_le(k, 4);
		b += jhash_le(k + 4, 4);
		c += jhash_le(k + 8, 4);
		jhash_mix(a, b, c);
	}
	if (!length)
		return c;
	a += jhash_le(k, length < 4 ? length : 4);
	if (length > 4)
		b += jhash_le(k + 4, length < 8 ? length - 4 : 4);
	if (length > 8)
		c += jhash_le(k + 8, length - 8);
	jhash_final(a, b, c);
	return c;
}

#endif /* CMAP_SHIM_JHASH_H */
