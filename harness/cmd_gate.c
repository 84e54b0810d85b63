/* cmd_gate.c - `sampbench gate`: judges a run file against a baseline and budgets. */
#include <errno.h>
#include <hdf5.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/gate.h"
#include "harness/cli.h"
#include "results/h5io.h"
#include "sampler/sampler.h"

#define GATE_MAX_ALIASES 8

static const char gate_usage[] =
	"usage: sampbench gate [--baseline B.h5] [--budgets FILE] [--junit FILE] [--json FILE]\n"
	"                      [--alias FROM=TO] [--sampler NAME] [--undecided fail|pass]\n"
	"                      CURRENT.h5\n"
	"\n"
	"Checks CURRENT.h5, cell by cell (sampler, workload, threads, hz):\n"
	"  - against the baseline: a metric regressed when a two-sided Mann-Whitney U test over\n"
	"    the repetitions gives p < alpha AND its median moved the bad way by more than the\n"
	"    metric's minimum effect (`regress` rules of the budgets file);\n"
	"  - against absolute budgets (`budget` rules) selecting samplers by class (clock,\n"
	"    scope, capabilities), on the median of each cell, or for quantiles on every\n"
	"    sample pooled with an order-statistic bound; a limit may be a host fact\n"
	"    (2.0 * host.rendezvous_p99_ns) or another sampler's median;\n"
	"  - a file holding variants A and B (an A/B bench): B against A inside the file.\n"
	"Timing metrics are compared with a baseline only of the same host fingerprint. A\n"
	"merged file of several hosts is judged per host (cells never pool hosts; host facts\n"
	"are each host's own), with a verdict per host and an overall one.\n"
	"Prints one row per check (a failed budget with the class rule that applied) and a\n"
	"verdict. Rules and formats: docs/gate.md.\n"
	"\n";

/* After the options. */
static const char gate_exit[] =
	"\n"
	"Exit: 0 every check passed, 1 a regression, a broken budget or a check with too few\n"
	"runs to judge (unless --undecided pass), 2 bad input.\n";

static struct env {
	const char *baseline;
	const char *budgets;
	const char *junit;
	const char *json;
	const char *current;
	const char *alias[GATE_MAX_ALIASES];
	int naliases;
	int quiet;
	const char *sampler;
	const char *undecided;
} env;

static const struct env env_defaults = {
	.budgets = "ci/budgets",
	.undecided = "fail",
};

/* --alias FROM=TO, repeatable: checked once the current file is read. */
static int add_alias(const struct opt *o, const char *arg)
{
	(void)o;
	if (env.naliases == GATE_MAX_ALIASES) {
		sb_err("too many --alias options (at most %d)", GATE_MAX_ALIASES);
		return -1;
	}
	env.alias[env.naliases++] = arg;
	return 0;
}

