/* test_export.c - `sampbench export`: folded stacks (exact text on a synthetic run, totals
 * and root-first order on a real one), gperftools round trips through cpuprofile_parse and
 * google-pprof, profile.proto read by an independent decoder (`go tool pprof`: totals, per
 * thread and per leaf function counts against the run's samples), thread names (pprof's
 * "thread name" label read by `go tool pprof`, the speedscope and Firefox thread names, and
 * their fallbacks), and bad input (exit 2, one line, nothing written). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/export.h"
#include "analysis/import.h"
#include "analysis/symbolize.h"
#include "results/h5io.h"
#include "sampler/cpuprofile.h"
#include "tests/support/go_pprof.h"
#include "tests/support/sbrun.h"

static char bin[512];
static char dir[] = "/tmp/sbexport.XXXXXX";
static char h5[600];
static struct sb_run *runs;
static size_t nruns;

/* Runs bin (or argv[0] when it is absolute) with args, stdout into out (may be NULL), stderr
 * into err. Returns the exit status. */
static int run_cmd(char *out, size_t outlen, char *err, size_t errlen, const char *const *args)
{
	int po[2], pe[2];

	if (pipe(po) || pipe(pe))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		dup2(po[1], 1);
		dup2(pe[1], 2);
		close(po[0]);
		close(pe[0]);
		const char *argv[32] = { args[0][0] == '/' ? args[0] : bin };
		int skip = args[0][0] == '/';
		for (int i = skip; args[i] && i < 30; i++)
			argv[i + 1 - skip] = args[i];
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(po[1]);
	close(pe[1]);
	/* the outputs here are small: drain stdout, then stderr */
	size_t n = 0;
	ssize_t k;
	char sink[4096];
	while ((k = read(po[0], out && n + 1 < outlen ? out + n : sink,
			 out && n + 1 < outlen ? outlen - 1 - n : sizeof(sink))) > 0)
		if (out && n + 1 < outlen)
			n += (size_t)k;
	if (out)
		out[n] = 0;
	n = 0;
	while (n + 1 < errlen && (k = read(pe[0], err + n, errlen - 1 - n)) > 0)
		n += (size_t)k;
	err[n] = 0;
	close(po[0]);
	close(pe[0]);
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}


static char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	rewind(f);
	char *buf = malloc((size_t)n + 1);
	if (buf && fread(buf, 1, (size_t)n, f) != (size_t)n) {
		free(buf);
		buf = NULL;
	}
	if (buf)
		buf[n] = 0;
	fclose(f);
	*len = (size_t)n;
	return buf;
}

/* Files in dir other than the bench file: nothing half-written may stay behind. */
static int stray_files(void)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		n += strstr(e->d_name, ".tmp") != NULL;
	if (d)
		closedir(d);
	return n;
}

static int setup(void **state)
{
	(void)state;
	const char *b = getenv("BUILD");

	snprintf(bin, sizeof(bin), "%s/sampbench", b && *b ? b : "build");
	if (!mkdtemp(dir))
		return -1;
	snprintf(h5, sizeof(h5), "%s/e.h5", dir);
	/* 0.6 s: 0.3 s gave the first run 10 samples or fewer once in 6 TSan make checks
	 * (its cause not known: the message below now says what the run was) */
	return sbrun_runs(bin, ARGS("run", "-q", "-s", "itimer,gperftools", "-w", "skewed", "-t", "2",
				    "-z", "200", "-d", "0.6", "-o", h5),
			  h5, &runs, &nruns);
}

static int teardown(void **state)
{
	(void)state;
	char cmd[700];

	sbrun_free_runs(runs, nruns);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	return system(cmd) == 0 ? 0 : -1;
}

