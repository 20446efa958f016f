// SPDX-License-Identifier: GPL-2.0
/*
 * hist_client - drive hist triggers the way real tools do: through
 * libtracefs, as trace-cmd and sqlhist do.
 *
 * It runs inside the rhist test guest, statically linked against
 * Debian's libtracefs and libtraceevent. It only talks to tracefs, so
 * it does not care whether the kernel's "hist" trigger command is the
 * built-in one or the one registered by the rhist module.
 *
 *   hist_client hist           create, read and remove a sched_switch hist
 *   hist_client synth [keep]   create the wakeup_lat synthetic event with
 *                              tracefs_sql(); "keep" leaves it enabled
 *   hist_client synth-destroy  remove a wakeup_lat left by "synth keep"
 *   hist_client poll FILE [read] MS
 *                              poll() FILE for POLLIN and POLLPRI for up to
 *                              MS milliseconds, after reading it with
 *                              "read", and print what it returned
 *   hist_client watch FILE     keep FILE open, reading it each time poll()
 *                              says it changed, until killed; prints
 *                              "watch: open" or "watch: <errno name>" and
 *                              closes stdout once the open is done
 *
 * Exit status: 0 on success, 1 on failure, 2 on bad usage.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdnoreturn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <tracefs.h>

#define SYNTH_NAME	"wakeup_lat"
#define SYNTH_SQL	"SELECT start.pid, " \
			"(end.TIMESTAMP_USECS - start.TIMESTAMP_USECS) AS lat " \
			"FROM sched_waking AS start " \
			"JOIN sched_switch AS end ON start.pid = end.next_pid"

static const char * const sched_systems[] = { "sched", NULL };

/* Things to tear down if a step fails half way. */
static struct tracefs_hist *live_hist;
static struct tracefs_synth *live_synth;

static void cleanup(void)
{
	if (live_hist) {
		tracefs_hist_destroy(NULL, live_hist);
		live_hist = NULL;
	}
	if (live_synth) {
		tracefs_synth_destroy(live_synth);
		live_synth = NULL;
	}
}

static void print_error_log(void)
{
	char *last = tracefs_error_last(NULL);

	if (last) {
		fprintf(stderr, "hist_client: error_log: %s\n", last);
		free(last);
	}
}

/* A library or system call failed: report errno and the error_log. */
static noreturn void fail(const char *step)
{
	int err = errno;

	fflush(stdout);
	fprintf(stderr, "hist_client: %s failed: %s\n", step,
		err ? strerror(err) : "unknown error");
	print_error_log();
	cleanup();
	exit(1);
}

/* A check on what the kernel shows failed. */
static noreturn void fail_check(const char *step, const char *why)
{
	fflush(stdout);
	fprintf(stderr, "hist_client: %s failed: %s\n", step, why);
	print_error_log();
	cleanup();
	exit(1);
}

/* Read a file below the tracing directory; "" if it is empty. */
static char *read_tracefs(const char *rel)
{
	const char *dir;
	char *path, *buf = NULL, *nbuf;
	size_t size = 0;
	char chunk[4096];
	ssize_t r;
	int fd;

	errno = 0;
	dir = tracefs_tracing_dir();
	if (!dir)
		return NULL;
	if (asprintf(&path, "%s/%s", dir, rel) < 0)
		return NULL;
	fd = open(path, O_RDONLY);
	free(path);
	if (fd < 0)
		return NULL;
	for (;;) {
		r = read(fd, chunk, sizeof(chunk));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		nbuf = realloc(buf, size + r + 1);
		if (!nbuf) {
			r = -1;
			break;
		}
		buf = nbuf;
		memcpy(buf + size, chunk, r);
		size += r;
	}
	close(fd);
	if (r < 0) {
		free(buf);
		return NULL;
	}
	if (!buf) {
		buf = strdup("");
		if (!buf)
			return NULL;
	}
	buf[size] = '\0';
	return buf;
}

static char *read_event_file(const char *event, const char *file)
{
	char *rel, *buf;

	if (asprintf(&rel, "events/sched/%s/%s", event, file) < 0)
		return NULL;
	buf = read_tracefs(rel);
	free(rel);
	return buf;
}

/* Next line of @buf (modified in place), skipping "#" comments and blanks. */
static char *next_line(char **buf)
{
	char *line, *nl;

	while (**buf) {
		line = *buf;
		nl = strchr(line, '\n');
		if (nl) {
			*nl = '\0';
			*buf = nl + 1;
		} else {
			*buf = line + strlen(line);
		}
		if (line[0] && line[0] != '#')
			return line;
	}
	return NULL;
}

