/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Stands in for kernel/trace/trace.h: tracing_map.c needs nothing from it
 * beyond what kernel.h and tracing_map.h give.  build.rs copies
 * tracing_map.[ch] out of the kernel tree so that this one is found.
 */
#ifndef CMAP_SHIM_TRACE_H
#define CMAP_SHIM_TRACE_H
#endif /* CMAP_SHIM_TRACE_H */