const struct opt cmd_gate_options[] = {
	OPT_STRING('b', "baseline", &env.baseline, "FILE",
		   "baseline run file (default: none, budgets only)"),
	OPT_STRING('B', "budgets", &env.budgets, "FILE", "rules (default: ci/budgets)"),
	OPT_STRING('j', "junit", &env.junit, "FILE",
		   "also write JUnit XML, one testcase per check"),
	OPT_STRING('J', "json", &env.json, "FILE", "also write a JSON summary"),
	OPT_CALLBACK('a', "alias", NULL, "FROM=TO", add_alias,
		     "judge CURRENT's runs of sampler FROM as sampler TO (e.g. a\n"
		     "fault sampler in place of its healthy twin); repeatable"),
	OPT_STRING('s', "sampler", &env.sampler, "NAME",
		   "judge only the cells of sampler NAME (after --alias; the others\n"
		   "stay as references): one verdict and exit status per sampler"),
	OPT_STRING('u', "undecided", &env.undecided, "fail|pass",
		   "a check with too few runs to judge fails the verdict (fail,\n"
		   "the default) or not (pass: still shown and counted)"),
	OPT_BOOLEAN('q', "quiet", &env.quiet,
		    "print only failed, undecided, warned, not measured and expected rows"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("gate", cmd_gate_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (opt_operands("gate", argv, first, argc, 1, 1, "CURRENT.h5") != 0)
		return -1;
	env.current = argv[first];
	if (strcmp(env.undecided, "fail") && strcmp(env.undecided, "pass")) {
		sb_err("invalid --undecided '%s' (expected fail or pass)", env.undecided);
		return -1;
	}
	return 0;
}

/* 1 when path's root attribute `complete` is 1, 0 when it is 0, -1 when unknown. */
static int file_complete(const char *path)
{
	int complete = -1;
	H5E_auto2_t fn;
	void *data;

	H5Eget_auto2(H5E_DEFAULT, &fn, &data);
	H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
	hid_t f = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
	if (f >= 0) {
		if (H5Aexists(f, "complete") > 0) {
			hid_t a = H5Aopen(f, "complete", H5P_DEFAULT);
			int v;
			if (a >= 0 && H5Aread(a, H5T_NATIVE_INT, &v) >= 0)
				complete = v != 0;
			if (a >= 0)
				H5Aclose(a);
		}
		H5Fclose(f);
	}
	H5Eset_auto2(H5E_DEFAULT, fn, data);
	return complete;
}

struct loaded {
	struct sb_host host;
	struct sb_run *runs;
	size_t n;
	struct h5_run_hosts hosts; /* a merged file's runs of several hosts */
};

static int load(const char *path, const char *what, struct loaded *l)
{
	char err[512];

	if (access(path, R_OK) != 0) {
		sb_err("cannot read %s '%s': %s", what, path, strerror(errno));
		return -1;
	}
	/* with samples: quantile budgets are judged on every sample of a cell, pooled */
	if (h5_read_hosts(path, &l->host, &l->runs, &l->n, 1, &l->hosts, err, sizeof(err)) != 0) {
		sb_err("cannot read %s: %s", what, err);
		return -1;
	}
	if (l->n == 0) {
		sb_err("%s '%s' has no runs", what, path);
		return -1;
	}
	if (file_complete(path) == 0)
		fprintf(stderr, "sampbench: warning: %s '%s' is incomplete (interrupted bench)\n",
			what, path);
	return 0;
}

/* Renames current runs of sampler FROM to TO for every --alias FROM=TO. */
static int apply_aliases(struct loaded *cur)
{
	for (int a = 0; a < env.naliases; a++) {
		char from[SB_NAME_LEN], to[SB_NAME_LEN];
		const char *eq = strchr(env.alias[a], '=');
		if (!eq || eq == env.alias[a] || !eq[1] ||
		    (size_t)(eq - env.alias[a]) >= sizeof(from) || strlen(eq + 1) >= sizeof(to)) {
			sb_err("invalid --alias '%s' (expected FROM=TO)", env.alias[a]);
			return -1;
		}
		snprintf(from, sizeof(from), "%.*s", (int)(eq - env.alias[a]), env.alias[a]);
		snprintf(to, sizeof(to), "%s", eq + 1);
		size_t hits = 0;
		for (size_t i = 0; i < cur->n; i++)
			if (!strcmp(cur->runs[i].sampler, to)) {
				sb_err("--alias %s: '%s' already has runs of %s", env.alias[a],
				       env.current, to);
				return -1;
			}
		for (size_t i = 0; i < cur->n; i++)
			if (!strcmp(cur->runs[i].sampler, from)) {
				snprintf(cur->runs[i].sampler, sizeof(cur->runs[i].sampler), "%s", to);
				hits++;
			}
		if (hits == 0) {
			sb_err("--alias %s: '%s' has no runs of %s", env.alias[a], env.current, from);
			return -1;
		}
	}
	return 0;
}

/* --sampler NAME: the file must have runs of it. Returns 0, or -1 with the error said. */
static int check_sampler_present(const struct loaded *cur, const char *name)
{
	for (size_t i = 0; i < cur->n; i++)
		if (!strcmp(cur->runs[i].sampler, name))
			return 0;
	sb_err("--sampler %s: '%s' has no runs of %s", name, env.current, name);
	return -1;
}

static void free_loaded(struct loaded *l)
{
	for (size_t i = 0; i < l->n; i++)
		run_free(&l->runs[i]);
	free(l->runs);
	h5_run_hosts_free(&l->hosts);
}

int cmd_gate(int argc, char **argv)
{
	struct gate_config *cfg = NULL;
	struct loaded cur = { 0 }, base = { 0 };
	struct gate_result res = { 0 };
	char err[512];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(gate_usage, stdout);
		opt_help(stdout, cmd_gate_options);
		fputs(gate_exit, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;

	cfg = malloc(sizeof(*cfg));
	if (!cfg) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	if (gate_config_load(env.budgets, cfg, err, sizeof(err)) != 0) {
		sb_err("%s", err);
		goto cleanup;
	}
	cfg->undecided_pass = !strcmp(env.undecided, "pass");
	if (load(env.current, "current run file", &cur) != 0)
		goto cleanup;
	if (env.baseline && load(env.baseline, "baseline", &base) != 0)
		goto cleanup;
	if (apply_aliases(&cur) != 0)
		goto cleanup;
	if (env.sampler && check_sampler_present(&cur, env.sampler) != 0)
		goto cleanup;

	/* --sampler: only its cells are judged; the others stay as references (a budget
	 * against gperftools, "does any sampler measure this here") */
	struct gate_side cs = { .path = env.current, .host = &cur.host, .runs = cur.runs,
				.nruns = cur.n, .only = env.sampler, .hosts = cur.hosts.v,
				.nhosts = cur.hosts.n, .run_host = cur.hosts.of_run };
	struct gate_side bs = { .path = env.baseline, .host = &base.host, .runs = base.runs,
				.nruns = base.n, .hosts = base.hosts.v, .nhosts = base.hosts.n,
				.run_host = base.hosts.of_run };
	if (gate_eval(cfg, env.baseline ? &bs : NULL, &cs, &res) != 0) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	for (int i = 0; i < res.nwarnings; i++)
		fprintf(stderr, "sampbench: warning: %s\n", res.warnings[i]);
	if (!env.baseline)
		printf("no baseline: budgets only (%s)\n", env.budgets);
	gate_print(stdout, cfg, &cs, &res, env.quiet);
	if (env.junit && gate_write_junit(env.junit, &res, err, sizeof(err)) != 0) {
		sb_err("%s", err);
		goto cleanup;
	}
	if (env.json && gate_write_json(env.json, env.baseline ? &bs : NULL, &cs, &res, err,
					sizeof(err)) != 0) {
		sb_err("%s", err);
		goto cleanup;
	}
	rc = gate_failed(&res) ? SB_EXIT_FAIL : SB_EXIT_OK;
cleanup:
	gate_result_free(&res);
	free_loaded(&cur);
	free_loaded(&base);
	free(cfg);
	return rc;
}