/* A run built by hand: exact folded text, names, unknowns, kernel frames, sanitizing. */
static void test_folded_synthetic(void **state)
{
	(void)state;
	struct sb_symbol syms[] = {
		{ .pc = 0x1000, .module = "app", .function = "main" },
		{ .pc = 0x2000, .module = "app", .function = "work;x" },
		{ .pc = 0x3000, .module = "[kernel]", .function = "do_syscall" },
		{ .pc = 0x4000, .module = "?", .function = "0x4000" },
	};
	uint64_t frames[] = { 0x2000, 0x1000, 0x3000, 0x2000, 0x1000, 0x2000, 0x1000, 0x4000 };
	struct sb_sample samples[] = {
		{ .depth = 2, .frame_offset = 0 }, /* main;work_x */
		{ .depth = 3, .frame_offset = 2 }, /* main;work_x;do_syscall_[k] */
		{ .depth = 2, .frame_offset = 5 }, /* main;work_x again */
		{ .depth = 0, .frame_offset = 0 }, /* no stack */
		{ .depth = 1, .frame_offset = 7 }, /* unknown function */
	};
	struct sb_run r = {
		.run_id = 7, .sampler = "itimer", .workload = "skewed", .threads = 2, .hz = 100,
		.samples = samples, .nsamples = 5, .frames = frames, .nframes = 8,
		.symbols = syms, .nsymbols = 4,
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_int_equal(export_folded(f, &r, 1, 0), 5);
	fclose(f);
	assert_string_equal(buf, "0x4000 1\n"
				 "[unknown] 1\n"
				 "main;work_x 2\n"
				 "main;work_x;do_syscall_[k] 1\n");
	free(buf);

	f = open_memstream(&buf, &len);
	assert_int_equal(export_folded(f, &r, 1, EXPORT_MODULE | EXPORT_LABEL), 5);
	fclose(f);
	assert_non_null(strstr(buf, "itimer/skewed/t2/100hz/rep0/run7;app!main;app!work_x 2\n"));
	assert_non_null(strstr(buf, "app!work_x;do_syscall_[k] 1\n"));
	free(buf);
}

/* Sums the counts of folded text; checks every line is "stack count" and unique. */
static uint64_t folded_total(char *text, int *lines)
{
	uint64_t total = 0;
	char *prev = NULL;

	*lines = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *sp = strrchr(line, ' ');
		assert_non_null(sp);
		char *end;
		unsigned long long c = strtoull(sp + 1, &end, 10);
		assert_true(*end == 0 && c >= 1);
		*sp = 0;
		if (prev)
			assert_true(strcmp(prev, line) < 0); /* sorted, so unique */
		prev = line;
		total += c;
		(*lines)++;
	}
	return total;
}

/* A real run: totals match, stacks are root first (thread start before the leaf). */
static void test_folded_real(void **state)
{
	(void)state;
	static char out[1 << 20];
	char err[1024];
	int lines, ordered = 0;

	if (!(nruns == 2 && runs[0].nsamples > 10))
		fail_msg("want 2 runs, the first with > 10 samples: %zu runs, %s %s with %zu "
			 "samples (%s)", nruns, nruns ? runs[0].sampler : "-",
			 nruns ? run_status_name(runs[0].status) : "-", nruns ? runs[0].nsamples : 0,
			 nruns ? runs[0].reason : "");
	assert_int_equal(run_cmd(out, sizeof(out), err, sizeof(err),
				 ARGS("export", "--format", "folded", h5, "--run", "0")), 0);
	/* root first: the thread function comes before the leaf on every line with both */
	for (char *line = out; line && *line;) {
		char *nl = strchr(line, '\n');
		if (nl)
			*nl = 0;
		char *fn = strstr(line, "skewed_thread;"), *leaf = strstr(line, ";wl_slot_leaf_");
		if (fn && leaf) {
			assert_true(fn < leaf);
			ordered++;
		}
		if (nl)
			*nl = '\n';
		line = nl ? nl + 1 : NULL;
	}
#ifndef __SANITIZE_THREAD__ /* TSan defers signals: a signal sampler's stacks are stale there */
	assert_true(ordered >= 1);
#endif
	assert_int_equal(folded_total(out, &lines), runs[0].nsamples);

	/* every run, labelled, to a file */
	char path[700];
	snprintf(path, sizeof(path), "%s/all.folded", dir);
	assert_int_equal(run_cmd(NULL, 0, err, sizeof(err),
				 ARGS("export", "-F", "folded", "-o", path, h5)), 0);
	size_t len;
	char *all = slurp(path, &len);
	assert_non_null(all);
	assert_non_null(strstr(all, "gperftools/skewed/t2/200hz/rep0/run1;"));
	assert_int_equal(folded_total(all, &lines), runs[0].nsamples + runs[1].nsamples);
	free(all);
	assert_int_equal(stray_files(), 0);
}

/* Sums counts per record for the round trip. */
static int add_count(const struct cpuprofile_record *rec, void *arg)
{
	*(uint64_t *)arg += rec->count;
	return 0;
}