/* Print the active lines of @buf as "<prefix>: <line>"; return their number. */
static int print_lines(const char *prefix, const char *buf)
{
	char *copy, *pos, *line;
	int n = 0;

	copy = strdup(buf);
	if (!copy)
		fail("strdup");
	pos = copy;
	while ((line = next_line(&pos))) {
		printf("%s: %s\n", prefix, line);
		n++;
	}
	free(copy);
	return n;
}

/* Does an active line of @buf contain @needle, and @also unless NULL? */
static bool has_line_with(const char *buf, const char *needle,
			  const char *also)
{
	char *copy, *pos, *line;
	bool found = false;

	copy = strdup(buf);
	if (!copy)
		fail("strdup");
	pos = copy;
	while (!found && (line = next_line(&pos)))
		found = strstr(line, needle) && (!also || strstr(line, also));
	free(copy);
	return found;
}

static char *read_trigger(const char *event)
{
	char *buf;

	buf = read_event_file(event, "trigger");
	if (!buf)
		fail("read trigger");
	return buf;
}

/* Fork children that sleep and wake up a few times, then reap them. */
static void make_wakeups(int children, int loops)
{
	pid_t pids[8];
	int i, j, status;

	if (children > 8)
		children = 8;
	for (i = 0; i < children; i++) {
		errno = 0;
		pids[i] = fork();
		if (pids[i] < 0)
			fail("fork");
		if (pids[i] == 0) {
			for (j = 0; j < loops; j++)
				usleep(1000);
			_exit(0);
		}
	}
	for (j = 0; j < loops; j++)
		usleep(500);
	for (i = 0; i < children; i++) {
		errno = 0;
		if (waitpid(pids[i], &status, 0) < 0)
			fail("waitpid");
		if (!WIFEXITED(status) || WEXITSTATUS(status))
			fail_check("child", "workload child did not exit cleanly");
	}
}

static struct tep_handle *load_sched_events(void)
{
	struct tep_handle *tep;

	errno = 0;
	if (!tracefs_tracing_dir())
		fail("tracefs_tracing_dir");
	errno = 0;
	tep = tracefs_local_events_system(NULL, sched_systems);
	if (!tep)
		fail("tracefs_local_events_system");
	return tep;
}

static int do_hist(void)
{
	struct tracefs_hist *hist;
	struct tep_handle *tep;
	struct trace_seq seq;
	char *buf;

	tep = load_sched_events();

	errno = 0;
	hist = tracefs_hist_alloc(tep, "sched", "sched_switch", "next_pid",
				  TRACEFS_HIST_KEY_NORMAL);
	if (!hist)
		fail("tracefs_hist_alloc");
	errno = 0;
	if (tracefs_hist_add_key(hist, "prev_pid", TRACEFS_HIST_KEY_NORMAL))
		fail("tracefs_hist_add_key");
	errno = 0;
	if (tracefs_hist_add_value(hist, "prev_prio"))
		fail("tracefs_hist_add_value");
	errno = 0;
	if (tracefs_hist_add_sort_key(hist, TRACEFS_HIST_HITCOUNT))
		fail("tracefs_hist_add_sort_key");

	trace_seq_init(&seq);
	errno = 0;
	if (tracefs_hist_echo_cmd(&seq, NULL, hist, TRACEFS_HIST_CMD_START))
		fail("tracefs_hist_echo_cmd");
	trace_seq_terminate(&seq);
	printf("cmd: %s", seq.buffer);
	trace_seq_destroy(&seq);

	errno = 0;
	if (tracefs_hist_start(NULL, hist))
		fail("tracefs_hist_start");
	live_hist = hist;

	buf = read_trigger("sched_switch");
	if (!print_lines("trigger", buf))
		fail_check("trigger check", "trigger file is empty after start");
	if (!has_line_with(buf, "hist:", NULL))
		fail_check("trigger check", "no hist: line in trigger file");
	free(buf);

	make_wakeups(2, 5);

	buf = read_event_file("sched_switch", "hist");
	if (!buf)
		fail("read hist");
	printf("--- hist ---\n%s", buf);
	if (buf[0] && buf[strlen(buf) - 1] != '\n')
		putchar('\n');
	printf("--- end ---\n");
	if (!has_line_with(buf, "next_pid", "hitcount"))
		fail_check("hist check", "hist shows no next_pid/hitcount entry");
	free(buf);

	errno = 0;
	live_hist = NULL;
	if (tracefs_hist_destroy(NULL, hist))
		fail("tracefs_hist_destroy");

	buf = read_trigger("sched_switch");
	if (has_line_with(buf, "hist:", NULL)) {
		print_lines("left", buf);
		fail_check("hist destroy check", "trigger file still has hist:");
	}
	free(buf);

	tracefs_hist_free(hist);
	tep_free(tep);
	printf("hist_client: hist ok\n");
	return 0;
}

