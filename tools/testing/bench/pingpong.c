// SPDX-License-Identifier: GPL-2.0
/*
 * pingpong: the bench's scheduler-heavy workload. Two tasks pass a byte
 * back and forth over a pair of pipes N times, the parent pinned to CPU
 * 0 and its child to CPU 1: each pass wakes the other task on the other
 * CPU, and the sender sleeps until the byte comes back.
 *
 *   pingpong N
 */
#define _GNU_SOURCE
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

static void fail(const char *what)
{
	perror(what);
	exit(1);
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fail("pingpong: sched_setaffinity");
}

/* @n times: reads a byte from @in and writes it to @out; @serve: reads first. */
static void relay(int in, int out, long n, int serve)
{
	char c = 0;
	long i;

	for (i = 0; i < n; i++) {
		if (serve && read(in, &c, 1) != 1)
			fail("pingpong: read");
		if (write(out, &c, 1) != 1)
			fail("pingpong: write");
		if (!serve && read(in, &c, 1) != 1)
			fail("pingpong: read");
	}
}

int main(int argc, char **argv)
{
	int ping[2], pong[2], status;
	long n;
	pid_t child;

	n = argc == 2 ? strtol(argv[1], NULL, 0) : 0;
	if (n < 1) {
		fprintf(stderr, "usage: %s N\n", argv[0]);
		return 2;
	}
	if (pipe(ping) || pipe(pong))
		fail("pingpong: pipe");
	child = fork();
	if (child < 0)
		fail("pingpong: fork");
	if (!child) {
		pin(1);
		relay(ping[0], pong[1], n, 1);
		return 0;
	}
	pin(0);
	relay(pong[0], ping[1], n, 0);
	if (waitpid(child, &status, 0) != child || !WIFEXITED(status) ||
	    WEXITSTATUS(status))
		fail("pingpong: the child failed");
	return 0;
}
