// SPDX-License-Identifier: GPL-2.0
/*
 * Deterministic test events for rhist.
 *
 * Fires rhist_test:rhist_sample on demand from debugfs:
 *
 *   /sys/kernel/debug/rhist_test/fire     (0200)
 *	"count=N seed=S keys=K [cpu=all] [event=other] [irqoff]", words in any
 *	order, all optional; defaults count=1 seed=1 keys=16.
 *	N <= 100000000, 1 <= K <= 2^32-1, S is any u64; numbers are
 *	decimal.  Unknown words or bad numbers give -EINVAL.  cpu=all runs
 *	the loop on every online CPU at once, CPU n using seed S + n.
 *	event=other fires rhist_test:rhist_other (a = key, b = lo32(r1))
 *	instead of rhist_sample.  irqoff fires each event with local
 *	interrupts off: with the other CPUs offline, the triggers of one
 *	such event run with no other event between them (the real-event
 *	suite starts and stops hist and rhist together that way).
 *   /sys/kernel/debug/rhist_test/warn     (0200)
 *	Any write WARNs: the VM runner's tests use it to check that a
 *	kernel warning fails a run.
 * It also registers the trigger command "rhist_noop", which does nothing:
 * benchmarks attach it to measure what the trigger framework itself costs.
 *
 *   /sys/kernel/debug/rhist_test/now_ns   (0400)
 *	ktime_get_ns() when read: a clock for timing things from scripts.
 *   /sys/kernel/debug/rhist_test/last_ns  (0400)
 *	Loop time of the last fire in ns (slowest CPU for cpu=all), not
 *	counting time given away in cond_resched().  A fatal signal to
 *	the writer stops the loops early; the write then fails with -EINTR
 *	and last_ns is left alone.
 *
 * The values come from splitmix64 seeded with S: event i uses outputs
 * 3i, 3i+1 and 3i+2 (r0, r1, r2), so it depends only on (S, i):
 *
 *   key = (lo32(r0) * K) >> 32		in [0, K)
 *   a   = key
 *   s   = "key<key % 65536>"
 *   d   = string number (hi32(r0) * T) >> 32, T = min(K, 65536)
 *   b   = lo32(r1)
 *   c   = (s32)hi32(r1)
 *   ip  = rhist_test_ips[r2 & 7]
 *
 * String number j of d is j in base 26 ('a' = 0, least significant
 * first), padded with digits to 1 + splitmix64_mix(j + GAMMA) % 40 chars,
 * so the T strings are distinct and 1 to 40 chars long.
 */

#include <linux/atomic.h>
#include <linux/completion.h>
#include <linux/cpu.h>
#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kthread.h>
#include <linux/minmax.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/timekeeping.h>
#include <linux/uaccess.h>

#include "trace.h"

#define CREATE_TRACE_POINTS
#include "rhist_test_events.h"

#define RHIST_TEST_MAX_COUNT	100000000ULL
#define RHIST_TEST_TAB_MAX	65536U
#define RHIST_TEST_D_MAX	40
#define RHIST_TEST_BATCH	4096
#define RHIST_TEST_CMD_MAX	256
#define RHIST_TEST_GAMMA	0x9e3779b97f4a7c15ULL

/* Precomputed strings for one string number; one cache line. */
struct rhist_test_str {
	char s[RHIST_TEST_S_LEN];
	char d[48];
};

static_assert(sizeof_field(struct rhist_test_str, d) > RHIST_TEST_D_MAX);

struct rhist_test_args {
	u64 count;
	u64 seed;
	u32 keys;
	bool all;
	bool other;
	bool irqoff;
};

/* State shared by the loops of one fire. */
struct rhist_test_ctx {
	const struct rhist_test_str *tab;
	u64 count;
	u32 keys;
	u32 ntab;
	bool other;
	bool irqoff;
	bool abort;
	/* cpu=all only */
	struct completion start;
	struct completion done;
	atomic_t pending;
};

struct rhist_test_worker {
	struct task_struct *task;
	struct rhist_test_ctx *ctx;
	u64 seed;
	u64 ns;
	int ret;
};