/* Is wakeup_lat listed in synthetic_events (or dynamic_events)? */
static bool synth_listed(bool print)
{
	const char *file = "synthetic_events";
	char *buf, *pos, *line;
	bool found = false;

	buf = read_tracefs(file);
	if (!buf && errno == ENOENT) {
		file = "dynamic_events";
		buf = read_tracefs(file);
	}
	if (!buf)
		fail("read synthetic_events");
	pos = buf;
	while ((line = next_line(&pos))) {
		if (print)
			printf("synthetic: %s\n", line);
		if (!strncmp(line, "s:", 2))
			line += 2;
		if (!strncmp(line, "synthetic/", 10))
			line += 10;
		if (!strncmp(line, SYNTH_NAME, strlen(SYNTH_NAME)) &&
		    (line[strlen(SYNTH_NAME)] == ' ' ||
		     line[strlen(SYNTH_NAME)] == '\t'))
			found = true;
	}
	free(buf);
	return found;
}

static bool synth_exists(void)
{
	return synth_listed(false) ||
	       tracefs_event_file_exists(NULL, "synthetic", SYNTH_NAME,
					 "enable");
}

static void print_triggers(void)
{
	char *buf;

	buf = read_trigger("sched_waking");
	print_lines("trigger sched_waking", buf);
	free(buf);
	buf = read_trigger("sched_switch");
	print_lines("trigger sched_switch", buf);
	free(buf);
}

/* Count wakeup_lat events in the trace buffer, -1 if tracing is off. */
static int count_synth_events(void)
{
	char *buf, *p;
	int n = 0;

	buf = read_tracefs("tracing_on");
	if (!buf)
		fail("read tracing_on");
	if (buf[0] != '1') {
		free(buf);
		return -1;
	}
	free(buf);
	buf = read_tracefs("trace");
	if (!buf)
		fail("read trace");
	for (p = buf; (p = strstr(p, SYNTH_NAME ":")); p++)
		n++;
	free(buf);
	return n;
}

static int do_synth(bool keep)
{
	struct tracefs_synth *synth;
	struct tep_handle *tep;
	char *err = NULL;
	char *buf;
	int n;

	tep = load_sched_events();

	errno = 0;
	synth = tracefs_sql(tep, SYNTH_NAME, SYNTH_SQL, &err);
	if (!synth) {
		if (err)
			fprintf(stderr, "hist_client: sql: %s\n", err);
		fail("tracefs_sql");
	}
	free(err);

	errno = 0;
	if (tracefs_synth_create(synth))
		fail("tracefs_synth_create");
	live_synth = synth;
	printf("wrote synthetic: %s %s\n", SYNTH_NAME,
	       tracefs_synth_show_event(synth));
	printf("wrote sched_waking: %s\n", tracefs_synth_show_start_hist(synth));
	printf("wrote sched_switch: %s\n", tracefs_synth_show_end_hist(synth));

	if (!synth_listed(true))
		fail_check("synthetic check", SYNTH_NAME " is not listed");
	print_triggers();
	buf = read_trigger("sched_waking");
	if (!has_line_with(buf, "hist:", NULL))
		fail_check("trigger check", "no hist: line on sched_waking");
	free(buf);
	buf = read_trigger("sched_switch");
	if (!has_line_with(buf, SYNTH_NAME, NULL))
		fail_check("trigger check", "no " SYNTH_NAME " on sched_switch");
	free(buf);

	errno = 0;
	if (tracefs_event_enable(NULL, "synthetic", SYNTH_NAME))
		fail("tracefs_event_enable");

	make_wakeups(4, 5);

	n = count_synth_events();
	if (n < 0)
		printf("events: not counted (tracing_on is 0)\n");
	else
		printf("events: %d\n", n);
	if (n == 0)
		fail_check("event check", "no " SYNTH_NAME " event in trace");

	if (keep) {
		live_synth = NULL;
		printf("kept: %s enabled\n", SYNTH_NAME);
	} else {
		errno = 0;
		if (tracefs_event_disable(NULL, "synthetic", SYNTH_NAME))
			fail("tracefs_event_disable");
		errno = 0;
		live_synth = NULL;
		if (tracefs_synth_destroy(synth))
			fail("tracefs_synth_destroy");
		buf = read_trigger("sched_waking");
		if (has_line_with(buf, "hist:", NULL))
			fail_check("synth destroy check",
				   "sched_waking still has a hist: trigger");
		free(buf);
		buf = read_trigger("sched_switch");
		if (has_line_with(buf, "hist:", NULL))
			fail_check("synth destroy check",
				   "sched_switch still has a hist: trigger");
		free(buf);
		if (synth_exists())
			fail_check("synth destroy check",
				   SYNTH_NAME " still exists");
	}

	tracefs_synth_free(synth);
	tep_free(tep);
	printf("hist_client: synth ok\n");
	return 0;
}

