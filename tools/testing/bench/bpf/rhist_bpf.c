// SPDX-License-Identifier: GPL-2.0
/*
 * rhist_bpf: loads one program of the bench's eBPF peer
 * (rhist_bpf.bpf.c), attaches it to its tracepoint and stays attached
 * until SIGTERM or SIGINT; then detaches and prints what its map holds:
 *
 *   rhist_bpf OBJECT PROGRAM MAX_ENTRIES
 *
 * prints "ready" once attached, and on the signal
 * "bpf: hits=N drops=N entries=N" (hits summed over keys and CPUs; drops:
 * events that found the map full). libbpf's messages, the verifier's
 * log among them, go to stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

static int print(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG)
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static int die(const char *what, int err)
{
	fprintf(stderr, "rhist_bpf: %s: %s\n", what, strerror(err < 0 ? -err : err));
	return 1;
}

/* Sums the first u64 (the hit count) of every value of @map. */
static int read_map(const struct bpf_map *map, unsigned long long *hits,
		    unsigned long long *entries)
{
	int fd = bpf_map__fd(map), ncpu = 1, err, i;
	size_t vsize = bpf_map__value_size(map);
	void *key, *next, *val;

	if (bpf_map__type(map) == BPF_MAP_TYPE_PERCPU_HASH) {
		ncpu = libbpf_num_possible_cpus();
		if (ncpu < 0)
			return ncpu;
		/* Per-CPU values are copied out 8-byte aligned. */
		vsize = (vsize + 7) / 8 * 8;
	}
	key = calloc(2, bpf_map__key_size(map));
	val = calloc(ncpu, vsize);
	if (!key || !val) {
		free(key);
		free(val);
		return -ENOMEM;
	}
	next = (char *)key + bpf_map__key_size(map);
	*hits = 0;
	*entries = 0;
	err = bpf_map_get_next_key(fd, NULL, next);
	while (!err) {
		memcpy(key, next, bpf_map__key_size(map));
		err = bpf_map_lookup_elem(fd, key, val);
		if (err)
			break;
		for (i = 0; i < ncpu; i++)
			*hits += *(unsigned long long *)((char *)val + i * vsize);
		(*entries)++;
		err = bpf_map_get_next_key(fd, key, next);
	}
	free(key);
	free(val);
	return err == -ENOENT ? 0 : err;
}

int main(int argc, char **argv)
{
	unsigned long long hits, entries, drops = 0;
	struct bpf_program *prog, *p;
	struct bpf_object *obj;
	struct bpf_map *map, *m;
	struct bpf_link *link;
	char map_name[64];
	unsigned int zero = 0;
	sigset_t stop;
	int err, sig;

	if (argc != 4) {
		fprintf(stderr, "usage: %s OBJECT PROGRAM MAX_ENTRIES\n", argv[0]);
		return 2;
	}
	libbpf_set_print(print);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return die(argv[1], errno);
	prog = bpf_object__find_program_by_name(obj, argv[2]);
	snprintf(map_name, sizeof(map_name), "m_%s", argv[2]);
	map = bpf_object__find_map_by_name(obj, map_name);
	if (!prog || !map) {
		fprintf(stderr, "rhist_bpf: no program %s or map %s\n", argv[2], map_name);
		return 1;
	}
	/* Only this program, and of the keyed maps only its own. */
	bpf_object__for_each_program(p, obj)
		bpf_program__set_autoload(p, p == prog);
	bpf_object__for_each_map(m, obj)
		if (!strncmp(bpf_map__name(m), "m_", 2))
			bpf_map__set_autocreate(m, m == map);
	err = bpf_map__set_max_entries(map, strtoul(argv[3], NULL, 0));
	if (err)
		return die("max_entries", err);
	err = bpf_object__load(obj);
	if (err)
		return die("load", err);
	/* Signals wait for sigwait(), from before "ready" on. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	link = bpf_program__attach(prog);
	if (!link)
		return die("attach", errno);
	printf("ready\n");
	fflush(stdout);
	sigwait(&stop, &sig);
	err = bpf_link__destroy(link);
	if (err)
		return die("detach", err);
	err = read_map(map, &hits, &entries);
	if (err)
		return die("reading the map", err);
	m = bpf_object__find_map_by_name(obj, "drops");
	if (!m || bpf_map_lookup_elem(bpf_map__fd(m), &zero, &drops))
		return die("reading drops", errno);
	printf("bpf: hits=%llu drops=%llu entries=%llu\n", hits, drops, entries);
	bpf_object__close(obj);
	return 0;
}