/* "Total: N samples" of google-pprof --text (make deps installs it: its absence fails). */
static long pprof_total(const char *const *args, char *out, size_t outlen)
{
	char err[4096];

	if (access("/usr/bin/google-pprof", X_OK) != 0)
		fail_msg("google-pprof not installed (make deps installs google-perftools)");
	int rc = run_cmd(out, outlen, err, sizeof(err), args);
	if (rc != 0)
		fail_msg("google-pprof failed (%d): %s", rc, err);
	const char *t = strstr(out, "Total: ");
	assert_non_null(t);
	return strtol(t + 7, NULL, 10);
}

static void test_pprof_round_trip(void **state)
{
	(void)state;
	char path[700], spath[700], err[1024], msg[256];
	static char out[1 << 16];
	struct cpuprofile p;
	size_t len;

	for (size_t i = 0; i < nruns; i++) {
		char id[24];
		snprintf(id, sizeof(id), "%zu", i);
		snprintf(path, sizeof(path), "%s/run%zu.prof", dir, i);
		assert_int_equal(run_cmd(NULL, 0, err, sizeof(err),
					 ARGS("export", "--format", "gperftools", h5, "--run", id,
					      "-o", path)), 0);
		char *buf = slurp(path, &len);
		assert_non_null(buf);
		if (cpuprofile_parse(buf, len, &p, msg, sizeof(msg)) < 0)
			fail_msg("exported profile rejected: %s", msg);
		uint64_t sum = 0;
		assert_int_equal(cpuprofile_foreach(&p, add_count, &sum), 0);
		assert_int_equal(p.total_count, runs[i].nsamples);
		assert_int_equal(sum, runs[i].nsamples);
		assert_int_equal(p.period_us, 5000); /* 200 Hz */
		assert_true(p.maps_len > 0 && memmem(p.maps, p.maps_len, "[sampbench]", 11));
		free(buf);

		long total = pprof_total(ARGS("/usr/bin/google-pprof", "--text", "/bin/true", path),
					 out, sizeof(out));
		if (total >= 0)
			assert_int_equal(total, (long)runs[i].nsamples);
	}

	/* the symbolized variant: google-pprof prints names without the binary */
	snprintf(spath, sizeof(spath), "%s/sym.prof", dir);
	assert_int_equal(run_cmd(NULL, 0, err, sizeof(err),
				 ARGS("export", "-F", "gperftools-symbols", h5, "-r", "0", "-o", spath)), 0);
	char *buf = slurp(spath, &len);
	assert_non_null(buf);
	const char *marker = strstr(buf, "--- profile\n");
	assert_true(strncmp(buf, "--- symbol\n", 11) == 0 && marker);
	marker += strlen("--- profile\n");
	assert_int_equal(cpuprofile_parse(marker, len - (size_t)(marker - buf), &p, msg,
					  sizeof(msg)), 0);
	assert_int_equal(p.total_count, runs[0].nsamples);
	free(buf);
	long total = pprof_total(ARGS("/usr/bin/google-pprof", "--text", spath), out, sizeof(out));
	if (total >= 0) {
		assert_int_equal(total, (long)runs[0].nsamples);
		assert_non_null(strstr(out, "wl_slot_leaf_0"));
	}
	assert_int_equal(stray_files(), 0);
}

/* The run's samples whose leaf is named name (export_frame_name, no flags; a leaf in inlined
 * code is its innermost inlined function, which `go tool pprof` calls "NAME (inline)"). */
static long leaf_count(const struct sb_run *r, const char *name)
{
	char buf[256];
	long n = 0;

	for (size_t i = 0; i < r->nsamples; i++) {
		uint32_t depth;
		size_t k;
		const uint64_t *pcs = export_sample_stack(r, i, &depth);
		const struct sb_inline_frame *c = inline_find(r->inlines, r->ninlines, pcs[0], &k);
		if (k)
			snprintf(buf, sizeof(buf), "%s (inline)", c[0].function);
		else
			export_frame_name(r, pcs[0], 0, buf, sizeof(buf));
		n += strcmp(buf, name) == 0;
	}
	return n;
}

/* `go tool pprof` (Debian's golang-go) decodes the exported profile.proto on its own: its
 * sample total, its per-thread counts (-tags on the "thread id" label) and its flat count
 * of every function (-top) must equal what the run's samples say. -symbolize=none: the
 * names as exported, not demangled (C++ leaves: ThreadSanitizer's runtime in that build). */
