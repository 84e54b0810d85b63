/* cmd_run.c - `sampbench run`: samplers side by side on a workload, into one HDF5 file. */
#include <stdlib.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/expect_step.h"
#include "harness/session.h"
#include "harness/tool.h"
#include "sampler/plugin.h"
#include "workloads/workload.h"

#define SB_MAX_HZ 20000.0
#define SB_MAX_LIST 32

static const char run_usage[] =
	"usage: sampbench run --sampler S[,S...] [--tool T[,T...]] --workload W[,W...] -o FILE.h5\n"
	"                     [options]\n"
	"\n"
	"Runs each sampler and tool on each workload at each thread count (every cell runs\n"
	"them all, per repetition), every run in its own child process, and writes the\n"
	"samples, truth and metrics to FILE.h5. Prints one line per run. A tool (a profiler\n"
	"that is a program: docs/tools.md) runs `sampbench target` under its recipe's command\n"
	"and is scored from the profile it writes, beside the samplers.\n"
	"\n";

static struct env {
	const char *samplers;
	const char *tools;
	const char *workloads;
	const char *variants;
	int threads[SB_MAX_LIST];
	int nthreads;
	double hz;
	double duration_s;
	long reps;
	const char *out;
	int force;
	long param;
	long stack_kb;
	int idle_skip;
	int no_rt;
	long seed;
	int quiet;
	const char *expect;
} env;

static const struct env env_defaults = {
	.threads = { 4 }, .nthreads = 1, .hz = 100, .duration_s = 2, .reps = 1, .seed = 1,
};

/* Splits a comma list in place into at most max names. Returns the count, or -1. */
static int split_list(char *s, char **out, int max)
{
	int n = 0;
	for (char *tok = strtok(s, ","); tok; tok = strtok(NULL, ",")) {
		if (n == max)
			return -1;
		out[n++] = tok;
	}
	return n;
}

/* --threads N[,N...]: each count a workload of its own size, 1..SB_MAX_THREADS, none twice;
 * the last --threads given wins. */
static int parse_threads(const struct opt *o, const char *arg)
{
	char buf[512], *save = NULL;
	int n = 0;

	(void)o;
	if (strlen(arg) >= sizeof(buf)) {
		sb_err("--threads list is longer than %zu characters", sizeof(buf) - 1);
		return -1;
	}
	snprintf(buf, sizeof(buf), "%s", arg);
	for (char *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		long v;
		if (n == SB_MAX_LIST) {
			sb_err("--threads lists more than %d counts", SB_MAX_LIST);
			return -1;
		}
		if (sb_parse_int("--threads", tok, 1, SB_MAX_THREADS, &v) != 0)
			return -1;
		for (int i = 0; i < n; i++)
			if (env.threads[i] == (int)v) {
				sb_err("--threads lists %ld twice", v);
				return -1;
			}
		env.threads[n++] = (int)v;
	}
	if (n == 0) {
		sb_err("--threads list is empty");
		return -1;
	}
	env.nthreads = n;
	return 0;
}

