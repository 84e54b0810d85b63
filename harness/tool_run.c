/* tool_run.c - one run of a workload under a tool (tool.h): `sampbench target` launched by
 * the recipe's command in a scratch directory, its truth file read back into the run's
 * thread rows, the tool's profile read through the recipe's importer, its threads mapped
 * to workload slots by tid, and the run scored by the same metrics as a sampler's; and
 * tool_or_runner_run, which sends a spec to its tool or to the runner. */
#include "harness/tool.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <fcntl.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
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
	char dir[256], truth[300], out[300], log[300], pidfile[300], self[512], tools[600];
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

/* The target's command line: `sampbench target` of spec, its truth into p->truth; with
 * --pid-file and --wait when the tool attaches to it. */
struct target_argv {
	char threads[16], dur[32], seed[32], hz[32];
	const char *argv[20];
	int argc;
};

static void target_argv(struct target_argv *a, const struct run_spec *spec,
			const struct tool_paths *p, int attach)
{
	snprintf(a->threads, sizeof(a->threads), "%d", spec->threads);
	snprintf(a->dur, sizeof(a->dur), "%g", spec->duration_s);
	snprintf(a->seed, sizeof(a->seed), "%" PRIu64, spec->seed);
	snprintf(a->hz, sizeof(a->hz), "%g", spec->hz);
	const char *words[] = { p->self, "target", spec->workload->name, "-t", a->threads, "-d",
				a->dur, "--seed", a->seed, "--hz", a->hz, "--truth", p->truth,
				"--pid-file", p->pidfile, "--wait" };
	a->argc = attach ? 16 : 13;
	for (int i = 0; i < a->argc; i++)
		a->argv[i] = words[i];
	a->argv[a->argc] = NULL;
}

/* The recipe's template with its placeholders filled ({pid}: the attached target's).
 * Returns 0, or -1 when too long. */
static int expand(const struct tool *t, const struct run_spec *spec, const struct tool_paths *p,
		  pid_t pid, char *buf, size_t len)
{
	char cmd[1536] = "", out[320] = "", hz[32], pids[16];
	struct target_argv ta;

	snprintf(hz, sizeof(hz), "%g", spec->hz);
	snprintf(pids, sizeof(pids), "%d", (int)pid);
	target_argv(&ta, spec, p, 0);
	for (int i = 0; i < ta.argc; i++)
		append_word(cmd, sizeof(cmd), ta.argv[i]);
	append_word(out, sizeof(out), p->out);

	char tools[700] = "";
	append_word(tools, sizeof(tools), p->tools);
	const struct { const char *key, *value; } subs[] = {
		{ "{hz}", hz }, { "{duration}", ta.dur }, { "{cmd}", cmd }, { "{out}", out },
		{ "{pid}", pids }, { "{tools}", tools },
	};
	size_t nsubs = sizeof(subs) / sizeof(subs[0]), u = 0;
	for (const char *c = t->command; *c;) {
		size_t k = 0;
		while (k < nsubs && strncmp(c, subs[k].key, strlen(subs[k].key)))
			k++;
		const char *piece = k < nsubs ? subs[k].value : c;
		size_t n = k < nsubs ? strlen(piece) : 1;
		if (u + n >= len)
			return -1;
		memcpy(buf + u, piece, n);
		u += n;
		c += k < nsubs ? strlen(subs[k].key) : 1;
	}
	buf[u] = 0;
	return 0;
}

struct exec_arg {
	const char *const *argv; /* argv[0] is the program */
	const char *log;
};

/* The child: argv with its output appended to the log. Never returns. */
static void exec_body(void *arg)
{
	const struct exec_arg *a = arg;
	int fd = open(a->log, O_WRONLY | O_CREAT | O_APPEND, 0600);
	int null = open("/dev/null", O_RDONLY);

	if (null >= 0)
		dup2(null, STDIN_FILENO);
	if (fd >= 0) {
		dup2(fd, STDOUT_FILENO);
		dup2(fd, STDERR_FILENO);
	}
	execv(a->argv[0], (char *const *)a->argv);
	_exit(127);
}

/* Attach mode: starts the target waiting for SIGUSR1 and waits (at most 5 s) until its
 * pid file says its handler is in place. Returns 0, or -1 with why. */
