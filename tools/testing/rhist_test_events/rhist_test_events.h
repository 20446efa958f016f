/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Trace event fired by rhist_test_events.ko.
 *
 * @s must point to RHIST_TEST_S_LEN readable bytes (NUL padded), so the
 * whole field is copied and holds no stale ring buffer bytes.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rhist_test

#if !defined(_RHIST_TEST_EVENTS_H) || defined(TRACE_HEADER_MULTI_READ)
#define _RHIST_TEST_EVENTS_H

#include <linux/tracepoint.h>

#define RHIST_TEST_S_LEN	16

TRACE_EVENT(rhist_sample,
	    TP_PROTO(u64 a, u32 b, s32 c, const char *s, const char *d,
		     unsigned long ip),
	    TP_ARGS(a, b, c, s, d, ip),
	    TP_STRUCT__entry(__field(u64, a)
			     __field(u32, b)
			     __field(s32, c)
			     __array(char, s, RHIST_TEST_S_LEN)
			     __string(d, d)
			     __field(unsigned long, ip)),
	    TP_fast_assign(__entry->a = a;
			   __entry->b = b;
			   __entry->c = c;
			   memcpy(__entry->s, s, RHIST_TEST_S_LEN);
			   __assign_str(d);
			   __entry->ip = ip;),
	    TP_printk("a=%llu b=%u c=%d s=%s d=%s ip=%pS",
		      (unsigned long long)__entry->a, __entry->b,
		      __entry->c, __entry->s, __get_str(d),
		      (void *)__entry->ip)
);

/*
 * A second event, for triggers that reference the variables of
 * rhist_sample's: the same key, and one number.
 */
TRACE_EVENT(rhist_other,
	    TP_PROTO(u64 a, u32 b),
	    TP_ARGS(a, b),
	    TP_STRUCT__entry(__field(u64, a)
			     __field(u32, b)),
	    TP_fast_assign(__entry->a = a;
			   __entry->b = b;),
	    TP_printk("a=%llu b=%u", (unsigned long long)__entry->a,
		      __entry->b)
);

#endif /* _RHIST_TEST_EVENTS_H */

/* Out of tree: the header is found through -I$(src), see Kbuild. */
#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rhist_test_events
#include <trace/define_trace.h>