static DEFINE_MUTEX(rhist_test_mutex);
static struct dentry *rhist_test_dir;
static u64 rhist_test_last_ns;

static int rhist_test_run(const struct rhist_test_ctx *ctx, u64 seed,
			  u64 *ns);
static int rhist_test_thread(void *data);
static int rhist_test_fire_all(struct rhist_test_ctx *ctx, u64 seed, u64 *ns);
static ssize_t rhist_test_fire_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos);
static struct rhist_test_str *rhist_test_build(u32 ntab);

/*
 * A function named with 496 characters: with its offset and module name,
 * sprint_symbol() writes more than 512 bytes for it, as it may for a
 * long (Rust-mangled) name.
 */
#define RHIST_TEST_CAT4_(a, b, c, d)	a##b##c##d
#define RHIST_TEST_CAT4(a, b, c, d)	RHIST_TEST_CAT4_(a, b, c, d)
#define RHIST_TEST_PART			rhist_test_a_long_symbol_name__
#define RHIST_TEST_PART4		RHIST_TEST_CAT4(RHIST_TEST_PART, \
					RHIST_TEST_PART, RHIST_TEST_PART, RHIST_TEST_PART)
#define RHIST_TEST_LONG_NAME		RHIST_TEST_CAT4(RHIST_TEST_PART4, \
					RHIST_TEST_PART4, RHIST_TEST_PART4, RHIST_TEST_PART4)

static noinline int RHIST_TEST_LONG_NAME(void)
{
	return 0;
}

/* Candidates for the ip field: module and core kernel text. */
static void *const rhist_test_ips[8] = {
	(void *)rhist_test_run,
	(void *)rhist_test_thread,
	(void *)rhist_test_fire_all,
	(void *)rhist_test_fire_write,
	(void *)RHIST_TEST_LONG_NAME,
	(void *)kfree,
	(void *)ktime_get,
	(void *)kthread_should_stop,
};