/* Does @line define the hist variable @var ("var=" after ':' or ',')? */
static bool defines_var(const char *line, const char *var, size_t len)
{
	const char *p;

	for (p = strstr(line, var); p; p = strstr(p + 1, var)) {
		if (p > line && (p[-1] == ':' || p[-1] == ',') && p[len] == '=')
			return true;
	}
	return false;
}

/* Does @line define a variable that some "$var" in @refs references? */
static bool defines_ref(const char *line, const char *refs)
{
	const char *p, *end;
	char var[128];
	size_t len;

	for (p = strchr(refs, '$'); p; p = strchr(p + 1, '$')) {
		end = p + 1;
		while (*end == '_' || (*end >= 'a' && *end <= 'z') ||
		       (*end >= 'A' && *end <= 'Z') ||
		       (*end >= '0' && *end <= '9'))
			end++;
		len = end - p - 1;
		if (!len || len >= sizeof(var))
			continue;
		memcpy(var, p + 1, len);
		var[len] = '\0';
		if (defines_var(line, var, len))
			return true;
	}
	return false;
}

static bool is_synth_end_line(const char *line, const char *refs)
{
	(void)refs;
	return strstr(line, "trace(" SYNTH_NAME ",") ||
	       strstr(line, "." SYNTH_NAME "(");
}

static bool is_synth_start_line(const char *line, const char *refs)
{
	return strncmp(line, "hist:", 5) == 0 && defines_ref(line, refs);
}

/*
 * Remove the hist triggers of @event for which @match() is true, by
 * writing them back prefixed with '!' (without " [active]"), like
 * "trace-cmd reset" does. Appends the removed lines to @removed.
 */
static int remove_triggers(const char *event,
			   bool (*match)(const char *, const char *),
			   char **removed)
{
	char *buf, *pos, *line, *cmd, *tail, *nr;
	int n = 0;

	buf = read_trigger(event);
	pos = buf;
	while ((line = next_line(&pos))) {
		if (!match(line, *removed))
			continue;
		tail = strstr(line, " [");
		if (tail && (!strcmp(tail, " [active]") ||
			     !strcmp(tail, " [paused]")))
			*tail = '\0';
		if (asprintf(&cmd, "!%s\n", line) < 0)
			fail("asprintf");
		printf("remove %s: %s", event, cmd);
		errno = 0;
		if (tracefs_event_file_append(NULL, "sched", event, "trigger",
					      cmd) < 0)
			fail("remove trigger");
		free(cmd);
		if (asprintf(&nr, "%s%s\n", *removed, line) < 0)
			fail("asprintf");
		free(*removed);
		*removed = nr;
		n++;
	}
	free(buf);

	buf = read_trigger(event);
	pos = buf;
	while ((line = next_line(&pos)))
		if (match(line, *removed))
			fail_check("synth-destroy check", "trigger not removed");
	free(buf);
	return n;
}

/*
 * tracefs_sql() names its hist variables after a random number, so
 * re-creating the synth object in a new process does not reproduce the
 * trigger text that tracefs_synth_destroy() would have to remove.
 * Instead, remove what the kernel shows: first the sched_switch trigger
 * that calls wakeup_lat, then the sched_waking triggers that define the
 * variables it uses; then the synthetic event itself.
 */