static void test_pprof_go(void **state)
{
	(void)state;
	static char out[1 << 18];
	char path[700], err[4096], id[24];

	if (!go_pprof_available("test_pprof_go")) /* make deps installs golang-go */
		skip();
	for (size_t i = 0; i < nruns; i++) {
		const struct sb_run *r = &runs[i];
		snprintf(id, sizeof(id), "%zu", i);
		snprintf(path, sizeof(path), "%s/run%zu.pb.gz", dir, i);
		assert_int_equal(run_cmd(NULL, 0, err, sizeof(err),
					 ARGS("export", "-F", "pprof", h5, "--run", id, "-o", path)), 0);

		go_pprof_read(path, ARGS("-top", "-sample_index=samples", "-nodecount=100000",
					 "-symbolize=none"), out, sizeof(out));
		const char *t = strstr(out, "Total samples = ");
		assert_non_null(t);
		assert_int_equal(strtol(t + 16, NULL, 10), (long)r->nsamples);
		/* lines "flat flat% sum% cum cum% name" after the header */
		long flat_sum = 0;
		int functions = 0;
		char *line = strstr(out, "cum%\n");
		assert_non_null(line);
		for (line = strchr(line, '\n') + 1; *line;) {
			char *nl = strchr(line, '\n'), name[256];
			long flat;
			if (nl)
				*nl = 0;
			if (sscanf(line, "%ld %*s %*s %*s %*s %255[^\n]", &flat, name) == 2) {
				if (flat != leaf_count(r, name))
					fail_msg("go tool pprof: %s flat %ld, run %ld", name, flat,
						 leaf_count(r, name));
				flat_sum += flat;
				functions++;
			}
			if (!nl)
				break;
			line = nl + 1;
		}
		assert_int_equal(flat_sum, (long)r->nsamples);
		assert_true(functions >= 2);

		go_pprof_read(path, ARGS("-tags", "-sample_index=samples"), out, sizeof(out));
		int with_tid = 0;
		for (size_t j = 0; j < r->nsamples; j++)
			with_tid += r->samples[j].tid >= 0;
		if (with_tid == 0) /* gperftools: no tids, and no label */
			continue;
		assert_int_equal(with_tid, r->nsamples);
		/* " thread id: Total N.0" then "  K.0 (P%): TID" lines up to a blank line */
		t = strstr(out, "thread id: Total ");
		assert_non_null(t);
		assert_int_equal(strtol(t + 17, NULL, 10), (long)r->nsamples);
		int threads = 0;
		for (const char *l = strchr(t, '\n') + 1; *l && *l != '\n';) {
			double k;
			long tid;
			if (sscanf(l, " %lf (%*[^)]): %ld", &k, &tid) == 2) {
				long want = 0;
				for (size_t j = 0; j < r->nsamples; j++)
					want += r->samples[j].tid == tid;
				assert_int_equal((long)k, want);
				threads++;
			}
			const char *nl = strchr(l, '\n');
			if (!nl)
				break;
			l = nl + 1;
		}
		assert_true(threads >= 2); /* skewed with 2 threads: both sampled */
	}
	assert_int_equal(stray_files(), 0);
}

/* A run built by hand with named threads: slots 0-2 named, slot 3 unnamed; samples
 * (tid/slot) 100/0 twice, 101/1, 102/none (found by its tid), none/none, 103/3. */
static struct sb_run named_run(struct sb_thread_row rows[4], struct sb_sample samples[6],
			       struct sb_symbol *sym, uint64_t *frame)
{
	static const int32_t tid[6] = { 100, 100, 101, 102, -1, 103 };
	static const int32_t slot[6] = { 0, 0, 1, -1, -1, 3 };
	static const char *const name[4] = { "encoder", "decoder", "mux", "" };

	*sym = (struct sb_symbol){ .pc = 0x1000, .module = "app", .function = "work" };
	*frame = 0x1000;
	for (int k = 0; k < 4; k++) {
		rows[k] = (struct sb_thread_row){ .index = k, .tid = 100 + k };
		snprintf(rows[k].name, sizeof(rows[k].name), "%s", name[k]);
	}
	for (int i = 0; i < 6; i++)
		samples[i] = (struct sb_sample){ .tid = tid[i], .thread_index = slot[i],
						 .time_ns = 1000000 * (uint64_t)(i + 1), .depth = 1,
						 .weight_ns = 1e7 };
	return (struct sb_run){ .run_id = 3, .sampler = "ctimer", .workload = "named",
				.threads = 4, .hz = 100, .samples = samples, .nsamples = 6,
				.frames = frame, .nframes = 1, .symbols = sym, .nsymbols = 1,
				.thread_rows = rows, .nthread_rows = 4 };
}