/* splitmix64 (Steele, Lea, Flood 2014). */
static inline u64 rhist_test_mix(u64 z)
{
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static inline u64 rhist_test_next(u64 *state)
{
	*state += RHIST_TEST_GAMMA;
	return rhist_test_mix(*state);
}

static void rhist_test_fill(struct rhist_test_str *e, u32 j)
{
	unsigned int len = 1 + rhist_test_mix(j + RHIST_TEST_GAMMA) %
			   RHIST_TEST_D_MAX;
	unsigned int n = 0;
	u32 v = j;

	snprintf(e->s, sizeof(e->s), "key%u", j);

	/* Letters encode j, digits only pad, so the strings are distinct. */
	do {
		e->d[n++] = 'a' + v % 26;
		v /= 26;
	} while (v);
	for (; n < len; n++)
		e->d[n] = '0' + n % 10;
	e->d[n] = '\0';
}

static struct rhist_test_str *rhist_test_build(u32 ntab)
{
	struct rhist_test_str *tab;
	u32 j;

	/* Zeroed, so s and d are NUL padded. */
	tab = kvcalloc(ntab, sizeof(*tab), GFP_KERNEL);
	if (!tab)
		return NULL;
	for (j = 0; j < ntab; j++)
		rhist_test_fill(&tab[j], j);
	return tab;
}

/* Fire ctx->count events; *ns is the loop time without cond_resched(). */
static int rhist_test_run(const struct rhist_test_ctx *ctx, u64 seed,
			  u64 *ns)
{
	const struct rhist_test_str *tab = ctx->tab;
	u64 count = ctx->count;
	u64 keys = ctx->keys;
	u64 ntab = ctx->ntab;
	u64 state = seed;
	unsigned int batch = RHIST_TEST_BATCH;
	u64 paused = 0;
	u64 start, i;

	start = ktime_get_ns();
	for (i = 0; i < count; i++) {
		u64 r0 = rhist_test_next(&state);
		u64 r1 = rhist_test_next(&state);
		u64 r2 = rhist_test_next(&state);
		u32 key = ((r0 & U32_MAX) * keys) >> 32;
		u32 dn = ((r0 >> 32) * ntab) >> 32;
		unsigned long flags = 0;

		if (ctx->irqoff)
			local_irq_save(flags);
		if (ctx->other)
			trace_rhist_other(key, (u32)r1);
		else
			trace_rhist_sample(key, (u32)r1, (s32)(r1 >> 32),
					   tab[key % RHIST_TEST_TAB_MAX].s,
					   tab[dn].d,
					   (unsigned long)rhist_test_ips[r2 & 7]);
		if (ctx->irqoff)
			local_irq_restore(flags);

		if (unlikely(!--batch)) {
			u64 t = ktime_get_ns();

			batch = RHIST_TEST_BATCH;
			cond_resched();
			paused += ktime_get_ns() - t;
			if (READ_ONCE(ctx->abort) ||
			    fatal_signal_pending(current))
				return -EINTR;
		}
	}
	*ns = ktime_get_ns() - start - paused;
	return 0;
}

static int rhist_test_thread(void *data)
{
	struct rhist_test_worker *w = data;
	struct rhist_test_ctx *ctx = w->ctx;

	wait_for_completion(&ctx->start);
	w->ret = rhist_test_run(ctx, w->seed, &w->ns);
	if (atomic_dec_and_test(&ctx->pending))
		complete(&ctx->done);

	/* Exit only via kthread_stop(), so module text outlives us. */
	set_current_state(TASK_INTERRUPTIBLE);
	while (!kthread_should_stop()) {
		schedule();
		set_current_state(TASK_INTERRUPTIBLE);
	}
	__set_current_state(TASK_RUNNING);
	return 0;
}

static int rhist_test_fire_all(struct rhist_test_ctx *ctx, u64 seed, u64 *ns)
{
	struct rhist_test_worker *workers;
	unsigned int cpu;
	int ret = 0;

	workers = kcalloc(nr_cpu_ids, sizeof(*workers), GFP_KERNEL);
	if (!workers)
		return -ENOMEM;

	init_completion(&ctx->start);
	init_completion(&ctx->done);
	atomic_set(&ctx->pending, 0);

	/* Keep the online mask stable until every worker has exited. */
	cpus_read_lock();
	for_each_online_cpu(cpu) {
		struct rhist_test_worker *w = &workers[cpu];
		struct task_struct *t;

		w->ctx = ctx;
		w->seed = seed + cpu;
		t = kthread_create(rhist_test_thread, w, "rhist_test/%u", cpu);
		if (IS_ERR(t)) {
			ret = PTR_ERR(t);
			break;
		}
		kthread_bind(t, cpu);
		w->task = t;
		atomic_inc(&ctx->pending);
	}

	if (ret) {
		/* Never woken, so they exit without running the loop. */
		for_each_online_cpu(cpu) {
			if (workers[cpu].task)
				kthread_stop(workers[cpu].task);
		}
		goto out;
	}

	for_each_online_cpu(cpu)
		wake_up_process(workers[cpu].task);
	complete_all(&ctx->start);

	/* Time out now and then: quiet hung task detector, see signals. */
	while (!wait_for_completion_timeout(&ctx->done, HZ)) {
		if (fatal_signal_pending(current))
			WRITE_ONCE(ctx->abort, true);
	}

	*ns = 0;
	for_each_online_cpu(cpu) {
		kthread_stop(workers[cpu].task);
		if (workers[cpu].ret)
			ret = workers[cpu].ret;
		*ns = max(*ns, workers[cpu].ns);
	}
out:
	cpus_read_unlock();
	kfree(workers);
	return ret;
}

static int rhist_test_fire(const struct rhist_test_args *args)
{
	struct rhist_test_ctx ctx = {
		.count = args->count,
		.keys = args->keys,
		.other = args->other,
		.irqoff = args->irqoff,
		.ntab = min(args->keys, RHIST_TEST_TAB_MAX),
	};
	struct rhist_test_str *tab;
	u64 ns = 0;
	int ret = 0;

	/* Everything but the per-event numbers is ready before timing. */
	tab = rhist_test_build(ctx.ntab);
	if (!tab)
		return -ENOMEM;
	ctx.tab = tab;

	if (args->all)
		ret = rhist_test_fire_all(&ctx, args->seed, &ns);
	else
		ret = rhist_test_run(&ctx, args->seed, &ns);

	if (!ret)
		WRITE_ONCE(rhist_test_last_ns, ns);
	kvfree(tab);
	return ret;
}

static int rhist_test_parse_word(const char *w, struct rhist_test_args *args)
{
	size_t n;

	if (!strcmp(w, "cpu=all")) {
		args->all = true;
		return 0;
	}
	if (!strcmp(w, "event=other")) {
		args->other = true;
		return 0;
	}
	if (!strcmp(w, "irqoff")) {
		args->irqoff = true;
		return 0;
	}
	n = str_has_prefix(w, "count=");
	if (n)
		return kstrtou64(w + n, 10, &args->count);
	n = str_has_prefix(w, "seed=");
	if (n)
		return kstrtou64(w + n, 10, &args->seed);
	n = str_has_prefix(w, "keys=");
	if (n)
		return kstrtou32(w + n, 10, &args->keys);
	return -EINVAL;
}

static int rhist_test_parse(char *buf, struct rhist_test_args *args)
{
	char *w;

	args->count = 1;
	args->seed = 1;
	args->keys = 16;
	args->all = false;
	args->other = false;
	args->irqoff = false;

	while ((w = strsep(&buf, " \t\n")) != NULL) {
		if (!*w)
			continue;
		if (rhist_test_parse_word(w, args))
			return -EINVAL;
	}
	if (args->count > RHIST_TEST_MAX_COUNT || !args->keys)
		return -EINVAL;
	return 0;
}

static ssize_t rhist_test_fire_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	struct rhist_test_args args;
	char *buf;
	int ret;

	if (len > RHIST_TEST_CMD_MAX)
		return -EINVAL;
	buf = memdup_user_nul(ubuf, len);
	if (IS_ERR(buf))
		return PTR_ERR(buf);
	ret = rhist_test_parse(buf, &args);
	kfree(buf);
	if (ret)
		return ret;

	ret = mutex_lock_killable(&rhist_test_mutex);
	if (ret)
		return ret;
	ret = rhist_test_fire(&args);
	mutex_unlock(&rhist_test_mutex);

	return ret ? ret : len;
}

