/* tool_run.c - one run of a workload under a tool (tool.h): `sampbench target` launched by
 * the recipe's command in a scratch directory, its truth file read back into the run's
 * thread rows, the tool's profile read through the recipe's importer, its threads mapped
 * to workload slots by tid, and the run scored by the same metrics as a sampler's. */
#include "harness/tool.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/export.h"
#include "analysis/metrics.h"
#include "analysis/symbolize.h"
#include "harness/child.h"
#include "sampler/cpuprofile.h"
#include "workloads/workload.h"

#define TOOL_SLACK_S 30.0 /* beyond the target's own deadline: the tool's writing and converting */
#define MAPS_MAX (4u << 20)

struct tool_paths {
	char dir[256], truth[300], out[300], log[300], self[512];
};

/* Appends word to buf as one shell word, quoted only when it has to be (so that a recipe
 * may also put {cmd} inside quotes of its own, as bpftrace's -c '{cmd}'). */
static void append_word(char *buf, size_t len, const char *word)
{
	size_t u = strlen(buf);
	int plain = *word && strspn(word, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
					  "0123456789_./=:,+-") == strlen(word);

	if (u && u < len)
		buf[u++] = ' ';
	if (plain) {
		snprintf(buf + u, len - u, "%s", word);
		return;
	}
	for (const char *c = word; u + 5 < len; c++) {
		if (c == word)
			buf[u++] = '\'';
		if (!*c) {
			buf[u++] = '\'';
			break;
		}
		if (*c == '\'') {
			memcpy(buf + u, "'\\''", 4);
			u += 4;
		} else {
			buf[u++] = *c;
		}
	}
	buf[u < len ? u : len - 1] = 0;
}

