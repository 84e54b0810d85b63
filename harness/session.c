/* session.c - runs a list of specs into one HDF5 file. */
#include "harness/session.h"

#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "analysis/pauses.h"
#include "harness/calibrate.h"
#include "harness/cli.h"
#include "harness/host.h"
#include "harness/tool.h"
#include "results/h5io.h"
#include "sampler/sampler.h"

static void on_sigint(int sig)
{
	(void)sig;
	runner_interrupted = 1;
}

int run_name_width(const struct run_spec *specs, size_t n)
{
	size_t w = RUN_NAME_WIDTH;

	for (size_t i = 0; i < n; i++)
		if (strlen(specs[i].sampler->name) > w)
			w = strlen(specs[i].sampler->name);
	return (int)w;
}

void run_print_header(FILE *out, int name_width)
{
	fprintf(out, "%-*s %-10s %3s %6s %3s %-7s %8s %9s %10s %11s\n", name_width, "sampler",
		"workload", "thr", "hz", "rep", "status", "samples", "rate_acc", "thread_tvd",
		"win_p99_us");
}

static void fmt_num(char *buf, size_t len, double v, const char *fmt)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, fmt, v);
}

void run_print_line(FILE *out, const struct sb_run *r, int name_width)
{
	char rate[16], tvdb[16], win[16];
	fmt_num(rate, sizeof(rate), r->metrics.rate_accuracy, "%.3f");
	fmt_num(tvdb, sizeof(tvdb), r->metrics.thread_tvd, "%.3f");
	fmt_num(win, sizeof(win), r->metrics.suspend_window_p99_ns / 1e3, "%.1f");
	fprintf(out, "%-*s %-10s %3d %6g %3d %-7s %8.0f %9s %10s %11s", name_width, r->sampler,
		r->workload, r->threads, r->hz, r->repetition, run_status_name(r->status),
		isnan(r->metrics.nsamples) ? 0.0 : r->metrics.nsamples, rate, tvdb, win);
	if (r->status != SB_RUN_OK)
		fprintf(out, "  (%s)", r->reason);
	fputc('\n', out);
}

void warn_tick_cap(const struct sb_host *host, const struct run_spec *specs, size_t n)
{
	if (host->tick_hz <= 0)
		return;
	for (size_t i = 0; i < n; i++) {
		if ((specs[i].sampler->flags & SB_SAMPLER_TICK_DRIVEN) && specs[i].hz > host->tick_hz) {
			fprintf(stderr,
				"sampbench: warning: %g Hz exceeds the kernel tick (%d Hz, %s): "
				"tick-driven samplers such as %s cannot sample faster\n",
				specs[i].hz, host->tick_hz, host->tick_source, specs[i].sampler->name);
			return;
		}
	}
}

static double ops_per_s(const struct sb_run *r)
{
	double ops = 0;
	for (size_t i = 0; i < r->nthread_rows; i++)
		ops += (double)r->thread_rows[i].ops;
	return r->wall_s > 0 ? ops / r->wall_s : NAN;
}

/* Mean ops/s of the ok `none` runs done so far in the same cell, or NaN. */
static double none_ops_per_s(const struct sb_run *done, size_t ndone, const struct sb_run *r)
{
	double sum = 0;
	int k = 0;
	for (size_t i = 0; i < ndone; i++) {
		const struct sb_run *d = &done[i];
		/* a `none` of a variant is that variant's reference; one without is everyone's */
		if (strcmp(d->sampler, "none") || (d->variant[0] && strcmp(d->variant, r->variant)) ||
		    strcmp(d->workload, r->workload) ||
		    d->threads != r->threads || d->duration_s != r->duration_s || !run_scored(d->status))
			continue;
		double v = ops_per_s(d);
		if (!isnan(v)) {
			sum += v;
			k++;
		}
	}
	return k ? sum / k : NAN;
}

/* The output file: opts->out_path created, or opts->resume_tmp reopened; then the root
 * attributes of opts->attrs. NULL with one line in err on failure. */