static const struct file_operations rhist_test_fire_fops = {
	.owner = THIS_MODULE,
	.write = rhist_test_fire_write,
	.llseek = noop_llseek,
};

static ssize_t rhist_test_warn_write(struct file *file,
				     const char __user *ubuf, size_t len,
				     loff_t *ppos)
{
	WARN(1, "rhist_test: warning on request\n");
	return len;
}

static const struct file_operations rhist_test_warn_fops = {
	.owner = THIS_MODULE,
	.write = rhist_test_warn_write,
	.llseek = noop_llseek,
};

static int rhist_test_now_get(void *data, u64 *val)
{
	*val = ktime_get_ns();
	return 0;
}
DEFINE_DEBUGFS_ATTRIBUTE(rhist_test_now_fops, rhist_test_now_get, NULL, "%llu\n");

/* The no-op trigger command, for the benchmark's floor. */
struct rhist_noop {
	struct event_trigger_data *data;
	struct trace_event_file *file;
	struct list_head node;
};

static LIST_HEAD(rhist_noops);	/* under event_mutex */

static void rhist_noop_trigger(struct event_trigger_data *data,
			       struct trace_buffer *buffer, void *rec,
			       struct ring_buffer_event *rbe)
{
}

static int rhist_noop_print(struct seq_file *m, struct event_trigger_data *data)
{
	seq_printf(m, "rhist_noop%s\n", data->paused ? " [paused]" : "");
	return 0;
}

static struct rhist_noop *rhist_noop_find(struct trace_event_file *file)
{
	struct rhist_noop *noop;

	list_for_each_entry(noop, &rhist_noops, node)
		if (noop->file == file)
			return noop;
	return NULL;
}