const struct opt cmd_run_options[] = {
	OPT_STRING('s', "sampler", &env.samplers, "LIST",
		   "samplers, comma separated (see 'sampbench list')"),
	OPT_STRING('T', "tool", &env.tools, "LIST",
		   "tools, comma separated: the built-in recipes ('sampbench list')\n"
		   "or a recipe file ./NAME.recipe (docs/tools.md)"),
	OPT_STRING('w', "workload", &env.workloads, "LIST", "workloads, comma separated"),
	OPT_STRING(0, "variant", &env.variants, "LIST",
		   "build variants of each workload, comma separated: fp (the plain\n"
		   "build, default), nofp, inline (docs/workloads.md \"Variants\")"),
	OPT_CALLBACK('t', "threads", NULL, "LIST", parse_threads,
		     "workload threads, comma separated, each 1..10240 (default 4)"),
	OPT_NUMBER('z', "hz", &env.hz, "F", 0, SB_MAX_HZ, NULL,
		   "sampling frequency, 0 < F <= 20000 (default 100)"),
	OPT_NUMBER('d', "duration", &env.duration_s, "SECS", 0, 3600, "seconds",
		   "workload duration, 0 < SECS <= 3600 (default 2)"),
	OPT_INTEGER('r', "reps", &env.reps, "R", 1, 1000, "repetitions, 1..1000 (default 1)"),
	OPT_STRING('o', "output", &env.out, "FILE.h5", "output file (required)"),
	OPT_BOOLEAN('f', "force", &env.force, "overwrite FILE.h5 if it exists"),
	OPT_INTEGER(0, "param", &env.param, "N", 0, 1000000,
		    "workload knob (deep: depth, churn: total threads)"),
	OPT_INTEGER(0, "stack-kb", &env.stack_kb, "KB", 16, 1L << 20,
		    "workload threads' stack size in KiB (default: the system's; 64 as in\n"
		    "musl and thread pools: a stack-hungry handler crashes the run)"),
	OPT_BOOLEAN(0, "idle-skip", &env.idle_skip,
		    "suspend samplers: reuse the stack of a thread that did not run"),
	OPT_BOOLEAN(0, "no-rt", &env.no_rt, "suspend samplers: do not try SCHED_FIFO"),
	OPT_INTEGER(0, "seed", &env.seed, "N", 0, 1L << 62,
		    "seed for random phases and fault injection (default 1)"),
	OPT_BOOLEAN('q', "quiet", &env.quiet, "no per-run lines"),
	OPT_STRING('e', "expect", &env.expect, "FILE",
		   "then judge the expectations of FILE on the runs (docs/expect.md):\n"
		   "exit 1 when one fails"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("run", cmd_run_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (opt_operands("run", argv, first, argc, 0, 0, "") != 0)
		return -1;
	if ((!env.samplers && !env.tools) || !env.workloads || !env.out) {
		sb_err("missing %s (see 'sampbench run --help')",
		       !env.samplers && !env.tools ? "--sampler or --tool"
		       : !env.workloads ? "--workload" : "-o FILE.h5");
		return -1;
	}
	return env.expect ? expect_step_validate(env.expect) : 0;
}

static const struct tool *tools[TOOL_MAX];
static size_t ntools;

/* Fills tools[] from the comma list s. Returns 0, or -1 after one line on stderr. */
static int resolve_tools(char *s)
{
	char *names[TOOL_MAX], err[512];
	int n = split_list(s, names, TOOL_MAX);

	ntools = 0;
	if (n <= 0) {
		sb_err("tool list is empty or longer than %d", TOOL_MAX);
		return -1;
	}
	for (int i = 0; i < n; i++)
		if (tool_intern(names[i], tools, TOOL_MAX, &ntools, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			return -1;
		}
	return 0;
}

/* Fills out[] with each of the n workloads names[] in each build variant of the comma
 * list vlist (modified) that it has, workload-major. Returns how many, or -1 after one
 * line on stderr: an unknown workload or variant, a workload with none of the builds, too
 * many. */
static int resolve_workloads(char **names, int n, char *vlist, const struct workload **out)
{
	char *vnames[SB_MAX_LIST];
	int nv = split_list(vlist, vnames, SB_MAX_LIST), k = 0;

	if (nv <= 0) {
		sb_err("variant list is empty or longer than %d", SB_MAX_LIST);
		return -1;
	}
	for (int j = 0; j < nv; j++)
		if (!workload_variant_known(vnames[j])) {
			sb_err("unknown variant '%s' (expected fp, nofp or inline)", vnames[j]);
			return -1;
		}
	for (int i = 0; i < n; i++) {
		const struct workload *w = workload_find(names[i]);
		if (!w) {
			sb_err("unknown workload '%s' (see 'sampbench list')", names[i]);
			return -1;
		}
		int found = 0;
		for (int j = 0; j < nv; j++) {
			const struct workload *v = nv == 1 && !env.variants ? w
						  : workload_variant(w, vnames[j]);
			if (!v)
				continue; /* deep has no inline build: it runs in the others */
			if (k == SB_MAX_LIST) {
				sb_err("more than %d workloads with their variants", SB_MAX_LIST);
				return -1;
			}
			out[k++] = v;
			found = 1;
		}
		if (!found) {
			sb_err("workload '%s' has no %s build (see 'sampbench list')", names[i],
			       env.variants);
			return -1;
		}
	}
	return k;
}

int cmd_run(int argc, char **argv)
{
	char *snames[SB_MAX_LIST], *wnames[SB_MAX_LIST];
	const struct sampler *samplers[SB_MAX_LIST];
	const struct workload *workloads[SB_MAX_LIST];
	char *slist = NULL, *wlist = NULL, *tlist = NULL, *vlist = NULL;
	struct run_spec *specs = NULL;
	int rc = SB_EXIT_USAGE, ns = 0, nw;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(run_usage, stdout);
		opt_help(stdout, cmd_run_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;

	slist = strdup(env.samplers ? env.samplers : "");
	wlist = strdup(env.workloads);
	vlist = strdup(env.variants ? env.variants : WL_VARIANT_FP);
	if (!slist || !wlist || !vlist)
		goto cleanup;
	if (env.tools && (!(tlist = strdup(env.tools)) || resolve_tools(tlist) != 0))
		goto cleanup;
	ns = env.samplers ? split_list(slist, snames, SB_MAX_LIST) : 0;
	nw = split_list(wlist, wnames, SB_MAX_LIST);
	if ((env.samplers && ns <= 0) || nw <= 0 || ns + (int)ntools > SB_MAX_LIST) {
		sb_err("%s list is empty or longer than %d", nw <= 0 ? "workload" : "sampler",
		       SB_MAX_LIST);
		goto cleanup;
	}
	/* `none` first, so the other samplers' overhead has its reference */
	int k = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int i = 0; i < ns; i++) {
			const struct sampler *s = sampler_resolve(snames[i]);
			if (!s) /* sampler_resolve said why */
				goto cleanup;
			if ((pass == 0) == !strcmp(s->name, "none"))
				samplers[k++] = s;
		}
	if ((nw = resolve_workloads(wnames, nw, vlist, workloads)) < 0)
		goto cleanup;

	for (size_t t = 0; t < ntools; t++)
		samplers[ns++] = &tools[t]->as_sampler;
	size_t n = (size_t)ns * (size_t)nw * (size_t)env.nthreads * (size_t)env.reps, j = 0;
	specs = calloc(n, sizeof(*specs));
	if (!specs) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	/* every (workload, threads) cell runs all samplers and tools per repetition, so
	 * drift hits them alike */
	for (long rep = 0; rep < env.reps; rep++)
		for (int w = 0; w < nw; w++)
			for (int t = 0; t < env.nthreads; t++)
				for (int s = 0; s < ns; s++)
					specs[j++] = (struct run_spec){
						.sampler = samplers[s],
						.workload = workloads[w],
						.threads = env.threads[t],
						.hz = env.hz,
						.duration_s = env.duration_s,
						.repetition = (int)rep,
						.param = (uint32_t)env.param,
						.stack_kb = (uint32_t)env.stack_kb,
						.seed = (uint64_t)env.seed + (uint64_t)rep,
						.idle_skip = env.idle_skip,
						.rt_priority = !env.no_rt,
					};
	struct session_opts so = { .out_path = env.out, .force = env.force, .quiet = env.quiet };
	rc = session_run(&so, specs, n, NULL, NULL);
	if (env.expect && rc != SB_EXIT_USAGE) {
		int erc = expect_step_run(env.expect, env.out);
		rc = erc > rc ? erc : rc;
	}
cleanup:
	free(specs);
	free(slist);
	free(wlist);
	free(vlist);
	free(tlist);
	return rc;
}
