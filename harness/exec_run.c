/* exec_run.c - one run of `sampbench exec` (exec_run.h): the child (child.c) waits on a
 * pipe until the mode attached, then execs the program; this process polls its threads
 * in /proc for the truth and keeps a copy of its memory map for symbolization, because
 * the program's layout is not ours. */
#include "harness/exec_run.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "analysis/symbolize.h"
#include "core/exec_shm.h"
#include "core/iso_time.h"
#include "harness/child.h"
#include "platform/platform.h"

#define EXEC_POLL_NS 5000000ull       /* /proc truth and perf rings */
#define EXEC_MAPS_EVERY 4             /* polls between two copies of the maps */

static void poll_maps(struct exec_ctx *c, char *buf, size_t cap)
{
	size_t n = exec_read_maps(c->pid, buf, cap);
	if (n == 0)
		return;
	char *m = realloc(c->maps, n);
	if (!m)
		return;
	memcpy(m, buf, n);
	c->maps = m;
	c->maps_len = n;
}

static const struct exec_tid *by_tid_base;

static int cmp_tid_born(const void *a, const void *b)
{
	const struct exec_tid *x = &by_tid_base[*(const size_t *)a];
	const struct exec_tid *y = &by_tid_base[*(const size_t *)b];
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return (x->first_ns > y->first_ns) - (x->first_ns < y->first_ns);
}

/* The truth's entries sorted by (tid, first_ns), as indices; NULL when out of memory. */
static size_t *sorted_entries(const struct exec_truth *tr)
{
	size_t *idx = malloc((tr->n + 1) * sizeof(*idx));
	if (!idx)
		return NULL;
	for (size_t i = 0; i < tr->n; i++)
		idx[i] = i;
	by_tid_base = tr->t;
	qsort(idx, tr->n, sizeof(*idx), cmp_tid_born);
	return idx;
}

/* The entry of tid born last before time_ns, else its last born; -1 when none. idx sorts
 * the n entries t by (tid, first_ns). */
