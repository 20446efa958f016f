/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Force-included (-include) before kernel/trace/tracing_map.c: the bits of
 * the kernel's environment it relies on, in userspace terms.  Atomics are
 * GCC __atomic builtins, with the orderings the kernel API documents.
 */
#ifndef CMAP_SHIM_KERNEL_H
#define CMAP_SHIM_KERNEL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int8_t s8;
typedef int16_t s16;
typedef int32_t s32;
typedef int64_t s64;

#define likely(x) __builtin_expect(!!(x), 1)
#define unlikely(x) __builtin_expect(!!(x), 0)

#define PAGE_SIZE 4096UL

/* Error pointers: the top 4095 addresses. */
#define MAX_ERRNO 4095
#define ERR_PTR(err) ((void *)(long)(err))
#define PTR_ERR(ptr) ((long)(ptr))
#define IS_ERR(ptr) ((unsigned long)(ptr) >= (unsigned long)-MAX_ERRNO)

/* Find last set bit, 1-based; 0 for 0. */
static inline int fls(unsigned int x)
{
	return x ? 32 - __builtin_clz(x) : 0;
}

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	return n <= 1 ? 1 : 1UL << (64 - __builtin_clzl(n - 1));
}

static inline uint32_t rol32(uint32_t w, unsigned int s)
{
	return (w << (s & 31)) | (w >> ((-s) & 31));
}

#define WARN_ONCE(cond, ...)						\
	({								\
		static bool __warned;					\
		bool __c = !!(cond);					\
		if (__c && !__warned) {					\
			__warned = true;				\
			fprintf(stderr, __VA_ARGS__);			\
		}							\
		__c;							\
	})

/* Plain accesses the compiler must not tear, merge or elide. */
#define READ_ONCE(x) (*(const volatile __typeof__(x) *)&(x))
#define WRITE_ONCE(x, v) (*(volatile __typeof__(x) *)&(x) = (v))

#define barrier() __asm__ __volatile__("" ::: "memory")
#define smp_wmb() __atomic_thread_fence(__ATOMIC_RELEASE)
#define smp_rmb() __atomic_thread_fence(__ATOMIC_ACQUIRE)
#define smp_mb() __atomic_thread_fence(__ATOMIC_SEQ_CST)

/* Value-returning read-modify-writes are fully ordered, the others not. */
#define cmpxchg(ptr, old, new)						\
	({								\
		__typeof__(*(ptr)) __old = (old);			\
		__atomic_compare_exchange_n((ptr), &__old, (new), false, \
					    __ATOMIC_SEQ_CST,		\
					    __ATOMIC_SEQ_CST);		\
		__old;							\
	})

typedef struct {
	int counter;
} atomic_t;

typedef struct {
	s64 counter;
} atomic64_t;

static inline int atomic_read(const atomic_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic_set(atomic_t *v, int i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline int atomic_inc_return(atomic_t *v)
{
	return __atomic_add_fetch(&v->counter, 1, __ATOMIC_SEQ_CST);
}

/* Adds a to v unless v is u; returns the old value. */
static inline int atomic_fetch_add_unless(atomic_t *v, int a, int u)
{
	int c = atomic_read(v);

	do {
		if (unlikely(c == u))
			break;
	} while (!__atomic_compare_exchange_n(&v->counter, &c, c + a, false,
					      __ATOMIC_SEQ_CST,
					      __ATOMIC_RELAXED));
	return c;
}

static inline s64 atomic64_read(const atomic64_t *v)
{
	return __atomic_load_n(&v->counter, __ATOMIC_RELAXED);
}

static inline void atomic64_set(atomic64_t *v, s64 i)
{
	__atomic_store_n(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic64_add(s64 i, atomic64_t *v)
{
	__atomic_fetch_add(&v->counter, i, __ATOMIC_RELAXED);
}

static inline void atomic64_inc(atomic64_t *v)
{
	atomic64_add(1, v);
}

#endif /* CMAP_SHIM_KERNEL_H */