static int start_waiting_target(struct child *c, const struct exec_arg *arg,
				const char *pidfile, char *why, size_t len)
{
	struct timespec tick = { 0, 10000000 };

	if (child_start(c, 1, exec_body, (void *)arg) != 0) {
		snprintf(why, len, "cannot start the target: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < 500 && access(pidfile, F_OK) != 0; i++)
		nanosleep(&tick, NULL);
	if (access(pidfile, F_OK) != 0) {
		child_kill(c);
		snprintf(why, len, "the target wrote no pid file within 5 s");
		return -1;
	}
	return 0;
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
		if (sscanf(line, "user_sys_ns %llu %llu", &v[0], &v[1]) == 2) {
			run_add_stat(r, "truth_user_ns", (double)v[0]);
			run_add_stat(r, "truth_sys_ns", (double)v[1]);
			continue;
		}
		if (sscanf(line, "process_cpu_ns %llu", &v[0]) == 1) {
			run_add_stat(r, "target_cpu_ns", (double)v[0]);
			continue;
		}
		int k;
		if (sscanf(line, "func_work %d %llu", &k, &v[0]) == 2) {
			if (k >= 0 && k < WL_MAX_FUNCS) {
				char name[32];
				snprintf(name, sizeof(name), WL_FUNC_WORK_STAT, k);
				run_add_stat(r, name, (double)v[0]);
			}
			continue;
		}
		int end = 0;
		if (sscanf(line, "%d %d %llu %llu %llu %llu %llu %llu %llu %llu%n", &row.index,
			   &row.tid, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7],
			   &end) != 10)
			continue;
		/* the rest of the line after one blank: the slot's thread name ("" unknown) */
		if (line[end] == ' ') {
			line[strcspn(line, "\n")] = 0;
			snprintf(row.name, sizeof(row.name), "%.15s", line + end + 1);
		}
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
		free(r->inlines);
		r->symbols = NULL;
		r->inlines = NULL;
		r->nsymbols = r->ninlines = 0;
		struct sb_symbolizer *sym = symbolizer_new();
		if (sym &&
		    symbolize_frames(sym, r->frames, r->nframes, &r->symbols, &r->nsymbols) == 0)
			symbolize_run_inlines(sym, r);
		symbolizer_free(sym);
	}
	free(own);
}

static int cmp_symbol_pc(const void *a, const void *b)
{
	const struct sb_symbol *x = a, *y = b;
	return (x->pc > y->pc) - (x->pc < y->pc);
}

/* sysprof 3.46 names only the symbols of .text (elfparser.c), so the slot functions of
 * this binary (section sb_slots) come as the target's addresses: each goes through the
 * capture's maps to the same place of the same file in this process, as gperftools'
 * addresses do, and is named by this process's symbolizer; the names sysprof gave stay. */
static void relocate_addresses(struct sb_run *r, const unsigned char *buf, size_t len)
{
	char err[256];
	size_t mlen = 0, own_len = 0, nmoved = 0, nnew = 0;
	char *maps = import_sysprof_maps(buf, len, &mlen);
	unsigned char *own = import_read_file("/proc/self/maps", MAPS_MAX, &own_len, err,
					      sizeof(err));
	uint64_t *moved = malloc((r->nframes ? r->nframes : 1) * sizeof(*moved));
	struct sb_symbolizer *sym = symbolizer_new();
	struct sb_symbol *syms = NULL, *all;

	for (size_t i = 0; maps && own && moved && sym && i < r->nframes; i++) {
		char path[900] = "";
		uint64_t pc = r->frames[i], off = 0, here = 0;
		if (pc == EXPORT_UNKNOWN_PC || pc >= IMPORT_PC_BASE)
			continue; /* named by the capture */
		if (maps_lookup(maps, mlen, path, sizeof(path), &pc, &off) != 0 ||
		    maps_lookup((const char *)own, own_len, path, sizeof(path), &here, &off) != 0)
			here = EXPORT_UNKNOWN_PC;
		r->frames[i] = here;
		if (here != EXPORT_UNKNOWN_PC)
			moved[nmoved++] = here;
	}
	if (nmoved && symbolize_frames(sym, moved, nmoved, &syms, &nnew) == 0 &&
	    (all = realloc(r->symbols, (r->nsymbols + nnew) * sizeof(*all)))) {
		memcpy(all + r->nsymbols, syms, nnew * sizeof(*all));
		r->symbols = all;
		r->nsymbols += nnew;
		qsort(r->symbols, r->nsymbols, sizeof(*r->symbols), cmp_symbol_pc);
	}
	free(syms);
	symbolizer_free(sym);
	free(moved);
	free(own);
	free(maps);
}