static int do_synth_destroy(void)
{
	struct tracefs_dynevent *dyn;
	char *removed;
	int n;

	errno = 0;
	if (!tracefs_tracing_dir())
		fail("tracefs_tracing_dir");

	if (tracefs_event_file_exists(NULL, "synthetic", SYNTH_NAME, "enable")) {
		errno = 0;
		if (tracefs_event_disable(NULL, "synthetic", SYNTH_NAME))
			fail("tracefs_event_disable");
	}

	removed = strdup("");
	if (!removed)
		fail("strdup");
	n = remove_triggers("sched_switch", is_synth_end_line, &removed);
	if (n)
		n += remove_triggers("sched_waking", is_synth_start_line,
				     &removed);
	free(removed);
	printf("removed triggers: %d\n", n);

	errno = 0;
	dyn = tracefs_dynevent_get(TRACEFS_DYNEVENT_SYNTH, NULL, SYNTH_NAME);
	if (dyn) {
		errno = 0;
		if (tracefs_dynevent_destroy(dyn, true))
			fail("tracefs_dynevent_destroy");
		tracefs_dynevent_free(dyn);
		printf("removed synthetic: %s\n", SYNTH_NAME);
	} else {
		printf("removed synthetic: none\n");
	}
	if (synth_exists())
		fail_check("synth-destroy check", SYNTH_NAME " still exists");

	printf("hist_client: synth-destroy ok\n");
	return 0;
}

/* Prints "poll: IN PRI ..." (the events poll() returned) or "poll: none". */
static int do_poll(const char *path, bool read_first, int ms)
{
	struct pollfd pfd = { .events = POLLIN | POLLPRI };
	char buf[4096];
	int ret;

	pfd.fd = open(path, O_RDONLY);
	if (pfd.fd < 0)
		fail("open");
	while (read_first && (ret = read(pfd.fd, buf, sizeof(buf))) != 0) {
		if (ret < 0)
			fail("read");
	}
	ret = poll(&pfd, 1, ms);
	if (ret < 0)
		fail("poll");
	printf("poll:%s%s%s%s%s\n", ret ? "" : " none",
	       pfd.revents & POLLIN ? " IN" : "",
	       pfd.revents & POLLRDNORM ? " RDNORM" : "",
	       pfd.revents & POLLPRI ? " PRI" : "",
	       pfd.revents & POLLERR ? " ERR" : "");
	close(pfd.fd);
	return 0;
}

/*
 * Holds FILE open for `make fuzz-seq`, whose steps then run while a reader
 * sleeps in poll() and reads on every wakeup. The caller learns that the
 * open is done when stdout closes, so that the next step runs after it.
 */
static int do_watch(const char *path)
{
	struct pollfd pfd = { .events = POLLIN | POLLPRI };
	char buf[4096];
	int ret;

	pfd.fd = open(path, O_RDONLY);
	printf("watch: %s\n", pfd.fd < 0 ? strerrorname_np(errno) : "open");
	fclose(stdout);
	if (pfd.fd < 0)
		return 1;
	for (;;) {
		if (lseek(pfd.fd, 0, SEEK_SET) < 0)
			break;
		while ((ret = read(pfd.fd, buf, sizeof(buf))) > 0)
			;
		if (ret < 0 || poll(&pfd, 1, -1) < 0 || (pfd.revents & POLLERR))
			break;
		/* A kprobe on vfs_read would wake us for each of our reads. */
		usleep(100000);
	}
	/* Gone or failing: keep the file open until killed. */
	pause();
	return 0;
}

static int bad_usage(void)
{
	fprintf(stderr,
		"usage: hist_client hist\n"
		"       hist_client synth [keep]\n"
		"       hist_client synth-destroy\n"
		"       hist_client poll FILE [read] MS\n"
		"       hist_client watch FILE\n");
	return 2;
}

int main(int argc, char **argv)
{
	setvbuf(stdout, NULL, _IOLBF, 0);

	if (argc == 2 && !strcmp(argv[1], "hist"))
		return do_hist();
	if (argc == 2 && !strcmp(argv[1], "synth"))
		return do_synth(false);
	if (argc == 3 && !strcmp(argv[1], "synth") && !strcmp(argv[2], "keep"))
		return do_synth(true);
	if (argc == 2 && !strcmp(argv[1], "synth-destroy"))
		return do_synth_destroy();
	if (argc == 4 && !strcmp(argv[1], "poll"))
		return do_poll(argv[2], false, atoi(argv[3]));
	if (argc == 5 && !strcmp(argv[1], "poll") && !strcmp(argv[3], "read"))
		return do_poll(argv[2], true, atoi(argv[4]));
	if (argc == 3 && !strcmp(argv[1], "watch"))
		return do_watch(argv[2]);
	return bad_usage();
}
