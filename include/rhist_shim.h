/* SPDX-License-Identifier: GPL-2.0 */
/*
 * rhist's C shim: the few kernel inline functions and macros that the
 * Rust module needs and bindgen cannot generate bindings for. Each is a
 * one-line wrapper; the Rust side declares them in rust/shim.rs.
 */
#ifndef _RHIST_SHIM_H
#define _RHIST_SHIM_H

#include <linux/types.h>

struct file;
struct kthread_worker;
struct list_head;
struct poll_table_struct;
struct synth_event;
struct trace_event_call;
struct trace_array;
struct trace_event_file;

struct trace_event_file *rhist_event_file_file(struct file *filp);
const char *rhist_trace_event_name(struct trace_event_call *call);
bool rhist_pin_event(struct trace_event_call *call);
void rhist_unpin_event(struct trace_event_call *call);
void rhist_list_add_rcu(struct list_head *new, struct list_head *head);
void rhist_list_add_tail_rcu(struct list_head *new, struct list_head *head);
void rhist_list_del_rcu(struct list_head *entry);
void rhist_lockdep_assert_event_mutex_held(void);
void rhist_tracepoint_synchronize_unregister(void);
struct list_head *rhist_trace_get_fields(struct trace_event_call *call);
unsigned int rhist_smp_processor_id(void);
extern const size_t rhist_task_comm_at;
void rhist_current_comm(char comm[16]);
int rhist_current_pid(void);
void rhist_trace_synth(struct synth_event *event, u64 *var_ref_vals,
		       unsigned int *var_ref_idx);
bool rhist_nesting_enter(void);
void rhist_nesting_exit(void);
void rhist_poll_wait(struct file *filp, struct poll_table_struct *wait);
bool rhist_poll_has_sleeper(void);
void rhist_poll_wake_all(void);
void rhist_snapshot_cond(struct trace_array *tr, void *cond_data);
bool rhist_in_nmi(void);
unsigned int rhist_any_online_cpu_but(unsigned int cpu);
void rhist_kthread_worker_set_fifo_low(struct kthread_worker *worker);
int rhist_cpuhp_init(void);
void rhist_cpuhp_exit(void);
/* In Rust (rust/rhist_main.rs): asks again for what could not be queued. */
void rhist_ask_missed(void);
void rhist_grow_synchronize(void);
void *rhist_map_alloc(size_t size);
void rhist_map_free(void *addr);

/* For the KUnit suite's kthreads on every online CPU (rust/kunit.rs). */
unsigned int rhist_nr_cpu_ids(void);
bool rhist_cpu_online(unsigned int cpu);
void rhist_cond_resched(void);
void rhist_smp_mb(void);
void rhist_smp_mb__after_atomic(void);

#endif /* _RHIST_SHIM_H */
