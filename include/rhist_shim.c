// SPDX-License-Identifier: GPL-2.0
/*
 * Wrappers for kernel inline functions used by the Rust side of rhist.
 * See rhist_shim.h.
 */
#include <linux/atomic.h>
#include <linux/cpuhotplug.h>
#include <linux/cpumask.h>
#include <linux/hardirq.h>
#include <linux/irq_work.h>
#include <linux/kthread.h>
#include <linux/module.h>
#include <linux/rculist.h>
#include <linux/sched.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <linux/trace_events.h>
#include <linux/vmalloc.h>
#include <linux/wait.h>

#include "../../kernel/trace/trace.h"
#include "../../kernel/trace/trace_synth.h"
#include "rhist_shim.h"

struct trace_event_file *rhist_event_file_file(struct file *filp)
{
	return event_file_file(filp);
}

const char *rhist_trace_event_name(struct trace_event_call *call)
{
	return trace_event_name(call);
}

/*
 * Keep an event, and so its fields and names, while anything of rhist
 * refers to it: the module that defines it stays loaded, and a dynamic
 * event (kprobe, eprobe, synthetic) cannot be deleted. A named
 * histogram outlives the trigger that made it, so an attached trigger
 * keeping its own event enabled is not enough.
 */
bool rhist_pin_event(struct trace_event_call *call)
{
	return trace_event_try_get_ref(call);
}

void rhist_unpin_event(struct trace_event_call *call)
{
	trace_event_put_ref(call);
}

void rhist_list_add_rcu(struct list_head *new, struct list_head *head)
{
	list_add_rcu(new, head);
}

void rhist_list_add_tail_rcu(struct list_head *new, struct list_head *head)
{
	list_add_tail_rcu(new, head);
}

void rhist_list_del_rcu(struct list_head *entry)
{
	list_del_rcu(entry);
}

void rhist_lockdep_assert_event_mutex_held(void)
{
	lockdep_assert_held(&event_mutex);
}

void rhist_tracepoint_synchronize_unregister(void)
{
	tracepoint_synchronize_unregister();
}

struct list_head *rhist_trace_get_fields(struct trace_event_call *call)
{
	return trace_get_fields(call);
}

/* Called from the probe path, where preemption is disabled. */
unsigned int rhist_smp_processor_id(void)
{
	return raw_smp_processor_id();
}

/*
 * Where a task's name is in its task_struct, as C lays it out: the event
 * path reads current->comm there (rust/event.rs). The bindings' layout of
 * task_struct is not C's everywhere (their comm is 16 bytes early in the
 * test kernel), so Rust takes the offset from here.
 */
const size_t rhist_task_comm_at = offsetof(struct task_struct, comm);

void rhist_current_comm(char comm[16])
{
	BUILD_BUG_ON(TASK_COMM_LEN != 16);
	memcpy(comm, current->comm, TASK_COMM_LEN);
}

int rhist_current_pid(void)
{
	return current->pid;
}

/*
 * How many CPUs per-CPU sums are kept for (rust/event.rs), and which of
 * them the KUnit suite's kthreads run on (rust/kunit.rs).
 */

unsigned int rhist_nr_cpu_ids(void)
{
	return nr_cpu_ids;
}

/* False for a number not below nr_cpu_ids, which has no bit in the mask. */
bool rhist_cpu_online(unsigned int cpu)
{
	return cpu < nr_cpu_ids && cpu_online(cpu);
}

void rhist_cond_resched(void)
{
	cond_resched();
}

/*
 * The barriers rust/kernel_ext/barrier.rs does not write itself; the
 * pairings are argued where they are used (rust/poll.rs).
 */
void rhist_smp_mb(void)
{
	/* Whatever the caller pairs it with. */
	smp_mb();
}

void rhist_smp_mb__after_atomic(void)
{
	/* After the caller's atomic; whatever the caller pairs it with. */
	smp_mb__after_atomic();
}

/*
 * A histogram's map, of a size the user picked: if the machine cannot
 * give it, the write fails with ENOMEM, with no allocation report and
 * without the OOM killer, which would kill some other task (vmalloc()'s
 * pages are charged to none). __vmalloc() is a macro (alloc_hooks()).
 */
void *rhist_map_alloc(size_t size)
{
	return __vmalloc(size, GFP_KERNEL | __GFP_NOWARN | __GFP_RETRY_MAYFAIL);
}

void rhist_map_free(void *addr)
{
	vfree(addr);
}

/* The probe a synthetic event's tracepoint calls (trace_event_raw_event_synth). */
typedef void (*rhist_synth_probe_t)(void *data, u64 *var_ref_vals,
				    unsigned int *var_ref_idx);

/*
 * Emit @event as hist's onmatch().trace() does: field i of the event takes
 * var_ref_vals[var_ref_idx[i]]. The tracepoint's static key and probe list
 * are macros and inline functions, hence this wrapper. Called on the event
 * path, with preemption disabled, and @event held by its reference count.
 */
void rhist_trace_synth(struct synth_event *event, u64 *var_ref_vals,
		       unsigned int *var_ref_idx)
{
	struct tracepoint *tp = event->tp;
	struct tracepoint_func *probe;

	if (!atomic_read(&tp->key.enabled) ||
	    !cpu_online(raw_smp_processor_id()))
		return;

	probe = rcu_dereference_sched(tp->funcs);
	if (!probe)
		return;

	for (; probe->func; probe++)
		((rhist_synth_probe_t)probe->func)(probe->data, var_ref_vals,
						   var_ref_idx);
}

