// SPDX-License-Identifier: GPL-2.0
/*
 * Widens the window of a one-time write so that a racing reader shows.
 *
 * A data breakpoint on the 8 bytes at @addr + @offset (read or write, on
 * every CPU)
 * stops the first writer that makes them nonzero for @stall_ms, right
 * after its store. Any access to those bytes from another CPU during the
 * stall is a reader that does not wait for the writer: it is counted in
 * @racing_reads and its code address is logged.
 *
 * The extra-file test points it at a slot of event_extra_names[], which
 * trace_event_add_extra_file() fills under its own lock while eventfs
 * looks names up without that lock.
 */
#include <linux/atomic.h>
#include <linux/delay.h>
#include <linux/hw_breakpoint.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/smp.h>

static unsigned long addr;
module_param(addr, ulong, 0400);
MODULE_PARM_DESC(addr, "Kernel address of an object (a symbol from /proc/kallsyms)");

static ulong offset;
module_param(offset, ulong, 0400);
MODULE_PARM_DESC(offset, "Offset in it of the 8 bytes to watch (8-byte aligned)");

static uint stall_ms = 300;
module_param(stall_ms, uint, 0400);
MODULE_PARM_DESC(stall_ms, "How long the first writer is stopped");

/* Reads an atomic_t counter given as the parameter's argument. */
static int counter_get(char *buf, const struct kernel_param *kp)
{
	return sprintf(buf, "%d\n", atomic_read((atomic_t *)kp->arg));
}

static const struct kernel_param_ops counter_ops = {
	.get = counter_get,
};

static atomic_t racing_reads = ATOMIC_INIT(0);
module_param_cb(racing_reads, &counter_ops, &racing_reads, 0444);
MODULE_PARM_DESC(racing_reads, "Accesses from other CPUs while a writer was stopped");

static atomic_t stalls = ATOMIC_INIT(0);
module_param_cb(stalls, &counter_ops, &stalls, 0444);
MODULE_PARM_DESC(stalls, "Writers stopped (0 or 1)");

static struct perf_event * __percpu *watch;
static atomic_t armed = ATOMIC_INIT(1);
/* The CPU of the stopped writer, or -1 */
static atomic_t writer_cpu = ATOMIC_INIT(-1);

static void watch_hit(struct perf_event *bp, struct perf_sample_data *data,
		      struct pt_regs *regs)
{
	int cpu = smp_processor_id();
	int writer = atomic_read(&writer_cpu);

	if (writer >= 0 && writer != cpu) {
		if (atomic_inc_return(&racing_reads) == 1)
			pr_info("rhist_test_race: %pS read the bytes while a writer was stopped\n",
				(void *)instruction_pointer(regs));
		return;
	}
	/* The trap follows the access: nonzero bytes mean a store just landed */
	if (!READ_ONCE(*(unsigned long *)(addr + offset)) || !atomic_xchg(&armed, 0))
		return;

	atomic_set(&writer_cpu, cpu);
	atomic_inc(&stalls);
	mdelay(stall_ms);
	atomic_set(&writer_cpu, -1);
}

static int __init race_init(void)
{
	struct perf_event_attr attr;

	if (!addr || !IS_ALIGNED(addr + offset, sizeof(unsigned long)))
		return -EINVAL;

	hw_breakpoint_init(&attr);
	attr.bp_addr = addr + offset;
	attr.bp_len = HW_BREAKPOINT_LEN_8;
	attr.bp_type = HW_BREAKPOINT_W | HW_BREAKPOINT_R;
	watch = register_wide_hw_breakpoint(&attr, watch_hit, NULL);
	if (IS_ERR((void __force *)watch))
		return PTR_ERR((void __force *)watch);
	return 0;
}

static void __exit race_exit(void)
{
	unregister_wide_hw_breakpoint(watch);
}

module_init(race_init);
module_exit(race_exit);
MODULE_DESCRIPTION("rhist tests: stop a writer to expose unlocked readers");
MODULE_LICENSE("GPL");