static struct sb_h5 *open_output(const struct session_opts *opts, const struct sb_host *host,
				 char *err, size_t errlen)
{
	struct sb_h5 *f;

	if (opts->resume_tmp) {
		f = h5_reopen(opts->resume_tmp, opts->out_path, opts->resume_host, err, errlen);
		/* the runs already in the file keep their tables (h5_reopen); the root's are
		 * this invocation's, which the runs made from here are measured against */
		if (f && h5_set_calibration(f, host) != 0) {
			snprintf(err, errlen, "%s", h5_strerror(f));
			h5_close(f);
			return NULL;
		}
	} else {
		f = h5_create(opts->out_path, host, opts->force, err, errlen);
	}
	for (size_t i = 0; f && opts->attrs && opts->attrs[i]; i += 2) {
		if (h5_set_attr(f, opts->attrs[i], opts->attrs[i + 1]) != 0) {
			snprintf(err, errlen, "%s", h5_strerror(f));
			if (opts->resume_tmp)
				h5_close(f);
			else
				h5_abort(f);
			return NULL;
		}
	}
	return f;
}

static void free_prior(const struct session_opts *opts)
{
	for (size_t i = 0; i < opts->nprior; i++)
		run_free(&opts->prior[i]);
	free(opts->prior);
}

/* The metrics of run r that compare it with the runs before it (done[0..ndone)) and the
 * host: overhead and pause and cost excess against the cell's `none` runs, and the floor
 * ratios (external: a tool's run). */
static void score_against(struct sb_run *r, const struct sb_run *done, size_t ndone,
			  const struct sb_host *host, int external)
{
	if (run_scored(r->status) && strcmp(r->sampler, "none") != 0) {
		double base = none_ops_per_s(done, ndone, r);
		r->metrics.overhead = ops_per_s(r) / base;
	} else if (run_scored(r->status)) {
		r->metrics.overhead = 1.0;
	}
	if (run_scored(r->status) && strcmp(r->sampler, "none") != 0)
		metrics_pause_excess(r, done, ndone);
	else if (run_scored(r->status) && !isnan(r->metrics.pause_fraction))
		r->metrics.pause_excess_fraction = r->metrics.pause_excess_p99_ns = 0;
	if (run_scored(r->status))
		metrics_cost_excess(r, done, ndone);
	if (run_scored(r->status))
		metrics_floor_ratios(r, host, external);
}

/* Keeps r's metrics and truth, drops the bulky samples. */
static void drop_samples(struct sb_run *r)
{
	free(r->samples);
	free(r->frames);
	free(r->gaps);
	r->samples = NULL;
	r->frames = NULL;
	r->gaps = NULL;
	r->ngaps = 0;
	r->nsamples = r->nframes = 0;
}

/* Runs specs[i] (of n) with the options' runner and hook, scores it against done[] and
 * the host, writes it to f, prints its line, and appends it (samples dropped) to done.
 * Returns 0 to go on (*rc turns SB_EXIT_FAIL when the run failed), or -1 when the
 * session cannot (*rc SB_EXIT_FAIL, after one error line). */
static int session_step(const struct session_opts *opts, const struct run_spec *specs,
			size_t i, size_t n, struct sb_h5 *f, const struct sb_host *host,
			struct sb_run *done, size_t *ndone, int name_width, int *rc)
{
	struct sb_run r;

	if (opts->progress && isatty(STDERR_FILENO))
		fprintf(stderr, "\r[%zu/%zu] %s %s %dt %gHz rep %d ...", i + 1, n,
			specs[i].sampler->name, specs[i].workload->name, specs[i].threads,
			specs[i].hz, specs[i].repetition);
	if (opts->hook)
		opts->hook(opts->hook_arg, i, n, &specs[i], NULL);
	int64_t id = opts->run_ids ? opts->run_ids[i] : (int64_t)i;
	int ran = opts->run ? opts->run(opts->run_arg, i, &specs[i], id, &r)
			    : tool_or_runner_run(&specs[i], id, &r);
	if (ran != 0) {
		sb_err("cannot run %s on %s: out of memory or fork failed",
		       specs[i].sampler->name, specs[i].workload->name);
		*rc = SB_EXIT_FAIL;
		return -1;
	}
	if (specs[i].reps_max) { /* the cell's range, for the gate (docs/gate.md) */
		if (!r.stats && run_alloc_stats(&r) != 0) {
			sb_err("out of memory");
			run_free(&r);
			*rc = SB_EXIT_FAIL;
			return -1;
		}
		run_add_stat(&r, "reps_min", specs[i].reps_min);
		run_add_stat(&r, "reps_max", specs[i].reps_max);
	}
	score_against(&r, done, *ndone, host, specs[i].sampler->flags & SB_SAMPLER_EXTERNAL);
	if (h5_append_run(f, &r) != 0) {
		sb_err("%s", h5_strerror(f));
		run_free(&r);
		*rc = SB_EXIT_FAIL;
		return -1;
	}
	if (opts->progress && isatty(STDERR_FILENO))
		fprintf(stderr, "\r\033[K");
	if (!opts->quiet)
		run_print_line(stdout, &r, name_width);
	fflush(stdout);
	if (opts->hook)
		opts->hook(opts->hook_arg, i, n, &specs[i], &r);
	if (r.status == SB_RUN_FAILED)
		*rc = *rc == SB_EXIT_OK ? SB_EXIT_FAIL : *rc;
	drop_samples(&r);
	done[(*ndone)++] = r;
	return 0;
}