static long entry_at(const struct exec_tid *t, const size_t *idx, size_t n, pid_t tid,
		     uint64_t time_ns)
{
	size_t lo = 0, hi = n;
	while (lo < hi) { /* the first entry with a tid above tid */
		size_t mid = lo + (hi - lo) / 2;
		if (t[idx[mid]].tid <= tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	long best = -1;
	for (size_t k = lo; k-- > 0 && t[idx[k]].tid == tid;) {
		if (best < 0)
			best = (long)idx[k];
		if (t[idx[k]].first_ns <= time_ns)
			return (long)idx[k];
	}
	return best;
}

/* Thread slots of an exec run: fewer than a workload's SB_MAX_THREADS, because a program's
 * threads are judged from the samples it gets, and thread_tvd over more slots than a run
 * has samples per slot measures counting noise (300 threads at 100 Hz: ~60 samples). */
#define EXEC_SLOTS 64
_Static_assert(EXEC_SLOTS <= SB_MAX_THREADS, "exec slots are thread rows");

/* Copies the sink into r, numbers threads by first appearance (the truth's order, then
 * threads only the samples saw), and fills the truth rows: one slot per thread up to
 * EXEC_SLOTS; when there are more, the last slot pools every later thread (its
 * os_threads says how many), so thread_tvd compares the first ones one by one and the
 * rest as one. */
static int collect(struct exec_ctx *c)
{
	struct sb_run *r = c->r;
	struct exec_truth *tr = c->truth;

	r->thread_rows = calloc(EXEC_SLOTS, sizeof(*r->thread_rows));
	if (child_collect_sink(r, c->sink) != 0 || !r->thread_rows)
		return -1;
	/* threads only the samples saw get an entry */
	size_t *idx = sorted_entries(tr);
	size_t before = tr->n;
	for (size_t i = 0; idx && i < r->nsamples; i++) {
		pid_t tid = r->samples[i].tid;
		if (tid > 0 && entry_at(tr->t, idx, before, tid, UINT64_MAX) < 0 &&
		    (i == 0 || tid != r->samples[i - 1].tid) && !exec_truth_tid(tr, tid))
			break;
	}
	if (idx && tr->n != before) {
		free(idx);
		idx = sorted_entries(tr);
	}
	if (!idx)
		return -1;
	size_t program = 0;
	for (size_t i = 0; i < tr->n; i++)
		program += !tr->t[i].helper;
	int *slot_of = malloc((tr->n + 1) * sizeof(*slot_of));
	if (!slot_of) {
		free(idx);
		return -1;
	}
	int nslots = 0, pooled = 0;
	for (size_t i = 0; i < tr->n; i++) {
		struct exec_tid *t = &tr->t[i];
		slot_of[i] = -1;
		if (t->helper)
			continue;
		int pool = program > EXEC_SLOTS && nslots == EXEC_SLOTS - 1;
		struct sb_thread_row *row;
		if (pool || nslots == EXEC_SLOTS) {
			row = &r->thread_rows[EXEC_SLOTS - 1];
			if (row->os_threads == 0) {
				row->index = EXEC_SLOTS - 1;
				row->tid = t->tid;
				row->weight_ns = NAN;
				nslots = EXEC_SLOTS;
			}
			pooled++;
		} else {
			row = &r->thread_rows[nslots];
			row->index = nslots++;
			row->tid = t->tid;
			row->weight_ns = NAN;
		}
		slot_of[i] = row->index;
		/* the slot's name is its threads' one name; a pooled slot whose threads differ
		 * has none, so that no pattern charges one thread's name with the others' */
		if (row->os_threads == 0) {
			memcpy(row->name, t->name, sizeof(row->name));
			row->name[sizeof(row->name) - 1] = 0;
		} else if (strncmp(row->name, t->name, sizeof(row->name) - 1) != 0) {
			row->name[0] = 0;
		}
		row->os_threads++;
		row->cpu_ns += t->cpu_ns;
		row->alive_ns += t->last_ns > t->first_ns ? t->last_ns - t->first_ns : 0;
	}
	r->nthread_rows = (size_t)nslots;
	/* a sample's thread: same tid, born before it (tids are reused) */
	for (size_t i = 0; i < r->nsamples; i++) {
		struct sb_sample *s = &r->samples[i];
		long k = s->tid > 0 ? entry_at(tr->t, idx, tr->n, s->tid, s->time_ns) : -1;
		s->thread_index = k >= 0 ? slot_of[k] : -1;
	}
	free(idx);
	free(slot_of);
	r->threads = nslots;
	run_add_stat(r, "sink_dropped", (double)atomic_load(&c->sink->dropped));
	run_add_stat(r, "truth_polls", (double)tr->polls);
	run_add_stat(r, "truth_from_stat_ticks", tr->from_stat);
	run_add_stat(r, "truth_threads", (double)program);
	run_add_stat(r, "truth_pooled_threads", pooled);
	return 0;
}

/* Below this share of the program's CPU time the threads read are not its truth. */
#define EXEC_TRUTH_MIN_COVER 0.90
/* ...judged only when the program used this much CPU: /proc reads lose up to a tick per
 * thread, which a program of a few ms cannot afford. */
#define EXEC_TRUTH_MIN_CPU_NS 50e6

/* A sampler whose samples carry no thread (gperftools: its profile format has none, and
 * it names the thread from a workload's slot functions, which a program does not have)
 * cannot be judged per thread: thread_tvd is not measured, where the metrics would put
 * every sample on "no thread" and say 1.0. Said in the reason. */
static void no_thread_ids(struct sb_run *r)
{
	for (size_t i = 0; i < r->nsamples; i++)
		if (r->samples[i].thread_index >= 0)
			return;
	if (r->nsamples == 0)
		return;
	r->metrics.thread_tvd = r->metrics.wall_thread_tvd = NAN;
	snprintf(r->reason, sizeof(r->reason), "no sample names its thread: thread_tvd not "
		 "measured");
}

/* Checks the truth against the program's own CPU time, which is exact: wait4's total
 * minus its children's (those it waited for, which wait4 includes; their samples are not
 * taken, their threads not read: excluded by construction). When the threads read cover
 * less than EXEC_TRUTH_MIN_COVER of it, the run is SB_RUN_INCOMPLETE, a CPU sampler is
 * scored against the process total for rate and magnitude, and the per-thread metrics are
 * NaN (their truth is missing). A sampler that took no sample of a program that used CPU
 * enough for 10 fails. Call after metrics_compute. */
static void check_truth(struct exec_ctx *c)
{
	struct sb_run *r = c->r;
	struct sb_metrics *m = &r->metrics;
	double read = 0, helpers = 0, exact = 0;

	for (size_t i = 0; i < c->truth->n; i++) {
		read += (double)c->truth->t[i].cpu_ns;
		helpers += c->truth->t[i].helper ? (double)c->truth->t[i].cpu_ns : 0;
		exact += c->truth->t[i].exact;
	}
	double children = fmin(c->children_cpu_ns, c->process_cpu_ns);
	double total = c->process_cpu_ns - children;
	double program = total - helpers; /* the sampler's own threads are no truth */
	/* Without the agent the children's share is /proc's cutime + cstime, each cut to a
	 * clock tick: up to two ticks of theirs may remain in total, not the threads' due. */
	double slack = c->children_exact || children <= 0 ? 0 : 2e9 / (double)sysconf(_SC_CLK_TCK);
	double cover = total > 0 ? fmin(read / fmax(total - slack, 1), 1.0) : NAN;
	run_add_stat(r, "truth_cpu_cover", cover);
	run_add_stat(r, "truth_exact_threads", exact);
	run_add_stat(r, "truth_children_cpu_ns", children);
	run_add_stat(r, "truth_children_exact", c->children_exact);
	if (r->status == SB_RUN_OK && program / 1e9 * r->hz >= 10 && r->nsamples == 0) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "no sample of a program that used %.2f s "
			 "of CPU (wait4)", program / 1e9);
		return;
	}
	if (r->status == SB_RUN_OK && children > 0) {
		size_t u = strlen(r->reason);
		snprintf(r->reason + u, sizeof(r->reason) - u, "%schildren excluded: %.3f s of CPU "
			 "in the processes it forked and waited for is in no truth", u ? "; " : "",
			 children / 1e9);
	}
	if (r->status != SB_RUN_OK || total < EXEC_TRUTH_MIN_CPU_NS ||
	    !(cover < EXEC_TRUTH_MIN_COVER))
		return;
	r->status = SB_RUN_INCOMPLETE;
	snprintf(r->reason, sizeof(r->reason), "truth incomplete: the threads read cover %.0f %% "
		 "of the program's CPU (wait4%s); scored against the process total, no "
		 "per-thread metrics", cover * 100, children > 0 ? " minus its children" : "");
	m->thread_tvd = m->wall_thread_tvd = m->misattributed_fraction = NAN;
	if (r->clock == SB_CLOCK_WALL) {
		/* a wall sampler's expectation is the threads' lives, which were not all seen */
		m->expected_samples = m->rate_accuracy = m->wall_rate_accuracy = NAN;
		m->magnitude_error = NAN;
		return;
	}
	double weights = 0;
	size_t weighted = 0;
	for (size_t i = 0; i < r->nsamples; i++)
		if (!isnan(r->samples[i].weight_ns)) {
			weights += r->samples[i].weight_ns;
			weighted++;
		}
	m->expected_samples = program / 1e9 * r->hz;
	m->rate_accuracy = m->expected_samples > 0 ? (double)r->nsamples / m->expected_samples
						    : NAN;
	double mx = fmax(weights, program);
	m->magnitude_error = weighted && mx > 0 ? fabs(weights - program) / mx : NAN;
}