/*
 * How deeply rhist's event path is nested on this CPU: an action that
 * emits a synthetic event runs that event's triggers inside its own.
 * hist stops at four (its per-CPU hist_pad), which also bounds the
 * stack a chain of synthetic events can take; so does rhist.
 */
#define RHIST_NESTING_MAX 4
static DEFINE_PER_CPU(int, rhist_nesting);

/* Called on the event path, with preemption disabled. */
bool rhist_nesting_enter(void)
{
	if (this_cpu_read(rhist_nesting) >= RHIST_NESTING_MAX)
		return false;
	this_cpu_inc(rhist_nesting);
	return true;
}

void rhist_nesting_exit(void)
{
	this_cpu_dec(rhist_nesting);
}

/*
 * poll() on the per-event hist file, as hist's: pollers wait on a queue
 * that the event path wakes through irq_work (rust/poll.rs), since it may
 * run in any context. The queue is a macro's static, hence here.
 */
static DECLARE_WAIT_QUEUE_HEAD(rhist_poll_wq);

void rhist_poll_wait(struct file *filp, struct poll_table_struct *wait)
{
	poll_wait(filp, &rhist_poll_wq, wait);
}

bool rhist_poll_has_sleeper(void)
{
	/* Its smp_mb() pairs with a poller's after poll_wait() (rust/poll.rs). */
	return wq_has_sleeper(&rhist_poll_wq);
}

void rhist_poll_wake_all(void)
{
	wake_up_all(&rhist_poll_wq);
}

/*
 * tracing_snapshot_cond(), for the snapshot() action. The swap wakes the
 * old buffer's readers through irq_work on this CPU (update_max_tr());
 * on a CPU going offline, past its CPU_DYING flush, that work would never
 * run, and the instance's removal would spin for ever in irq_work_sync()
 * (hist hangs so: a snapshot() on a kprobe of sched_cpu_dying). There it
 * is run at once, as smpcfd_dying_cpu() runs what came before, in the
 * same context (interrupts off). In NMI no snapshot is taken, nor work
 * queued.
 */
void rhist_snapshot_cond(struct trace_array *tr, void *cond_data)
{
	tracing_snapshot_cond(tr, cond_data);
	if (unlikely(!cpu_online(raw_smp_processor_id())) && irqs_disabled() &&
	    !in_nmi())
		irq_work_run();
}

bool rhist_in_nmi(void)
{
	return in_nmi();
}

unsigned int rhist_any_online_cpu_but(unsigned int cpu)
{
	return cpumask_any_but(cpu_online_mask, cpu);
}

/*
 * The Rust views of struct irq_work and struct kthread_work
 * (rust/kernel_ext/) assert the same layout: statics of theirs are used
 * by C's functions.
 */
static_assert(sizeof(struct irq_work) == 32);
static_assert(offsetof(struct irq_work, func) == 16);
static_assert(sizeof(struct kthread_work) == 40);
static_assert(offsetof(struct kthread_work, func) == 16);

void rhist_kthread_worker_set_fifo_low(struct kthread_worker *worker)
{
	sched_set_fifo_low(worker->task);
}

/*
 * The work the event path asks for where it cannot be queued (from NMI
 * on a CPU that is not online, rust/event_work.rs) is asked again once
 * that CPU is dead or up, in process context on an online CPU
 * (rhist_ask_missed(), rust/rhist_main.rs).
 */

/* On the control CPU, once @cpu is dead: after its CPU_DYING steps. */
static int rhist_cpu_dead(unsigned int cpu)
{
	rhist_ask_missed();
	return 0;
}

/* On @cpu, once it is online again: after its CPU_STARTING steps. */
static int rhist_cpu_up(unsigned int cpu)
{
	rhist_ask_missed();
	return 0;
}

static int rhist_cpuhp_dead = -1, rhist_cpuhp_up = -1;

int rhist_cpuhp_init(void)
{
	int ret;

	ret = cpuhp_setup_state_nocalls(CPUHP_BP_PREPARE_DYN, "trace/rhist:dead",
					NULL, rhist_cpu_dead);
	if (ret < 0)
		return ret;
	rhist_cpuhp_dead = ret;
	ret = cpuhp_setup_state_nocalls(CPUHP_AP_ONLINE_DYN, "trace/rhist:online",
					rhist_cpu_up, NULL);
	if (ret < 0) {
		cpuhp_remove_state_nocalls(rhist_cpuhp_dead);
		return ret;
	}
	rhist_cpuhp_up = ret;
	return 0;
}

void rhist_cpuhp_exit(void)
{
	cpuhp_remove_state_nocalls(rhist_cpuhp_up);
	cpuhp_remove_state_nocalls(rhist_cpuhp_dead);
}

/*
 * The grow's wait for the probes that may still use the old generation:
 * tracepoint_synchronize_unregister()'s two waits, expedited, since the
 * new generation fills meanwhile (at most five grows per histogram).
 */
void rhist_grow_synchronize(void)
{
	synchronize_srcu_expedited(&tracepoint_srcu);
	synchronize_rcu_expedited();
}