/* Closes the session's file f: the host's calibration at the end (unless interrupted or
 * SB_CALIBRATE=0), complete or not, and the interruption's message. Returns rc, or the
 * exit code that overrides it (SB_EXIT_FAIL, 130 when interrupted). */
static int session_close(const struct session_opts *opts, struct sb_h5 *f, struct sb_host *host,
			 int interrupted, size_t ndone, size_t nleft, size_t n, int rc)
{
	const char *cal = getenv("SB_CALIBRATE");
	if (!interrupted && !(cal && !strcmp(cal, "0")) && calibrate_host(host, "end") > 0 &&
	    h5_set_calibration(f, host) != 0) {
		sb_err("%s", h5_strerror(f));
		rc = SB_EXIT_FAIL;
	}
	h5_set_complete(f, !interrupted && ndone + nleft == opts->nprior + n);
	if (h5_close(f) != 0) /* h5_close printed why */
		rc = SB_EXIT_FAIL;
	if (interrupted) {
		sb_err("interrupted: %zu of %zu runs kept in '%s' (marked incomplete)", ndone,
		       opts->nprior + n - nleft, opts->out_path);
		rc = 130;
	}
	return rc;
}

int session_run(const struct session_opts *opts, const struct run_spec *specs, size_t n,
		struct sb_run **runs_out, size_t *nruns_out)
{
	struct sb_host host;
	char err[256];
	struct sigaction sa, old;
	struct sb_run *done = calloc(opts->nprior + n + 1, sizeof(*done));
	size_t ndone = 0;
	int rc = SB_EXIT_OK;

	if (!done) {
		sb_err("out of memory");
		free_prior(opts);
		return SB_EXIT_FAIL;
	}
	if (opts->nprior)
		memcpy(done, opts->prior, opts->nprior * sizeof(*done));
	free(opts->prior); /* its runs now belong to done */
	ndone = opts->nprior;
	host_probe_calibrated(&host);
	struct sb_h5 *f = open_output(opts, &host, err, sizeof(err));
	if (!f) {
		sb_err("%s", err);
		for (size_t i = 0; i < ndone; i++)
			run_free(&done[i]);
		free(done);
		return SB_EXIT_USAGE;
	}
	warn_tick_cap(&host, specs, n);

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigint;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old);
	runner_interrupted = 0;

	int name_width = run_name_width(specs, n);
	if (!opts->quiet)
		run_print_header(stdout, name_width);
	size_t nleft = 0; /* specs opts->want left out */
	for (size_t i = 0; i < n && !runner_interrupted; i++) {
		if (opts->want && !opts->want(opts->want_arg, i, &specs[i], &host, done, ndone)) {
			nleft++;
			continue;
		}
		if (session_step(opts, specs, i, n, f, &host, done, &ndone, name_width, &rc) != 0)
			break;
	}
	int interrupted = runner_interrupted;
	sigaction(SIGINT, &old, NULL);
	rc = session_close(opts, f, &host, interrupted, ndone, nleft, n, rc);
	if (runs_out) {
		*runs_out = done;
		*nruns_out = ndone;
	} else {
		for (size_t i = 0; i < ndone; i++)
			run_free(&done[i]);
		free(done);
	}
	return rc;
}