struct exec_child_arg {
	struct exec_ctx *c;
	int go[2], ok[2];
};

/* The child: waits until the parent attached (perf events must exist before execve),
 * then the mode's environment and execvp. On failure, its errno goes up the ok pipe
 * (close-on-exec: EOF there means the exec worked). */
static void exec_child(void *p)
{
	const struct exec_child_arg *a = p;
	struct exec_ctx *c = a->c;
	char b;
	int e;

	close(a->go[1]); /* or the read below never sees the parent's EOF */
	close(a->ok[0]);
	while (read(a->go[0], &b, 1) < 0 && errno == EINTR)
		;
	signal(SIGINT, SIG_DFL);
	signal(SIGQUIT, SIG_DFL);
	if (c->mode->child(c) != 0) {
		e = errno;
	} else {
		execvp(c->t->argv[0], c->t->argv);
		e = errno;
	}
	if (write(a->ok[1], &e, sizeof(e)) < 0)
		_exit(127);
	_exit(127);
}

struct exec_poll_arg {
	struct exec_ctx *c;
	char *mapbuf;
};

static void exec_poll(void *p, uint64_t polls)
{
	struct exec_poll_arg *a = p;

	exec_truth_poll(a->c->truth);
	a->c->mode->poll(a->c);
	if (polls % EXEC_MAPS_EVERY == 0)
		poll_maps(a->c, a->mapbuf, SB_EXEC_MAPS_MAX);
}

