// SPDX-License-Identifier: GPL-2.0-only OR BSD-2-Clause
/*
 * test_export.c - the exports of heap call sites: folded stacks (frame order, names of
 * unknown frames, bytes adding up to the outstanding heap bytes, fd and freed sites left
 * out) and pprof profiles (gzip of a perftools.profiles.Profile whose sample types, values,
 * labels, locations, functions and mappings are what the model holds, every id it refers to
 * defined, build ids of the files the symbolizer loaded, never of a file a module name leads
 * to; mmap sites as the sample types mmap_objects and mmap_space when mappings were tracked).
 * Run as root from the repository root.
 */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "live/symbolize.h"
#include "view/export.h"
#include "proto/profile.pb-c.h"
#include "view/snapshot_read.h"

typedef Perftools__Profiles__Profile Profile;

static char err[1024];

static int read_golden(struct model *m, struct snapshot_info *info)
{
	int ret = snapshot__read_file("tests/data/new.json", NULL, m, info, err, sizeof(err));

	if (ret)
		printf("  %s\n", err);
	return ret;
}

static char *folded(const struct model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	if (!f || export__folded(f, m))
		abort();
	fclose(f);
	return buf;
}

/* Gunzip and decode what export__pprof_pack() made of m. */
static Profile *pprof(const struct model *m, const struct export_opts *o)
{
	uint8_t *gz, out[1 << 16];
	z_stream zs = {};
	Profile *p = NULL;
	size_t len;

	if (export__pprof_pack(m, o, &gz, &len))
		return NULL;
	if (len < 2 || gz[0] != 0x1f || gz[1] != 0x8b || inflateInit2(&zs, 15 + 16))
		goto out;
	zs.next_in = gz;
	zs.avail_in = len;
	zs.next_out = out;
	zs.avail_out = sizeof(out);
	if (inflate(&zs, Z_FINISH) == Z_STREAM_END)
		p = perftools__profiles__profile__unpack(NULL, zs.total_out, out);
	inflateEnd(&zs);
out:
	free(gz);
	return p;
}

static const char *str(const Profile *p, int64_t i)
{
	return i >= 0 && (size_t)i < p->n_string_table ? p->string_table[i] : "(bad index)";
}

static const Perftools__Profiles__Location *location(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->id == id)
			return p->location[i];
	return NULL;
}

static const Perftools__Profiles__Function *function(const Profile *p, uint64_t id)
{
	for (size_t i = 0; i < p->n_function; i++)
		if (p->function[i]->id == id)
			return p->function[i];
	return NULL;
}

/* The leaf function name of a sample. */
static const char *leaf(const Profile *p, const Perftools__Profiles__Sample *s)
{
	const Perftools__Profiles__Location *l = s->n_location_id ?
						 location(p, s->location_id[0]) : NULL;
	const Perftools__Profiles__Function *f = l && l->n_line ?
						 function(p, l->line[0]->function_id) : NULL;

	return f ? str(p, f->name) : NULL;
}

/* ---------------------------------------------------------------- folded */

static void test_folded_lines_go_outermost_to_innermost(void)
{
	struct snapshot_info info;
	struct model m;
	char *text;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	text = folded(&m);
	model__free(&m);
	CHECK(strstr(text, "main;leak_here 5120\n"));
	CHECK(strstr(text, "main;serve;handle_request 1536\n"));
	free(text);
}

static void test_folded_names_unknown_frames_by_module_then_address(void)
{
	struct snapshot_info info;
	struct model m;
	char *text;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	text = folded(&m);
	model__free(&m);
	CHECK(strstr(text, "0x7fff00001234;[libc.so.6];fresh_alloc 256\n"));
	free(text);
}

static void test_folded_bytes_add_up_to_outstanding_heap_bytes(void)
{
	struct snapshot_info info;
	struct model m;
	long long sum = 0, want = 0;
	char *text, *line, *save = NULL;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	text = folded(&m);
	for (size_t i = 0; i < m.n_procs; i++)
		want += m.procs[i].heap_outstanding_bytes;
	model__free(&m);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		sum += atoll(strrchr(line, ' ') + 1);
	free(text);
	CHECK_EQ_INT(want, 9260);
	CHECK_EQ_INT(sum, want);
}

static void test_folded_leaves_out_fd_sites_and_sites_with_nothing_outstanding(void)
{
	struct sym_frame fr = { .addr = 0x10, .symbol = "s;x\n" };
	struct site sites[3] = {
		{ .kind = LT_KIND_FD, .outstanding_count = 3, .frames = &fr,
		  .n_frames = 1 },
		{ .kind = LT_KIND_HEAP, .allocs = 2, .frees = 2, .frames = &fr,
		  .n_frames = 1 },
		{ .kind = LT_KIND_HEAP, .outstanding_bytes = 8, .outstanding_count = 1,
		  .frames = &fr, .n_frames = 1 },
	};
	struct process p = { .pid = 1, .target = true, .sites = sites, .n_sites = 3 };
	struct model m = { .procs = &p, .n_procs = 1 };
	char *text = folded(&m);

	/* and a name cannot break the format: ';' and line breaks are replaced */
	CHECK_EQ_STR(text, "s:x? 8\n");
	free(text);
}