/* An imported profile names its frames, and the metrics find a sample's slot from its
 * leaf's address (wl_slot_of_pc): a frame named as a slot's leaf function gets that leaf's
 * address in this process (the target is this binary), so misattribution is measured as
 * for a sampler. */
static void rebase_slot_leaves(struct sb_run *r)
{
	static char names[WL_SLOT_FNS][SB_SYM_FUNC_LEN];
	uint64_t lo[WL_SLOT_FNS], hi;
	struct sb_symbolizer *sym = symbolizer_new();
	int changed = 0;

	if (!sym)
		return;
	for (int i = 0; i < WL_SLOT_FNS; i++) {
		struct sb_symbol out;
		wl_slot_range(i, &lo[i], &hi);
		names[i][0] = 0;
		if (symbolize(sym, lo[i], &out))
			snprintf(names[i], sizeof(names[i]), "%s", out.function);
	}
	symbolizer_free(sym);
	for (size_t k = 0; k < r->nsymbols; k++) {
		struct sb_symbol *y = &r->symbols[k];
		for (int i = 0; y->pc >= IMPORT_PC_BASE && i < WL_SLOT_FNS; i++) {
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
	if (!strcmp(t->format->name, "sysprof"))
		relocate_addresses(r, buf, blen);
	if (strcmp(t->format->name, "gperftools"))
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

/* Why a process that ended with ex is no success, into why; 0 when it is one. */
static int exit_failure(const char *who, const struct child_exit *ex, double limit,
			const char *said, char *why, size_t len)
{
	if (ex->killed && ex->interrupted)
		snprintf(why, len, "interrupted");
	else if (ex->killed)
		snprintf(why, len, "watchdog: %s did not exit within %.0f s", who, limit);
	else if (!WIFEXITED(ex->status) || WEXITSTATUS(ex->status) != 0)
		snprintf(why, len, "%s %s %d: %.120s", who,
			 WIFEXITED(ex->status) ? "exited with status" : "was killed by signal",
			 WIFEXITED(ex->status) ? WEXITSTATUS(ex->status) : WTERMSIG(ex->status), said);
	else
		return 0;
	return -1;
}

/* The tools/ directory of the source tree this binary was built in, for {tools} (the
 * helper scripts recipes call, tools/sysprof-record.sh): DIR/tools for the first DIR of
 * the binary's directory and its three parents that is a sampbench tree (DIR/harness/tool.h
 * is there). Sets p->tools, or leaves it "" when there is none. */
static void find_tools(struct tool_paths *p)
{
	char dir[512], probe[600];

	snprintf(dir, sizeof(dir), "%s", p->self);
	for (int up = 0; up < 4; up++) {
		char *slash = strrchr(dir, '/');
		if (!slash || slash == dir)
			return;
		*slash = 0;
		snprintf(probe, sizeof(probe), "%s/harness/tool.h", dir);
		if (access(probe, R_OK) == 0) {
			snprintf(p->tools, sizeof(p->tools), "%s/tools", dir);
			return;
		}
	}
}

/* Runs the recipe's command: it launches the target ({cmd}), or the target is started
 * here waiting for SIGUSR1 and the command attaches to it ({pid}), and the target is let
 * go after the recipe's attach time. Returns 0, 1 when the run failed (why says how), -1
 * when the harness did (fork). */
static int run_commands(const struct tool *t, const struct run_spec *spec,
			const struct tool_paths *p, struct sb_run *r, char *why, size_t len)
{
	int attach = strstr(t->command, "{pid}") != NULL;
	char cmd[4096], said[160];
	struct target_argv ta;
	struct child target = { .pid = -1 }, tool;
	struct child_exit ex, tex;
	int rc = 1;
	double limit = spec->watchdog_s > 0 ? spec->watchdog_s
					    : spec->duration_s + fmax(5.0, spec->duration_s) +
						      TOOL_SLACK_S;
	struct child_wait_opts wopts = { .timeout_s = limit, .interrupted = &runner_interrupted,
					 .poll_ns = 10000000u };

	target_argv(&ta, spec, p, 1);
	struct exec_arg target_arg = { ta.argv, p->log };
	if (attach && start_waiting_target(&target, &target_arg, p->pidfile, why, len) != 0)
		return 1;
	if (strstr(t->command, "{tools}") && !p->tools[0]) {
		snprintf(why, len, "no sampbench source tree above %.120s for {tools}", p->self);
		goto fail_target;
	}
	if (expand(t, spec, p, target.pid, cmd, sizeof(cmd)) != 0) {
		snprintf(why, len, "the expanded command is too long");
		goto fail_target;
	}
	const char *sh[] = { "/bin/sh", "-c", cmd, NULL };
	struct exec_arg tool_arg = { sh, p->log };
	if (child_start(&tool, 1, exec_body, &tool_arg) != 0) {
		rc = -1;
		goto fail_target;
	}
	if (attach) {
		struct timespec d = { (time_t)t->attach_s,
				      (long)((t->attach_s - (double)(time_t)t->attach_s) * 1e9) };
		while (nanosleep(&d, &d) != 0 && errno == EINTR && !runner_interrupted)
			;
		kill(target.pid, SIGUSR1);
		child_wait(&target, &wopts, &tex);
	}
	child_wait(&tool, &wopts, &ex);
	child_add_rusage_stats(r, &ex.ru);
	last_log_line(p->log, said, sizeof(said));
	if (exit_failure("the tool's command", &ex, limit, said, why, len) != 0 ||
	    (attach && exit_failure("the target", &tex, limit, said, why, len) != 0))
		return 1;
	return 0;
fail_target:
	if (attach) {
		child_kill(&target);
		child_wait(&target, &wopts, &tex);
	}
	return rc;
}

/* The stat tool_cpu_ns: the CPU of the processes the command started (wait4: the
 * recording, the writing and the reading back of the profile), less the target's own when
 * the command launched it ({cmd}: the target is in that tree); an attached target ({pid})
 * is not. Work the tool leaves to a service (sysprofd) or to the kernel at each sample
 * is not in it: the latter is the target's, in its overhead. */
static void add_tool_cpu(const struct tool *t, struct sb_run *r)
{
	double tree = run_stat(r, "child_utime_ns") + run_stat(r, "child_stime_ns");
	double target = strstr(t->command, "{pid}") ? 0 : run_stat(r, "target_cpu_ns");

	if (!isnan(tree) && !isnan(target))
		run_add_stat(r, "tool_cpu_ns", fmax(0, tree - target));
}

int tool_run(const struct tool *t, const struct run_spec *spec, int64_t run_id,
	     struct sb_run *r)
{
	struct tool_paths p = { 0 };
	char why[SB_REASON_LEN] = "";
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
	/* the target is this binary (Linux: macOS has no /proc, and no tool recipe yet) */
	ssize_t sl = readlink("/proc/self/exe", p.self, sizeof(p.self) - 1);
	if (sl <= 0 || (size_t)sl >= sizeof(p.self) - 1) {
		snprintf(why, sizeof(why), "cannot find this program's path: %s", strerror(errno));
		run_set_status(r, SB_RUN_FAILED, why);
		return 0;
	}
	if (!mkdtemp(p.dir)) {
		snprintf(why, sizeof(why), "cannot make the scratch directory: %s", strerror(errno));
		run_set_status(r, SB_RUN_FAILED, why);
		return 0;
	}
	have_dir = 1;
	find_tools(&p);
	snprintf(p.truth, sizeof(p.truth), "%s/truth", p.dir);
	snprintf(p.out, sizeof(p.out), "%s/profile", p.dir);
	snprintf(p.log, sizeof(p.log), "%s/log", p.dir);
	snprintf(p.pidfile, sizeof(p.pidfile), "%s/pid", p.dir);
	int ran = run_commands(t, spec, &p, r, why, sizeof(why));
	if (ran < 0) {
		remove_dir(p.dir);
		return -1;
	}
	if (ran > 0) {
		run_set_status(r, SB_RUN_FAILED, why);
		goto out;
	}
	if (read_truth(p.truth, r, why, sizeof(why)) != 0 ||
	    read_profile(t, p.out, r, why, sizeof(why)) != 0) {
		run_set_status(r, SB_RUN_FAILED, why);
		goto out;
	}
	add_tool_cpu(t, r);
	/* the importer's own guess (gperftools' period) is not the request; a tool with a
	 * rate of its own (`rate`) samples at that rate whatever was asked */
	r->hz = t->rate_hz > 0 ? t->rate_hz : spec->hz;
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

int tool_or_runner_run(const struct run_spec *spec, int64_t run_id, struct sb_run *r)
{
	const struct tool *t = tool_of(spec->sampler);

	return t ? tool_run(t, spec, run_id, r) : runner_run(spec, run_id, r);
}