static void rhist_noop_detach(struct rhist_noop *noop)
{
	list_del_rcu(&noop->data->list);
	trace_event_trigger_enable_disable(noop->file, 0);
	update_cond_flag(noop->file);
	list_del(&noop->node);
}

static void rhist_noop_free(struct rhist_noop *noop)
{
	trigger_data_free(noop->data);
	event_file_put(noop->file);
	kfree(noop);
}

static struct event_command rhist_noop_cmd;

static int rhist_noop_parse(struct event_command *cmd_ops,
			    struct trace_event_file *file, char *glob,
			    char *cmd, char *param_and_filter)
{
	struct rhist_noop *noop = rhist_noop_find(file);
	int ret;

	lockdep_assert_held(&event_mutex);
	if (glob[0] == '!') {
		if (noop) {
			rhist_noop_detach(noop);
			rhist_noop_free(noop);
		}
		return 0;
	}
	if (noop)
		return -EEXIST;

	noop = kzalloc(sizeof(*noop), GFP_KERNEL);
	if (!noop)
		return -ENOMEM;
	noop->data = trigger_data_alloc(cmd_ops, cmd, NULL, NULL);
	if (!noop->data) {
		kfree(noop);
		return -ENOMEM;
	}
	noop->data->ref = 1;
	noop->file = file;
	event_file_get(file);
	list_add_tail_rcu(&noop->data->list, &file->triggers);
	update_cond_flag(file);
	ret = trace_event_trigger_enable_disable(file, 1);
	if (ret < 0) {
		list_del_rcu(&noop->data->list);
		update_cond_flag(file);
		rhist_noop_free(noop);
		return ret;
	}
	list_add(&noop->node, &rhist_noops);
	return 0;
}

/* Called by the tracing core when it clears an instance's triggers. */
static void rhist_noop_data_free(struct event_trigger_data *data)
{
	struct rhist_noop *noop;

	list_for_each_entry(noop, &rhist_noops, node) {
		if (noop->data == data) {
			list_del(&noop->node);
			rhist_noop_free(noop);
			return;
		}
	}
}

static struct event_command rhist_noop_cmd = {
	.name		= "rhist_noop",
	.trigger_type	= ETT_NONE,
	.flags		= EVENT_CMD_FL_NEEDS_REC,
	.parse		= rhist_noop_parse,
	.trigger	= rhist_noop_trigger,
	.free		= rhist_noop_data_free,
	.print		= rhist_noop_print,
};

static void rhist_noop_unregister(void)
{
	struct rhist_noop *noop, *tmp;
	LIST_HEAD(gone);

	unregister_event_command(&rhist_noop_cmd);
	mutex_lock(&event_mutex);
	list_for_each_entry_safe(noop, tmp, &rhist_noops, node) {
		rhist_noop_detach(noop);
		list_add(&noop->node, &gone);
	}
	mutex_unlock(&event_mutex);
	list_for_each_entry_safe(noop, tmp, &gone, node)
		rhist_noop_free(noop);
}

static int __init rhist_test_init(void)
{
	int ret;

	rhist_test_dir = debugfs_create_dir("rhist_test", NULL);
	if (IS_ERR(rhist_test_dir))
		return PTR_ERR(rhist_test_dir);

	debugfs_create_file("fire", 0200, rhist_test_dir, NULL,
			    &rhist_test_fire_fops);
	debugfs_create_file("warn", 0200, rhist_test_dir, NULL,
			    &rhist_test_warn_fops);
	debugfs_create_file_unsafe("now_ns", 0400, rhist_test_dir, NULL,
				   &rhist_test_now_fops);
	debugfs_create_u64("last_ns", 0400, rhist_test_dir,
			   &rhist_test_last_ns);
	ret = register_event_command(&rhist_noop_cmd);
	if (ret)
		debugfs_remove_recursive(rhist_test_dir);
	return ret;
}

static void __exit rhist_test_exit(void)
{
	rhist_noop_unregister();
	debugfs_remove_recursive(rhist_test_dir);
}

module_init(rhist_test_init);
module_exit(rhist_test_exit);

MODULE_DESCRIPTION("Deterministic trace events for testing rhist");
MODULE_LICENSE("GPL");