/* Runs the program once under c->s: *status gets its wait status. Returns 0, or -1 when
 * the program did not run or could not be waited for (c->err says why). */
static int exec_once(struct exec_ctx *c, int *status)
{
	int go[2] = { -1, -1 }, ok[2] = { -1, -1 };
	int rc = -1;
	char *mapbuf = malloc(SB_EXEC_MAPS_MAX);
	struct child child = { .pid = -1 };

	c->pid = -1;
	if (!mapbuf || c->mode->prepare(c) != 0)
		goto cleanup;
	if (plat_pipe_cloexec(go) != 0 || plat_pipe_cloexec(ok) != 0) {
		snprintf(c->err, sizeof(c->err), "pipe: %s", strerror(errno));
		goto cleanup;
	}
	struct exec_child_arg carg = { c, { go[0], go[1] }, { ok[0], ok[1] } };
	/* The program stays in our process group: Ctrl-C at the terminal is its to handle. */
	if (child_start(&child, 0, exec_child, &carg) != 0) {
		snprintf(c->err, sizeof(c->err), "fork: %s", strerror(errno));
		goto cleanup;
	}
	c->pid = child.pid;
	close(go[0]);
	close(ok[1]);
	go[0] = ok[1] = -1;
	if (c->mode->attach(c) != 0) {
		child_kill(&child);
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		goto cleanup;
	}
	uint64_t t0 = sb_now_ns();
	close(go[1]); /* EOF: exec */
	go[1] = -1;
	int e = 0;
	ssize_t k;
	while ((k = read(ok[0], &e, sizeof(e))) < 0 && errno == EINTR)
		;
	if (k == sizeof(e)) {
		snprintf(c->err, sizeof(c->err), "cannot execute '%s': %s", c->t->argv[0],
			 strerror(e));
		waitpid(c->pid, NULL, 0);
		c->pid = -1;
		goto cleanup;
	}
	exec_truth_init(c->truth, c->pid);
	struct exec_poll_arg parg = { c, mapbuf };
	struct child_wait_opts wopts = { .poll_ns = EXEC_POLL_NS, .poll = exec_poll, .arg = &parg,
					 .poll_exited = 1 };
	struct child_exit ex;
	if (child_wait(&child, &wopts, &ex) != 0) {
		snprintf(c->err, sizeof(c->err), "wait: %s", strerror(errno));
		goto cleanup;
	}
	*status = ex.status;
	c->r->wall_s = (double)(sb_now_ns() - t0) / 1e9;
	c->mode->finish(c);
	if (!c->children_exact) /* the last poll's: children reaped after it are missed */
		c->children_cpu_ns = (double)c->truth->children_ns;
	if (collect(c) != 0) {
		snprintf(c->err, sizeof(c->err), "out of memory");
		goto cleanup;
	}
	child_add_rusage_stats(c->r, &ex.ru);
	c->process_cpu_ns = (double)ex.ru.ru_utime.tv_sec * 1e9 + ex.ru.ru_utime.tv_usec * 1e3 +
			    (double)ex.ru.ru_stime.tv_sec * 1e9 + ex.ru.ru_stime.tv_usec * 1e3;
	rc = 0;
cleanup:
	for (int i = 0; i < 2; i++) {
		if (go[i] >= 0)
			close(go[i]);
		if (ok[i] >= 0)
			close(ok[i]);
	}
	free(mapbuf);
	return rc;
}