/* A sample's thread name is its slot row's, else the row of its tid; a thread's is its
 * samples' when they agree; control characters and a name filling all 16 bytes are cut
 * to a C string. Mutations: without the tid fallback the slot-less sample 3 has no name
 * (fails); with rows looked up by position only, rows out of slot order name the wrong
 * thread (fails). */
static void test_thread_name(void **state)
{
	(void)state;
	struct sb_thread_row rows[4];
	struct sb_sample samples[6];
	struct sb_symbol sym;
	uint64_t frame;
	struct sb_run r = named_run(rows, samples, &sym, &frame);
	static const char *const want[6] = { "encoder", "encoder", "decoder", "mux", "", "" };
	char name[SB_THREAD_NAME_LEN];

	for (size_t i = 0; i < 6; i++)
		assert_string_equal(export_thread_name(&r, i, name), want[i]);
	assert_string_equal(export_tid_name(&r, 100, name), "encoder");
	assert_string_equal(export_tid_name(&r, 102, name), "mux");
	assert_string_equal(export_tid_name(&r, 103, name), "");
	assert_string_equal(export_tid_name(&r, -1, name), "");
	/* rows out of slot order: found by their index (their tids are other threads', so the
	 * tid cannot find them) */
	struct sb_thread_row swapped[4] = { rows[1], rows[0], rows[2], rows[3] };
	for (int k = 0; k < 4; k++)
		swapped[k].tid += 1000;
	r.thread_rows = swapped;
	assert_string_equal(export_thread_name(&r, 0, name), "encoder");
	assert_string_equal(export_thread_name(&r, 2, name), "decoder");
	/* a name that fills its 16 bytes, with a control character */
	memcpy(swapped[1].name, "0123456789\tbcdef", SB_THREAD_NAME_LEN);
	assert_string_equal(export_thread_name(&r, 0, name), "0123456789_bcde");
	/* a sample on a tid two samples share with different names: no one name */
	r.thread_rows = rows;
	samples[5].tid = 100;
	assert_string_equal(export_tid_name(&r, 100, name), "");
}

/* Writes r with write into a malloc'd string. */
static char *export_text(int64_t (*write)(FILE *, const struct sb_run *), const struct sb_run *r)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	assert_non_null(f);
	assert_int_equal(write(f, r), (int64_t)r->nsamples);
	fclose(f);
	return buf;
}

/* speedscope names a profile "NAME (tid N)", which its reader still reads the tid from,
 * and "tid N" without a name; Firefox names a thread NAME (its tid is a field of its own),
 * "tid N" without one. Mutation: speedscope named "NAME" alone: the round trip loses the
 * encoder's tid (fails). */
static void test_thread_name_json(void **state)
{
	(void)state;
	struct sb_thread_row rows[4];
	struct sb_sample samples[6];
	struct sb_symbol sym;
	uint64_t frame;
	struct sb_run r = named_run(rows, samples, &sym, &frame), back;
	char err[256];

	char *ss = export_text(export_speedscope, &r);
	assert_non_null(strstr(ss, "\"name\":\"encoder (tid 100)\""));
	assert_non_null(strstr(ss, "\"name\":\"decoder (tid 101)\""));
	assert_non_null(strstr(ss, "\"name\":\"mux (tid 102)\""));
	assert_non_null(strstr(ss, "\"name\":\"tid 103\""));
	assert_non_null(strstr(ss, "\"name\":\"tid unknown\""));
	assert_int_equal(import_buffer(import_format_find("speedscope"), (unsigned char *)ss,
				       strlen(ss), &back, err, sizeof(err)), 0);
	size_t encoder = 0;
	for (size_t i = 0; i < back.nsamples; i++)
		encoder += back.samples[i].tid == 100;
	assert_int_equal(encoder, 2);
	run_free(&back);
	free(ss);

	char *ff = export_text(export_firefox, &r);
	assert_non_null(strstr(ff, "\"tid\":100,\"name\":\"encoder\","));
	assert_non_null(strstr(ff, "\"tid\":102,\"name\":\"mux\","));
	assert_non_null(strstr(ff, "\"tid\":103,\"name\":\"tid 103\","));
	assert_non_null(strstr(ff, "\"tid\":-1,\"name\":\"tid unknown\","));
	free(ff);
}

/* The count go tool pprof -tags gives value under "KEY: Total", or -1 when not listed;
 * *total gets the Total (-1 when the key is absent). */
