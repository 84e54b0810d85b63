/* cmd_run.c - `sampbench run`: samplers side by side on a workload, into one HDF5 file. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "harness/cli.h"
#include "harness/session.h"
#include "sampler/plugin.h"

#define SB_MAX_HZ 20000.0
#define SB_MAX_LIST 32

static const char run_usage[] =
	"usage: sampbench run --sampler S[,S...] --workload W[,W...] -o FILE.h5 [options]\n"
	"\n"
	"Runs each sampler on each workload, every run in its own child process, and writes\n"
	"the samples, truth and metrics to FILE.h5. Prints one line per run.\n"
	"\n"
	"  -s, --sampler LIST     samplers, comma separated (see 'sampbench list')\n"
	"  -w, --workload LIST    workloads, comma separated\n"
	"  -t, --threads N        workload threads, 1..64 (default 4)\n"
	"  -z, --hz F             sampling frequency, 0 < F <= 20000 (default 100)\n"
	"  -d, --duration SECS    workload duration, 0 < SECS <= 3600 (default 2)\n"
	"  -r, --reps R           repetitions, 1..1000 (default 1)\n"
	"  -o, --output FILE.h5   output file (required)\n"
	"  -f, --force            overwrite FILE.h5 if it exists\n"
	"      --param N          workload knob (deep: depth, churn: total threads)\n"
	"      --idle-skip        suspend samplers: reuse the stack of a thread that did not run\n"
	"      --no-rt            suspend samplers: do not try SCHED_FIFO\n"
	"      --seed N           seed for random phases and fault injection (default 1)\n"
	"  -q, --quiet            no per-run lines\n"
	"  -h, --help             this help\n";

static struct env {
	const char *samplers;
	const char *workloads;
	long threads;
	double hz;
	double duration_s;
	long reps;
	const char *out;
	int force;
	long param;
	int idle_skip;
	int no_rt;
	long seed;
	int quiet;
} env;

static const struct env env_defaults = {
	.threads = 4, .hz = 100, .duration_s = 2, .reps = 1, .seed = 1,
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

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "sampler", required_argument, NULL, 's' },
		{ "workload", required_argument, NULL, 'w' },
		{ "threads", required_argument, NULL, 't' },
		{ "hz", required_argument, NULL, 'z' },
		{ "duration", required_argument, NULL, 'd' },
		{ "reps", required_argument, NULL, 'r' },
		{ "output", required_argument, NULL, 'o' },
		{ "force", no_argument, NULL, 'f' },
		{ "param", required_argument, NULL, 'P' },
		{ "idle-skip", no_argument, NULL, 'I' },
		{ "no-rt", no_argument, NULL, 'R' },
		{ "seed", required_argument, NULL, 'S' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	env = env_defaults;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":s:w:t:z:d:r:o:fqh", opts, NULL)) != -1) {
		switch (c) {
		case 's': env.samplers = optarg; break;
		case 'w': env.workloads = optarg; break;
		case 't':
			if (sb_parse_int("--threads", optarg, 1, SB_MAX_THREADS, &env.threads))
				return -1;
			break;
		case 'z':
			if (sb_parse_double("--hz", optarg, &env.hz))
				return -1;
			if (env.hz <= 0 || env.hz > SB_MAX_HZ) {
				sb_err("--hz must be in (0, %g], got %s", SB_MAX_HZ, optarg);
				return -1;
			}
			break;
		case 'd':
			if (sb_parse_double("--duration", optarg, &env.duration_s))
				return -1;
			if (env.duration_s <= 0 || env.duration_s > 3600) {
				sb_err("--duration must be in (0, 3600] seconds, got %s", optarg);
				return -1;
			}
			break;
		case 'r':
			if (sb_parse_int("--reps", optarg, 1, 1000, &env.reps))
				return -1;
			break;
		case 'o': env.out = optarg; break;
		case 'f': env.force = 1; break;
		case 'P':
			if (sb_parse_int("--param", optarg, 0, 1000000, &env.param))
				return -1;
			break;
		case 'I': env.idle_skip = 1; break;
		case 'R': env.no_rt = 1; break;
		case 'S':
			if (sb_parse_int("--seed", optarg, 0, 1L << 62, &env.seed))
				return -1;
			break;
		case 'q': env.quiet = 1; break;
		case 'h': return 1;
		default: /* ':' missing value, '?' unknown option */
			sb_getopt_error(c, argv, "run");
			return -1;
		}
	}
	if (optind < argc) {
		sb_err("unexpected argument '%s' (see 'sampbench run --help')", argv[optind]);
		return -1;
	}
	if (!env.samplers || !env.workloads || !env.out) {
		sb_err("missing %s (see 'sampbench run --help')",
		       !env.samplers ? "--sampler" : !env.workloads ? "--workload" : "-o FILE.h5");
		return -1;
	}
	return 0;
}

int cmd_run(int argc, char **argv)
{
	char *snames[SB_MAX_LIST], *wnames[SB_MAX_LIST];
	const struct sampler *samplers[SB_MAX_LIST];
	const struct workload *workloads[SB_MAX_LIST];
	char *slist = NULL, *wlist = NULL;
	struct run_spec *specs = NULL;
	int rc = SB_EXIT_USAGE, ns, nw;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(run_usage, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;

	slist = strdup(env.samplers);
	wlist = strdup(env.workloads);
	if (!slist || !wlist)
		goto cleanup;
	ns = split_list(slist, snames, SB_MAX_LIST);
	nw = split_list(wlist, wnames, SB_MAX_LIST);
	if (ns <= 0 || nw <= 0) {
		sb_err("%s list is empty or longer than %d", ns <= 0 ? "sampler" : "workload",
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
	for (int i = 0; i < nw; i++) {
		workloads[i] = workload_find(wnames[i]);
		if (!workloads[i]) {
			sb_err("unknown workload '%s' (see 'sampbench list')", wnames[i]);
			goto cleanup;
		}
	}

	size_t n = (size_t)ns * (size_t)nw * (size_t)env.reps, j = 0;
	specs = calloc(n, sizeof(*specs));
	if (!specs) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	for (long rep = 0; rep < env.reps; rep++)
		for (int w = 0; w < nw; w++)
			for (int s = 0; s < ns; s++)
				specs[j++] = (struct run_spec){
					.sampler = samplers[s],
					.workload = workloads[w],
					.threads = (int)env.threads,
					.hz = env.hz,
					.duration_s = env.duration_s,
					.repetition = (int)rep,
					.param = (uint32_t)env.param,
					.seed = (uint64_t)env.seed + (uint64_t)rep,
					.idle_skip = env.idle_skip,
					.rt_priority = !env.no_rt,
				};
	struct session_opts so = { .out_path = env.out, .force = env.force, .quiet = env.quiet };
	rc = session_run(&so, specs, n, NULL, NULL);
cleanup:
	free(specs);
	free(slist);
	free(wlist);
	return rc;
}