int exec_run(const struct exec_target *t, const struct sampler *s, int64_t run_id,
	     const char *cmdline, struct sb_run *r)
{
	struct exec_ctx c = { .t = t, .s = s, .memfd = -1, .r = r };
	int status = -1, rc = -1;

	memset(r, 0, sizeof(*r));
	metrics_clear(&r->metrics);
	r->run_id = run_id;
	snprintf(r->sampler, sizeof(r->sampler), "%s", s->name);
	snprintf(r->workload, sizeof(r->workload), "%s", cmdline);
	r->hz = t->hz;
	r->clock = s->clock;
	iso_now(r->start_time, sizeof(r->start_time));
	c.truth = calloc(1, sizeof(*c.truth));
	if (run_alloc_stats(r) != 0 || !c.truth) {
		snprintf(r->reason, sizeof(r->reason), "out of memory");
		r->status = SB_RUN_FAILED;
		goto cleanup;
	}
	c.mode = exec_mode_of(s);
	if (!c.mode) {
		r->status = SB_RUN_SKIPPED;
		snprintf(r->reason, sizeof(r->reason),
			 "%s cannot sample another program yet (exec supports the agent's samplers, "
			 "perf and plugins)", s->name);
		goto cleanup;
	}
	if (exec_once(&c, &status) != 0) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "%s", c.err);
		goto cleanup;
	}
	rc = status;
	r->duration_s = r->wall_s;
	run_add_stat(r, "exit_code", WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	run_add_stat(r, "exit_signal", WIFSIGNALED(status) ? WTERMSIG(status) : 0);
	r->status = c.failed ? SB_RUN_FAILED : SB_RUN_OK;
	if (WIFSIGNALED(status) && !c.failed) {
		r->status = SB_RUN_FAILED;
		snprintf(r->reason, sizeof(r->reason), "program killed by signal %s",
			 plat_signal_name(WTERMSIG(status)) ? plat_signal_name(WTERMSIG(status))
							    : "?");
	}
	if (r->nframes > 0) {
		size_t nleaves = 0;
		uint64_t *leaves = symbol_leaf_pcs(r->samples, r->nsamples, r->frames,
						   r->nframes, &nleaves);
		/* out of memory for leaves: every PC's chain is looked up as it is */
		exec_symbolize(c.maps, c.maps_len, r->frames, r->nframes, leaves, nleaves,
			       &r->symbols, &r->nsymbols, &r->inlines, &r->ninlines);
		free(leaves);
	}
	metrics_compute(r, NULL);
	/* No workload code in the program: slot leaves and chains cannot be judged. */
	r->metrics.misattributed_fraction = NAN;
	r->metrics.stack_correct_fraction = NAN;
	r->metrics.stack_unwalkable_fraction = NAN;
	r->metrics.function_tvd = NAN;
	no_thread_ids(r);
	check_truth(&c);
cleanup:
	if (c.mode)
		c.mode->cleanup(&c);
	if (c.truth) {
		exec_truth_close(c.truth);
		free(c.truth);
	}
	free(c.maps);
	return rc;
}