static long go_tag(const char *out, const char *key, const char *value, long *total)
{
	char head[64];
	snprintf(head, sizeof(head), " %s: Total ", key);
	const char *t = strstr(out, head);

	*total = t ? strtol(t + strlen(head), NULL, 10) : -1;
	if (!t)
		return -1;
	/* "  K.0 (P%): VALUE" lines up to a blank line */
	for (const char *l = strchr(t, '\n') + 1; *l && *l != '\n';) {
		double k;
		char v[64];
		if (sscanf(l, " %lf (%*[^)]): %63s", &k, v) == 2 && strcmp(v, value) == 0)
			return (long)k;
		const char *nl = strchr(l, '\n');
		if (!nl)
			break;
		l = nl + 1;
	}
	return -1;
}

/* pprof: every sample of a named thread carries the string label "thread name" (as
 * Datadog's profilers write it, beside "thread id"); unnamed ones carry none. Read back by
 * `go tool pprof -tags` (which does not list a label whose value is "", so the unnamed
 * samples are the difference between the Totals). Mutation: the labels pointing at the
 * function names' strings instead of the thread names' (fails). */
static void test_thread_name_pprof(void **state)
{
	(void)state;
	struct sb_thread_row rows[4];
	struct sb_sample samples[6];
	struct sb_symbol sym;
	uint64_t frame;
	struct sb_run r = named_run(rows, samples, &sym, &frame);
	static char out[1 << 16];
	char path[700];
	long total;

	if (!go_pprof_available("test_thread_name_pprof"))
		skip();
	snprintf(path, sizeof(path), "%s/named.pb.gz", dir);
	go_pprof(&r, 6, path, ARGS("-tags", "-sample_index=samples"), out, sizeof(out));
	assert_int_equal(go_tag(out, "thread name", "encoder", &total), 2);
	assert_int_equal(total, 4);
	assert_int_equal(go_tag(out, "thread name", "decoder", &total), 1);
	assert_int_equal(go_tag(out, "thread name", "mux", &total), 1);
	assert_int_equal(go_tag(out, "thread id", "100", &total), 2);
	assert_int_equal(total, 5);
}

/* Asserts exit 2, one stderr line starting "sampbench: " containing want, no out file. */
static void expect_bad(const char *want, const char *out, const char *const *args)
{
	char err[1024];
	int rc = run_cmd(NULL, 0, err, sizeof(err), args);
	char *nl = strchr(err, '\n');

	if (rc != 2 || !nl || nl[1] || !strstr(err, want))
		fail_msg("want exit 2 and one line with '%s', got exit %d: %s", want, rc, err);
	assert_int_equal(strncmp(err, "sampbench: ", 11), 0);
	assert_true(nl > err && nl[-1] != '.');
	if (out)
		assert_int_not_equal(access(out, F_OK), 0);
	assert_int_equal(stray_files(), 0);
}

static void test_bad_input(void **state)
{
	(void)state;
	char out[700], junk[700];

	snprintf(out, sizeof(out), "%s/bad.out", dir);
	snprintf(junk, sizeof(junk), "%s/junk.h5", dir);
	FILE *f = fopen(junk, "w");
	assert_non_null(f);
	fputs("not hdf5\n", f);
	fclose(f);
	expect_bad("no run 99", out, ARGS("export", "-F", "folded", h5, "--run", "99", "-o", out));
	expect_bad("unknown format 'svg'", out, ARGS("export", "-F", "svg", h5, "-o", out));
	expect_bad("missing --format", out, ARGS("export", h5, "-o", out));
	expect_bad("cannot read", out, ARGS("export", "-F", "folded", junk, "-o", out));
	expect_bad("cannot read", out,
		   ARGS("export", "-F", "folded", "/nonexistent/x.h5", "-o", out));
	expect_bad("pick one with --run", out, ARGS("export", "-F", "pprof", h5, "-o", out));
	expect_bad("unknown format 'pprof-symbols'", out,
		   ARGS("export", "-F", "pprof-symbols", h5, "--run", "0", "-o", out));
	expect_bad("needs -o", NULL, ARGS("export", "-F", "pprof", h5, "--run", "0"));
	expect_bad("invalid integer", out,
		   ARGS("export", "-F", "folded", h5, "--run", "x", "-o", out));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_folded_synthetic),
		cmocka_unit_test(test_folded_real),
		cmocka_unit_test(test_pprof_round_trip),
		cmocka_unit_test(test_pprof_go),
		cmocka_unit_test(test_thread_name),
		cmocka_unit_test(test_thread_name_json),
		cmocka_unit_test(test_thread_name_pprof),
		cmocka_unit_test(test_bad_input),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
