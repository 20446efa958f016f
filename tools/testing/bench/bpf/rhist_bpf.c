// SPDX-License-Identifier: GPL-2.0
/*
 * rhist_bpf: loads programs of the bench's eBPF peer (rhist_bpf.bpf.c),
 * attaches each to the tracepoint its section names and stays attached
 * until SIGTERM or SIGINT; then detaches and prints what their maps hold:
 *
 *   rhist_bpf OBJECT PROGRAM[,PROGRAM...] MAX_ENTRIES
 *
 * prints "ready" once attached, and on the signal one line
 * "bpf: hits=N drops=N entries=N sums=S,..." per map of the programs
 * (each program's m_PROGRAM, or m_PROGRAM_0, _1, ..., or none, in the
 * programs' order; hits and each value's sum added over keys and CPUs,
 * modulo 2^64; drops: events that found the map full, drops[n] for the
 * n-th map). MAX_ENTRIES is every such map's size.
 * libbpf's messages, the verifier's log among them, go to stderr.
 */
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
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

/* The most u64s of a value: the hit count and two sums. */
#define VAL_WORDS 3

/*
 * Adds up each u64 of every value of @map (@sums[0]: the hit counts),
 * over its keys and CPUs; @words: how many a value has.
 */
static int read_map(const struct bpf_map *map, unsigned long long *sums,
		    unsigned int *words, unsigned long long *entries)
{
	int fd = bpf_map__fd(map), ncpu = 1, err, i;
	size_t vsize = bpf_map__value_size(map);
	void *key, *next, *val;
	unsigned int w;

	*words = vsize / sizeof(*sums);
	if (*words < 1 || *words > VAL_WORDS)
		return -EINVAL;

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
	memset(sums, 0, VAL_WORDS * sizeof(*sums));
	*entries = 0;
	err = bpf_map_get_next_key(fd, NULL, next);
	while (!err) {
		memcpy(key, next, bpf_map__key_size(map));
		err = bpf_map_lookup_elem(fd, key, val);
		if (err)
			break;
		for (i = 0; i < ncpu; i++) {
			const unsigned long long *v = (void *)((char *)val + i * vsize);

			for (w = 0; w < *words; w++)
				sums[w] += v[w];
		}
		(*entries)++;
		err = bpf_map_get_next_key(fd, key, next);
	}
	free(key);
	free(val);
	return err == -ENOENT ? 0 : err;
}

/* As many as rhist_bpf.bpf.c's drops map has entries. */
#define MAX_MAPS 4
/* Programs loaded together. */
#define MAX_PROGS 4

/*
 * Finds PROGRAM's maps: m_PROGRAM alone, or m_PROGRAM_0, m_PROGRAM_1, ...,
 * at most @room. Returns how many, 0 for none.
 */
static int find_maps(struct bpf_object *obj, const char *prog,
		     struct bpf_map **maps, int room)
{
	char name[128];
	int n;

	if (!room)
		return 0;
	snprintf(name, sizeof(name), "m_%s", prog);
	maps[0] = bpf_object__find_map_by_name(obj, name);
	if (maps[0])
		return 1;
	for (n = 0; n < room; n++) {
		snprintf(name, sizeof(name), "m_%s_%d", prog, n);
		maps[n] = bpf_object__find_map_by_name(obj, name);
		if (!maps[n])
			break;
	}
	return n;
}

int main(int argc, char **argv)
{
	unsigned long long sums[VAL_WORDS], entries, drops[MAX_MAPS];
	struct bpf_program *progs[MAX_PROGS], *p;
	struct bpf_link *links[MAX_PROGS];
	struct bpf_map *maps[MAX_MAPS], *m;
	int err, sig, n = 0, nprogs = 0, i;
	char *names, *name;
	struct bpf_object *obj;
	unsigned int words, w;
	sigset_t stop;

	if (argc != 4) {
		fprintf(stderr, "usage: %s OBJECT PROGRAM[,PROGRAM...] MAX_ENTRIES\n", argv[0]);
		return 2;
	}
	libbpf_set_print(print);
	obj = bpf_object__open_file(argv[1], NULL);
	if (!obj)
		return die(argv[1], errno);
	names = argv[2];
	while ((name = strsep(&names, ","))) {
		if (nprogs == MAX_PROGS) {
			fprintf(stderr, "rhist_bpf: more than %d programs\n", MAX_PROGS);
			return 1;
		}
		progs[nprogs] = bpf_object__find_program_by_name(obj, name);
		if (!progs[nprogs]) {
			fprintf(stderr, "rhist_bpf: no program %s\n", name);
			return 1;
		}
		nprogs++;
		n += find_maps(obj, name, maps + n, MAX_MAPS - n);
	}
	if (!n) {
		fprintf(stderr, "rhist_bpf: no map m_PROGRAM[_0] for %s\n", argv[2]);
		return 1;
	}
	/* Only these programs, and of the keyed maps only their own. */
	bpf_object__for_each_program(p, obj) {
		bool own = false;

		for (i = 0; i < nprogs; i++)
			own |= p == progs[i];
		bpf_program__set_autoload(p, own);
	}
	bpf_object__for_each_map(m, obj) {
		bool own = false;

		for (i = 0; i < n; i++)
			own |= m == maps[i];
		if (!strncmp(bpf_map__name(m), "m_", 2))
			bpf_map__set_autocreate(m, own);
	}
	for (i = 0; i < n; i++) {
		err = bpf_map__set_max_entries(maps[i], strtoul(argv[3], NULL, 0));
		if (err)
			return die("max_entries", err);
	}
	err = bpf_object__load(obj);
	if (err)
		return die("load", err);
	/* Signals wait for sigwait(), from before "ready" on. */
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	sigprocmask(SIG_BLOCK, &stop, NULL);
	for (i = 0; i < nprogs; i++) {
		links[i] = bpf_program__attach(progs[i]);
		if (!links[i])
			return die("attach", errno);
	}
	printf("ready\n");
	fflush(stdout);
	sigwait(&stop, &sig);
	for (i = 0; i < nprogs; i++) {
		err = bpf_link__destroy(links[i]);
		if (err)
			return die("detach", err);
	}
	m = bpf_object__find_map_by_name(obj, "drops");
	if (!m)
		return die("no drops map", ENOENT);
	for (i = 0; i < n; i++) {
		err = read_map(maps[i], sums, &words, &entries);
		if (err)
			return die("reading the map", err);
		if (bpf_map_lookup_elem(bpf_map__fd(m), &i, &drops[i]))
			return die("reading drops", errno);
		printf("bpf: hits=%llu drops=%llu entries=%llu sums=", sums[0],
		       drops[i], entries);
		for (w = 1; w < words; w++)
			printf("%s%llu", w > 1 ? "," : "", sums[w]);
		printf("\n");
	}
	bpf_object__close(obj);
	return 0;
}