/* The recipe's template with its placeholders filled. Returns 0, or -1 when too long. */
static int expand(const struct tool *t, const struct run_spec *spec, const struct tool_paths *p,
		  char *buf, size_t len)
{
	char cmd[1536] = "", out[320] = "", hz[32], dur[32], threads[16], seed[32];

	snprintf(hz, sizeof(hz), "%g", spec->hz);
	snprintf(dur, sizeof(dur), "%g", spec->duration_s);
	snprintf(threads, sizeof(threads), "%d", spec->threads);
	snprintf(seed, sizeof(seed), "%" PRIu64, spec->seed);
	const char *words[] = { p->self, "target", spec->workload->name, "-t", threads, "-d", dur,
				"--seed", seed, "--truth", p->truth };
	for (size_t i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		append_word(cmd, sizeof(cmd), words[i]);
	append_word(out, sizeof(out), p->out);

	const struct { const char *key, *value; } subs[] = {
		{ "{hz}", hz }, { "{duration}", dur }, { "{cmd}", cmd }, { "{out}", out },
	};
	size_t u = 0;
	for (const char *c = t->command; *c;) {
		size_t k = 0;
		while (k < sizeof(subs) / sizeof(subs[0]) &&
		       strncmp(c, subs[k].key, strlen(subs[k].key)))
			k++;
		const char *piece = k < sizeof(subs) / sizeof(subs[0]) ? subs[k].value : c;
		size_t n = k < sizeof(subs) / sizeof(subs[0]) ? strlen(piece) : 1;
		if (u + n >= len)
			return -1;
		memcpy(buf + u, piece, n);
		u += n;
		c += k < sizeof(subs) / sizeof(subs[0]) ? strlen(subs[k].key) : 1;
	}
	buf[u] = 0;
	return 0;
}

struct shell_arg {
	const char *cmd, *log;
};

/* The child: the command under /bin/sh, its output into the log. Never returns. */
static void shell_body(void *arg)
{
	const struct shell_arg *a = arg;
	int fd = open(a->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int null = open("/dev/null", O_RDONLY);

	if (null >= 0)
		dup2(null, STDIN_FILENO);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	execl("/bin/sh", "sh", "-c", a->cmd, (char *)NULL);
	_exit(127);
}

/* The last non-empty line of the log (what a failing tool said last), or "". */
static void last_log_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[256];

	buf[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (line[0])
			snprintf(buf, len, "%.150s", line);
	}
	fclose(f);
}

/* Reads the target's truth file (cmd_target.c) into r's thread rows and wall time.
 * Returns 0, or -1 with why. */
static int read_truth(const char *path, struct sb_run *r, char *why, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[512];
	unsigned long long start = 0, end = 0;

	if (!f) {
		snprintf(why, len, "cannot read the target's truth: %s", strerror(errno));
		return -1;
	}
	r->thread_rows = calloc(SB_MAX_THREADS, sizeof(*r->thread_rows));
	if (!r->thread_rows) {
		fclose(f);
		snprintf(why, len, "out of memory");
		return -1;
	}
	while (fgets(line, sizeof(line), f)) {
		struct sb_thread_row row = { .weight_ns = NAN };
		unsigned long long v[8];
		if (sscanf(line, "start_ns %llu end_ns %llu", &start, &end) == 2)
			continue;
		if (sscanf(line, "%d %d %llu %llu %llu %llu %llu %llu %llu %llu", &row.index, &row.tid,
			   &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) != 10)
			continue;
		if (row.index < 0 || row.index >= SB_MAX_THREADS ||
		    r->nthread_rows == SB_MAX_THREADS)
			continue;
		row.os_threads = (uint32_t)v[0];
		row.cpu_ns = v[1];
		row.alive_ns = v[2];
		row.offcpu_ns = v[3];
		row.ops = v[4];
		row.checksum_errors = v[5];
		row.eintr = v[6];
		row.short_io = v[7];
		r->thread_rows[r->nthread_rows++] = row;
	}
	fclose(f);
	if (r->nthread_rows == 0) {
		snprintf(why, len, "the target's truth has no thread");
		return -1;
	}
	r->wall_s = end > start ? (double)(end - start) / 1e9 : NAN;
	return 0;
}

/* In maps text (/proc/PID/maps), the executable mapping holding pc (when path is "") or
 * holding offset *off of file path: sets path, *off and *pc. Returns 0, or -1. */
static int maps_lookup(const char *text, size_t tlen, char *path, size_t plen, uint64_t *pc,
		       uint64_t *off)
{
	int by_pc = path[0] == 0;

	for (const char *l = text, *e; l < text + tlen; l = e + 1) {
		char buf[1024], perms[8], name[900] = "";
		unsigned long long lo, hi, fo;
		e = memchr(l, '\n', (size_t)(text + tlen - l));
		if (!e)
			e = text + tlen;
		if ((size_t)(e - l) >= sizeof(buf))
			continue;
		memcpy(buf, l, (size_t)(e - l));
		buf[e - l] = 0;
		if (sscanf(buf, "%llx-%llx %7s %llx %*s %*s %899s", &lo, &hi, perms, &fo, name) < 4 ||
		    !strchr(perms, 'x') || name[0] != '/')
			continue;
		if (by_pc && *pc >= lo && *pc < hi) {
			snprintf(path, plen, "%s", name);
			*off = *pc - lo + fo;
			return 0;
		}
		if (!by_pc && !strcmp(name, path) && *off >= fo && *off < fo + (hi - lo)) {
			*pc = *off - fo + lo;
			return 0;
		}
	}
	return -1;
}

/* gperftools' profile holds the target's addresses: each goes to the same place of the
 * same file in this process (the target is this binary; its libraries are mapped here too)
 * or to EXPORT_UNKNOWN_PC, and is then named by this process's symbolizer. */
static void relocate_and_symbolize(struct sb_run *r, const unsigned char *buf, size_t len)
{
	struct cpuprofile prof;
	char err[256];
	size_t own_len = 0;
	unsigned char *own = import_read_file("/proc/self/maps", MAPS_MAX, &own_len, err,
					      sizeof(err));

	if (own && cpuprofile_parse(buf, len, &prof, err, sizeof(err)) == 0) {
		for (size_t i = 0; i < r->nframes; i++) {
			char path[900] = "";
			uint64_t pc = r->frames[i], off = 0, here = 0;
			if (maps_lookup(prof.maps, prof.maps_len, path, sizeof(path), &pc, &off) != 0 ||
			    maps_lookup((const char *)own, own_len, path, sizeof(path), &here, &off) != 0)
				here = EXPORT_UNKNOWN_PC;
			r->frames[i] = here;
		}
		free(r->symbols);
		r->symbols = NULL;
		r->nsymbols = 0;
		struct sb_symbolizer *sym = symbolizer_new();
		if (sym)
			symbolize_frames(sym, r->frames, r->nframes, &r->symbols, &r->nsymbols);
		symbolizer_free(sym);
	}
	free(own);
}

static int cmp_symbol_pc(const void *a, const void *b)
{
	const struct sb_symbol *x = a, *y = b;
	return (x->pc > y->pc) - (x->pc < y->pc);
}

/* An imported profile names its frames, and the metrics find a sample's slot from its
 * leaf's address (wl_slot_of_pc): a frame named as a slot's leaf function gets that leaf's
 * address in this process (the target is this binary), so misattribution is measured as
 * for a sampler. */
static void rebase_slot_leaves(struct sb_run *r)
{
	static char names[SB_MAX_THREADS][SB_SYM_FUNC_LEN];
	uint64_t lo[SB_MAX_THREADS], hi;
	struct sb_symbolizer *sym = symbolizer_new();
	int changed = 0;

	if (!sym)
		return;
	for (int i = 0; i < SB_MAX_THREADS; i++) {
		struct sb_symbol out;
		wl_slot_range(i, &lo[i], &hi);
		names[i][0] = 0;
		if (symbolize(sym, lo[i], &out))
			snprintf(names[i], sizeof(names[i]), "%s", out.function);
	}
	symbolizer_free(sym);
	for (size_t k = 0; k < r->nsymbols; k++) {
		struct sb_symbol *y = &r->symbols[k];
		for (int i = 0; y->pc >= IMPORT_PC_BASE && i < SB_MAX_THREADS; i++) {
			if (!names[i][0] || strcmp(y->function, names[i]))
				continue;
			for (size_t f = 0; f < r->nframes; f++)
				if (r->frames[f] == y->pc)
					r->frames[f] = lo[i];
			y->pc = lo[i];
			changed = 1;
			break;
		}
	}
	if (changed)
		qsort(r->symbols, r->nsymbols, sizeof(*r->symbols), cmp_symbol_pc);
}

/* Reads the tool's profile into r's samples, frames and symbols, each sample's thread
 * mapped to its slot by the truth's tids. Returns 0, or -1 with why. */
static int read_profile(const struct tool *t, const char *path, struct sb_run *r, char *why,
			size_t len)
{
	struct sb_run imp = { 0 };
	size_t blen = 0;
	char err[256];
	unsigned char *buf = import_read_file(path, t->format->max_bytes, &blen, err, sizeof(err));

	if (!buf || import_buffer(t->format, buf, blen, &imp, err, sizeof(err)) < 0) {
		snprintf(why, len, "%s profile: %.160s", t->format->name, err);
		free(buf);
		return -1;
	}
	r->samples = imp.samples;
	r->nsamples = imp.nsamples;
	r->frames = imp.frames;
	r->nframes = imp.nframes;
	r->symbols = imp.symbols;
	r->nsymbols = imp.nsymbols;
	imp.samples = NULL;
	imp.frames = NULL;
	imp.symbols = NULL;
	run_free(&imp);
	if (!strcmp(t->format->name, "gperftools"))
		relocate_and_symbolize(r, buf, blen);
	else
		rebase_slot_leaves(r);
	free(buf);
	for (size_t i = 0; i < r->nsamples; i++) {
		struct sb_sample *s = &r->samples[i];
		s->thread_index = -1;
		for (size_t k = 0; s->tid >= 0 && k < r->nthread_rows; k++)
			if (r->thread_rows[k].tid == s->tid)
				s->thread_index = r->thread_rows[k].index;
	}
	return 0;
}

/* Removes the scratch directory and what the tool left in it (one level). */
static void remove_dir(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	char path[600];

	while (d && (e = readdir(d))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		unlink(path);
	}
	if (d)
		closedir(d);
	rmdir(dir);
}

static void run_set_status(struct sb_run *r, int status, const char *why)
{
	r->status = status;
	snprintf(r->reason, sizeof(r->reason), "%s", why);
}

int tool_run(const struct tool *t, const struct run_spec *spec, int64_t run_id,
	     struct sb_run *r)
{
	struct tool_paths p = { 0 };
	char why[SB_REASON_LEN] = "", said[160], cmd[4096];
	const char *tmp = getenv("TMPDIR");
	int have_dir = 0;

	run_init(r, spec, run_id);
	if (run_alloc_stats(r) != 0)
		return -1;
	/* the class, as a plugin's: the gate reads it from the file (gate_cells.c) */
	run_add_stat(r, "class_caps", (double)(t->as_sampler.caps |
		     ((t->as_sampler.flags & SB_SAMPLER_TICK_DRIVEN) ? 1u << 16 : 0)));
	run_add_stat(r, "class_recipe", 1);
	if (tool_available(t, why, sizeof(why)) != 0) {
		run_set_status(r, SB_RUN_SKIPPED, why);
		return 0;
	}
	snprintf(p.dir, sizeof(p.dir), "%s/sbtool.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	ssize_t sl = readlink("/proc/self/exe", p.self, sizeof(p.self) - 1);
	if (sl <= 0 || (size_t)sl >= sizeof(p.self) - 1 || !mkdtemp(p.dir)) {
		snprintf(why, sizeof(why), "cannot make the scratch directory: %s", strerror(errno));
		run_set_status(r, SB_RUN_FAILED, why);
		return 0;
	}
	have_dir = 1;
	snprintf(p.truth, sizeof(p.truth), "%s/truth", p.dir);
	snprintf(p.out, sizeof(p.out), "%s/profile", p.dir);
	snprintf(p.log, sizeof(p.log), "%s/log", p.dir);
	if (expand(t, spec, &p, cmd, sizeof(cmd)) != 0) {
		run_set_status(r, SB_RUN_FAILED, "the expanded command is too long");
		goto out;
	}

	struct shell_arg arg = { cmd, p.log };
	struct child child;
	struct child_exit ex;
	double limit = spec->watchdog_s > 0 ? spec->watchdog_s
					    : spec->duration_s + fmax(5.0, spec->duration_s) +
						      TOOL_SLACK_S;
	struct child_wait_opts wopts = { .timeout_s = limit, .interrupted = &runner_interrupted,
					 .poll_ns = 10000000u };
	if (child_start(&child, 1, shell_body, &arg) != 0) {
		remove_dir(p.dir);
		return -1;
	}
	child_wait(&child, &wopts, &ex);
	child_add_rusage_stats(r, &ex.ru);
	last_log_line(p.log, said, sizeof(said));
	if (ex.killed) {
		if (ex.interrupted)
			snprintf(why, sizeof(why), "interrupted");
		else
			snprintf(why, sizeof(why), "watchdog: the tool did not exit within %.0f s",
				 limit);
		run_set_status(r, SB_RUN_FAILED, why);
		goto out;
	}
	if (!WIFEXITED(ex.status) || WEXITSTATUS(ex.status) != 0) {
		snprintf(why, sizeof(why), "the tool's command %s %d: %.120s",
			 WIFEXITED(ex.status) ? "exited with status" : "was killed by signal",
			 WIFEXITED(ex.status) ? WEXITSTATUS(ex.status) : WTERMSIG(ex.status), said);
		run_set_status(r, SB_RUN_FAILED, why);
		goto out;
	}
	if (read_truth(p.truth, r, why, sizeof(why)) != 0 ||
	    read_profile(t, p.out, r, why, sizeof(why)) != 0) {
		run_set_status(r, SB_RUN_FAILED, why);
		goto out;
	}
	r->hz = spec->hz; /* the importer's own guess (gperftools' period) is not the request */
	metrics_compute(r, spec->workload);
	/* A format without thread ids (gperftools') leaves every sample on no thread: that
	 * is no measurement of attribution, not a wrong one (docs/tools.md). */
	size_t with_tid = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		with_tid += r->samples[i].tid >= 0;
	if (with_tid == 0) {
		r->metrics.thread_tvd = NAN;
		r->metrics.wall_thread_tvd = NAN;
		r->metrics.misattributed_fraction = NAN;
	}
	if (r->metrics.checksum_errors > 0)
		run_set_status(r, SB_RUN_FAILED, "workload checksum wrong (register corruption?)");
out:
	if (have_dir)
		remove_dir(p.dir);
	return 0;
}