/* ---------------------------------------------------------------- pprof */

static void test_pprof_is_a_gzipped_profile_of_inuse_objects_and_space(void)
{
	struct snapshot_info info;
	struct export_opts o = {};
	struct model m;
	Profile *p;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	o.time_s = info.time_s;
	o.duration_s = info.elapsed_s;
	p = pprof(&m, &o);
	model__free(&m);
	CHECK(p);
	CHECK_EQ_STR(str(p, 0), "");
	CHECK_EQ_INT(p->n_sample_type, 2);
	CHECK_EQ_STR(str(p, p->sample_type[0]->type), "inuse_objects");
	CHECK_EQ_STR(str(p, p->sample_type[0]->unit), "count");
	CHECK_EQ_STR(str(p, p->sample_type[1]->type), "inuse_space");
	CHECK_EQ_STR(str(p, p->sample_type[1]->unit), "bytes");
	CHECK_EQ_STR(str(p, p->default_sample_type), "inuse_space");
	CHECK_EQ_INT(p->time_nanos, 1795255210000000000ll);
	CHECK_EQ_INT(p->duration_nanos, 12000000000ll);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_samples_hold_count_and_bytes_of_each_heap_site(void)
{
	static const struct {
		const char *fn;
		int64_t count, bytes;
		int64_t pid;
	} want[] = {
		{ "leak_here", 20, 5120, 100 }, { "cache_fill", 2, 2048, 100 },
		{ "leak_new", 3, 300, 100 }, { "handle_request", 6, 1536, 300 },
		{ "fresh_alloc", 2, 256, 500 },
	};
	struct export_opts o = {};
	struct snapshot_info info;
	struct model m;
	Profile *p;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	p = pprof(&m, &o);
	model__free(&m);
	CHECK(p);
	CHECK_EQ_INT(p->n_sample, 5);
	for (size_t w = 0; w < sizeof(want) / sizeof(want[0]); w++) {
		const Perftools__Profiles__Sample *s = NULL;

		for (size_t i = 0; i < p->n_sample; i++)
			if (leaf(p, p->sample[i]) && !strcmp(leaf(p, p->sample[i]), want[w].fn))
				s = p->sample[i];
		CHECK(s);
		CHECK_EQ_INT(s->n_value, 2);
		CHECK_EQ_INT(s->value[0], want[w].count);
		CHECK_EQ_INT(s->value[1], want[w].bytes);
		CHECK_EQ_INT(s->n_label, 2);
		CHECK_EQ_STR(str(p, s->label[0]->key), "pid");
		CHECK_EQ_INT(s->label[0]->num, want[w].pid);
		CHECK_EQ_STR(str(p, s->label[1]->key), "comm");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* One process with a heap site (2 blocks, 64 B) and an mmap site (3 mappings, 12 KiB). */
static void heap_and_mmap_model(struct model *m, struct process *p, struct site *sites,
				struct sym_frame *fr, unsigned int resources)
{
	fr[0] = (struct sym_frame){ .addr = 0x10, .symbol = "make_block" };
	fr[1] = (struct sym_frame){ .addr = 0x20, .symbol = "map_arena" };
	sites[0] = (struct site){ .kind = LT_KIND_HEAP, .stack_hash = 1, .outstanding_bytes = 64,
				  .outstanding_count = 2, .allocs = 2, .frames = &fr[0],
				  .n_frames = 1 };
	sites[1] = (struct site){ .kind = LT_KIND_MMAP, .stack_hash = 2,
				  .outstanding_bytes = 12288, .outstanding_count = 3, .allocs = 3,
				  .frames = &fr[1], .n_frames = 1 };
	*p = (struct process){ .pid = 7, .heap_allocs = 2, .sites = sites, .n_sites = 2 };
	*m = (struct model){ .procs = p, .n_procs = 1, .resources = resources };
}

/* The sample whose leaf function is fn, or NULL. */
static const Perftools__Profiles__Sample *sample_of(const Profile *p, const char *fn)
{
	for (size_t i = 0; i < p->n_sample; i++)
		if (leaf(p, p->sample[i]) && !strcmp(leaf(p, p->sample[i]), fn))
			return p->sample[i];
	return NULL;
}

static void test_pprof_has_mmap_sites_as_their_own_sample_types_when_tracked(void)
{
	const Perftools__Profiles__Sample *heap, *mmap;
	struct sym_frame fr[2];
	struct site sites[2];
	struct process proc;
	struct model m;
	Profile *p;

	heap_and_mmap_model(&m, &proc, sites, fr, RES_HEAP | RES_MMAP);
	p = pprof(&m, NULL);
	CHECK(p);
	CHECK_EQ_INT(p->n_sample_type, 4);
	CHECK_EQ_STR(str(p, p->sample_type[0]->type), "inuse_objects");
	CHECK_EQ_STR(str(p, p->sample_type[1]->type), "inuse_space");
	CHECK_EQ_STR(str(p, p->sample_type[2]->type), "mmap_objects");
	CHECK_EQ_STR(str(p, p->sample_type[2]->unit), "count");
	CHECK_EQ_STR(str(p, p->sample_type[3]->type), "mmap_space");
	CHECK_EQ_STR(str(p, p->sample_type[3]->unit), "bytes");
	/* The heap stays the default view, and its numbers hold no mapped bytes. */
	CHECK_EQ_STR(str(p, p->default_sample_type), "inuse_space");
	CHECK_EQ_INT(p->n_sample, 2);
	heap = sample_of(p, "make_block");
	mmap = sample_of(p, "map_arena");
	CHECK(heap && mmap);
	CHECK_EQ_INT(heap->n_value, 4);
	CHECK(heap->value[0] == 2 && heap->value[1] == 64 && !heap->value[2] && !heap->value[3]);
	CHECK_EQ_INT(mmap->n_value, 4);
	CHECK(!mmap->value[0] && !mmap->value[1] && mmap->value[2] == 3 &&
	      mmap->value[3] == 12288);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_without_mmap_tracking_has_heap_sample_types_only(void)
{
	struct sym_frame fr[2];
	struct site sites[2];
	struct process proc;
	struct model m;
	Profile *p;

	/* -r heap (or a snapshot without mappings): nothing is known of them, not 0 */
	heap_and_mmap_model(&m, &proc, sites, fr, RES_HEAP);
	p = pprof(&m, NULL);
	CHECK(p);
	CHECK_EQ_INT(p->n_sample_type, 2);
	CHECK_EQ_INT(p->n_sample, 1);
	CHECK(sample_of(p, "make_block") && !sample_of(p, "map_arena"));
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_ids_refer_to_defined_locations_functions_and_mappings(void)
{
	struct export_opts o = {};
	struct snapshot_info info;
	struct model m;
	Profile *p;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	p = pprof(&m, &o);
	model__free(&m);
	CHECK(p);
	for (size_t i = 0; i < p->n_sample; i++)
		for (size_t k = 0; k < p->sample[i]->n_location_id; k++)
			CHECK(location(p, p->sample[i]->location_id[k]));
	for (size_t i = 0; i < p->n_location; i++) {
		const Perftools__Profiles__Location *l = p->location[i];

		CHECK(l->id == i + 1);
		CHECK(l->mapping_id <= p->n_mapping);
		for (size_t k = 0; k < l->n_line; k++)
			CHECK(function(p, l->line[k]->function_id));
	}
	for (size_t i = 0; i < p->n_function; i++)
		CHECK((size_t)p->function[i]->name < p->n_string_table &&
		      (size_t)p->function[i]->filename < p->n_string_table);
	for (size_t i = 0; i < p->n_mapping; i++)
		CHECK(p->mapping[i]->id == i + 1 &&
		      (size_t)p->mapping[i]->filename < p->n_string_table);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_has_one_location_per_frame_and_one_function_per_symbol(void)
{
	struct export_opts o = {};
	struct snapshot_info info;
	struct model m;
	size_t mains = 0;
	Profile *p;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	p = pprof(&m, &o);
	model__free(&m);
	CHECK(p);
	/* main of ./leaky (one function, called from 3 lines) and main of ./server */
	for (size_t i = 0; i < p->n_function; i++)
		mains += !strcmp(str(p, p->function[i]->name), "main");
	CHECK_EQ_INT(mains, 2);
	/* 12 distinct frames (pid 100: 6, 300: 3, 500: 3) in 4 modules, one frame has none */
	CHECK_EQ_INT(p->n_location, 12);
	CHECK_EQ_INT(p->n_mapping, 4);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

static void test_pprof_frame_without_symbol_has_address_and_no_line(void)
{
	struct export_opts o = {};
	struct snapshot_info info;
	const Perftools__Profiles__Location *l = NULL;
	struct model m;
	Profile *p;

	CHECK_EQ_INT(read_golden(&m, &info), 0);
	p = pprof(&m, &o);
	model__free(&m);
	CHECK(p);
	for (size_t i = 0; i < p->n_location; i++)
		if (p->location[i]->address == 0x7f0011223344ull)
			l = p->location[i];
	CHECK(l);
	CHECK_EQ_INT(l->n_line, 0);
	CHECK(l->mapping_id);
	CHECK_EQ_STR(str(p, p->mapping[l->mapping_id - 1]->filename),
		     "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CHECK(!p->mapping[l->mapping_id - 1]->has_functions);
	perftools__profiles__profile__free_unpacked(p, NULL);
}

/* A model with one heap site in this test binary. */
static void self_model(struct model *m, struct process *p, struct site *s, struct sym_frame *f,
		       char *exe)
{
	*f = (struct sym_frame){ .addr = 0x1000, .symbol = "main", .module = exe };
	*s = (struct site){ .kind = LT_KIND_HEAP, .frames = f, .n_frames = 1,
			    .outstanding_bytes = 64, .outstanding_count = 1 };
	*p = (struct process){ .pid = getpid(), .target = true, .sites = s, .n_sites = 1 };
	*m = (struct model){ .procs = p, .n_procs = 1 };
}

static void test_pprof_mapping_carries_the_build_id_of_the_file_the_symbolizer_loaded(void)
{
	char exe[4096], want[256] = "", cmd[4200];
	struct symbolizer *sym = symbolizer__new();
	struct export_opts o = { .build_id = symbolizer__build_id, .build_id_ctx = sym };
	struct sym_frame f;
	struct process proc;
	struct site s;
	struct model m;
	Profile *p;
	FILE *pipe;
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	CHECK(sym && n > 0);
	exe[n] = '\0';
	snprintf(cmd, sizeof(cmd), "readelf -n '%s' | sed -n 's/.*Build ID: //p'", exe);
	pipe = popen(cmd, "r");
	CHECK(pipe && fgets(want, sizeof(want), pipe));
	pclose(pipe);
	want[strcspn(want, "\n")] = '\0';
	CHECK(strlen(want) >= 16);
	CHECK_EQ_INT(symbolizer__add_image(sym, 1, getpid()), 0);
	self_model(&m, &proc, &s, &f, exe);
	p = pprof(&m, &o);
	CHECK(p);
	CHECK_EQ_INT(p->n_mapping, 1);
	CHECK_EQ_STR(str(p, p->mapping[0]->build_id), want);
	perftools__profiles__profile__free_unpacked(p, NULL);
	symbolizer__free(sym);
}

/* A module name the symbolizer never loaded (here a device node) is not even opened. */
static void test_pprof_opens_no_file_a_module_name_leads_to(void)
{
	char dir[] = "/tmp/lt-export-XXXXXX", dev[64], buf[4096] __attribute__((aligned(8)));
	struct symbolizer *sym = symbolizer__new();
	struct export_opts o = { .build_id = symbolizer__build_id, .build_id_ctx = sym };
	struct sym_frame f;
	struct process proc;
	struct site s;
	struct model m;
	Profile *p;
	int in;

	CHECK(sym && mkdtemp(dir));
	snprintf(dev, sizeof(dev), "%s/dev", dir);
	CHECK_EQ_INT(mknod(dev, S_IFCHR | 0600, makedev(1, 3)), 0);
	in = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	CHECK(in >= 0 && inotify_add_watch(in, dev, IN_OPEN) >= 0);
	self_model(&m, &proc, &s, &f, dev);
	p = pprof(&m, &o);
	CHECK(p);
	CHECK_EQ_INT(p->mapping[0]->build_id, 0);
	CHECK(read(in, buf, sizeof(buf)) < 0);
	perftools__profiles__profile__free_unpacked(p, NULL);
	close(in);
	unlink(dev);
	rmdir(dir);
	symbolizer__free(sym);
}

int main(void)
{
	RUN(test_folded_lines_go_outermost_to_innermost);
	RUN(test_folded_names_unknown_frames_by_module_then_address);
	RUN(test_folded_bytes_add_up_to_outstanding_heap_bytes);
	RUN(test_folded_leaves_out_fd_sites_and_sites_with_nothing_outstanding);
	RUN(test_pprof_is_a_gzipped_profile_of_inuse_objects_and_space);
	RUN(test_pprof_samples_hold_count_and_bytes_of_each_heap_site);
	RUN(test_pprof_has_mmap_sites_as_their_own_sample_types_when_tracked);
	RUN(test_pprof_without_mmap_tracking_has_heap_sample_types_only);
	RUN(test_pprof_ids_refer_to_defined_locations_functions_and_mappings);
	RUN(test_pprof_has_one_location_per_frame_and_one_function_per_symbol);
	RUN(test_pprof_frame_without_symbol_has_address_and_no_line);
	RUN(test_pprof_mapping_carries_the_build_id_of_the_file_the_symbolizer_loaded);
	RUN(test_pprof_opens_no_file_a_module_name_leads_to);
	CHECK_EXIT();
}
