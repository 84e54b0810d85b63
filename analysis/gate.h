/* gate.h - the regression gate: a current run file against a baseline (Mann-Whitney U per
 * cell and metric), against absolute budgets, and against a reference sampler of the same
 * run (gperftools). The rules live in a config file (ci/budgets); format in docs/gate.md. */
#ifndef SB_GATE_H
#define SB_GATE_H

#include <stddef.h>
#include <stdio.h>

#include "core/run.h"

#define GATE_NAME_LEN 48
#define GATE_MAX_LIST 16
#define GATE_MAX_RULES 64
#define GATE_MAX_BUDGETS 128
#define GATE_MAX_CONDS 8
#define GATE_MAX_EXPECTS 32

enum gate_dir {
	GATE_UP,     /* higher is worse (latencies, tvd, errors) */
	GATE_DOWN,   /* lower is worse (stack_correct_fraction) */
	GATE_OFF_ONE /* farther from 1 is worse (rate_accuracy) */
};

enum gate_op { GATE_LE, GATE_GE, GATE_LT, GATE_GT, GATE_EQ, GATE_NE };

/* `regress METRIC DIRECTION MIN_EFFECT [MIN_REL%]` */
struct gate_rule {
	int line;
	char metric[GATE_NAME_LEN];
	enum gate_dir dir;
	double min_abs; /* the bad-direction change of the median must exceed this */
	double min_rel; /* ... and this fraction of the baseline median (0: no relative part) */
};

/* One condition of a budget: `threads<=cores`, `hz<=tick`, `workload=skewed`. */
struct gate_cond {
	int lhs;              /* enum gate_var */
	enum gate_op op;
	int rhs;              /* enum gate_var, or -1 for the constant */
	double value;
	char name[GATE_NAME_LEN]; /* for workload / sampler conditions */
};

/* `budget SAMPLERS METRIC OP RHS [if COND...]`; RHS is a number or REF.METRIC [+|- N]. */
struct gate_budget {
	int line;
	char samplers[GATE_MAX_LIST][GATE_NAME_LEN];
	int nsamplers; /* 0: every sampler (`*`) */
	char metric[GATE_NAME_LEN];
	enum gate_op op;
	double value;                    /* the constant, or the offset added to the reference */
	char ref_sampler[GATE_NAME_LEN]; /* "" when the right side is a constant */
	char ref_metric[GATE_NAME_LEN];
	struct gate_cond conds[GATE_MAX_CONDS];
	int nconds;
	int sign_test;                   /* fail only when the runs are over it significantly */
	int worst;                       /* judge the cell's worst run, not its median (tails) */
	int per_run;                     /* a quantile: the median of each run's own value, not
					  * the pooled samples (one stalled run cannot decide) */
	int calm;                        /* only where the cell's `none` runs show a calm host */
	double far;                      /* `far V` (sign-test rules): every run beyond V fails
					  * on its size alone, whatever the test; NaN: none */
	char host_fact[GATE_NAME_LEN];   /* `2.0 * host.F`: the limit is value x fact F of the
					  * current file ("" for a constant); NaN fact: "not
					  * measured" */
	double floor_factor;             /* `floor N * host.F`: N (1 when not given) */
	char floor_fact[GATE_NAME_LEN];  /* `floor host.F`: not applicable when this host's
					  * floor F is at or over the limit */
	char text[160];                  /* the rule as written, for reports */
};

/* `expect SAMPLER METRIC REASON...`: the one way to exempt a sampler from a failing rule.
 * The row stays in the verdict, marked as expected, with the reason. */
struct gate_expect {
	int line;
	char sampler[GATE_NAME_LEN];
	char metric[GATE_NAME_LEN];
	char reason[256];
};

struct gate_config {
	const char *name;                    /* file name, for "name:line" in reports */
	double alpha;                        /* U-test significance, default 0.05 */
	char reference[GATE_NAME_LEN];       /* `reference gperftools` */
	char compare[GATE_MAX_LIST][GATE_NAME_LEN]; /* metrics of the reference table */
	int ncompare;
	struct gate_rule rules[GATE_MAX_RULES];
	int nrules;
	struct gate_budget budgets[GATE_MAX_BUDGETS];
	int nbudgets;
	struct gate_expect expects[GATE_MAX_EXPECTS];
	int nexpects;
	int undecided_pass;                  /* `gate --undecided=pass`: a check with too few
					      * runs to judge does not fail the verdict (it is
					      * still shown and counted); 0 by default */
};

/* Parses a budgets config held in text (name is used in errors: "name:LINE: problem").
 * Returns 0, or -1 with one line in err. */
int gate_config_parse(const char *text, const char *name, struct gate_config *cfg, char *err,
		      size_t errlen);
/* Reads and parses path. Returns 0, or -1 with one line in err. */
int gate_config_load(const char *path, struct gate_config *cfg, char *err, size_t errlen);

/* One side of the comparison: the runs of one file and its host facts. A merged file may
 * hold runs of several hosts (hosts, run_host): each host, by fingerprint, is judged
 * apart with its own facts (docs/gate.md "Several hosts"). */
struct gate_side {
	const char *path;
	const struct sb_host *host;
	const struct sb_run *runs;
	size_t nruns;
	const char *only; /* judge only this sampler's cells (the others stay as references);
			   * NULL: every cell */
	const struct sb_host *hosts; /* the runs' hosts; NULL: every run ran on host */
	size_t nhosts;
	const size_t *run_host;      /* runs[i] ran on hosts[run_host[i]] */
};

/* GATE_REPS: one row per cell of an adaptive bench (ci/matrix `reps = MIN..MAX`): the
 * repetitions it used and whether its budget checks were decided (docs/gate.md "Adaptive
 * repetitions"). */
enum gate_kind { GATE_REGRESSION, GATE_BUDGET, GATE_MISSING, GATE_REPS };
/* NA: the metric is not measured for this sampler (a capability it does not claim, a host
 * fact the file lacks) or the budget is not applicable on this host (floor over it): shown,
 * never counted as a pass. EXEMPT: failed, but an `expect` line names it with a reason.
 * UNDECIDED: a rule decided by a test over runs (sign test, U test, pooled quantile bound)
 * whose data point the bad way but whose runs or samples are too few for the test ever to
 * reject: never a pass, and it fails the verdict unless cfg->undecided_pass. */
enum gate_state { GATE_PASS, GATE_FAIL, GATE_WARN, GATE_NA, GATE_EXEMPT, GATE_UNDECIDED };

/* One row of the verdict: one check of one cell and metric. */
struct gate_check {
	enum gate_kind kind;
	enum gate_state state;
	char host[64];   /* which host's cell, in a file of several hosts; "" otherwise */
	char sampler[GATE_NAME_LEN];
	char workload[GATE_NAME_LEN];
	int threads;
	double hz;
	char metric[GATE_NAME_LEN];
	double baseline; /* baseline median, or the budget's limit; NaN when none */
	double current;  /* current median (budgets: of the cell); NaN when none */
	double p;        /* U-test p-value; sign-test p for sign-test budgets; else NaN */
	double effect;   /* change in the bad direction (positive: worse), NaN for budgets */
	int nbase, ncur; /* repetitions with a value (pooled quantiles: samples) */
	char reason[384];
	char why[384];   /* budgets: which class rule applied and why the sampler is in it */
	int open;        /* a budget of an adaptive cell below its maximum whose verdict more
			  * runs could still change (gate_median_call, gate_sign_call) */
};

/* The verdict of one host of a file of several hosts. */
struct gate_host_verdict {
	char host[64];        /* its name in the checks (host name, or fingerprint when two
			       * fingerprints share one host name) */
	char fingerprint[64];
	size_t nchecks, failed, warned, na, exempt, undecided;
};

struct gate_result {
	struct gate_host_verdict *hosts; /* one per host when the current file has several;
					  * NULL (nhosts 0) for a file of one host */
	size_t nhosts;
	struct gate_check *checks;
	size_t nchecks;
	size_t failed, warned;
	size_t na, exempt;      /* checks not measured / not applicable, and exempted */
	size_t undecided;       /* checks with too few runs to judge */
	int undecided_pass;     /* copied from the config: undecided checks do not fail */
	char warnings[8][256]; /* host mismatch and the like, shown loudly */
	int nwarnings;
	char notes[8][256];    /* how the file was judged (A/B inside the file, timing not
				* compared), printed above the verdict */
	int nnotes;
};

/* The class of a sampler as the gate judges it: from the class stats a plugin's run
 * carries (class_caps, class_abi), else the built-in table, else (a name this sampbench
 * does not know, no class in the file) every capability assumed. */
struct gate_class {
	unsigned caps;   /* enum sb_sampler_caps */
	int clock;       /* enum sb_clock */
	int tick_driven;
	int baseline;    /* the `none` reference: takes no samples, only run-level budgets */
	int recipe;      /* a tool's: its frames are the names it printed, not PCs that
			  * sampbench names (SB_CAP_INLINE_FRAMES says whether inlined
			  * functions are among them) */
	char source[96]; /* where the class came from, for the verdict */
};

/* The sb_sampler_caps bit named `name` (thread_ids, weights, stacks, stop_latency,
 * suspend_window, process_wide) into *cap. Returns 0, or -1 for an unknown name. */
int gate_cap_find(const char *name, unsigned *cap);

/* Fills cls for runs[0..n) of one sampler (the first ok run decides). */
void gate_class_of(const char *sampler, const struct sb_run *runs, size_t n,
		   struct gate_class *cls);

/* Evaluates cfg on cur, and against base when base is not NULL. Fills res (free with
 * gate_result_free). Returns 0, or -1 when out of memory. */
int gate_eval(const struct gate_config *cfg, const struct gate_side *base,
	      const struct gate_side *cur, struct gate_result *res);
void gate_result_free(struct gate_result *res);
/* 1 when res fails: a failed check, or an undecided one unless undecided_pass. */
int gate_failed(const struct gate_result *res);
/* The same for one host of a file of several hosts. */
int gate_host_failed(const struct gate_result *res, const struct gate_host_verdict *v);

/* Prints the verdict table (one row per check; only failed and warned ones when
 * failures_only), the reference comparison and the one-line verdict. */
void gate_print(FILE *out, const struct gate_config *cfg, const struct gate_side *cur,
		const struct gate_result *res, int failures_only);
/* JUnit XML (one testcase per check) and a JSON summary, each written to a temporary
 * file beside path and renamed (core/atomic_file.h). Return 0, or -1 with one line in err. */
int gate_write_junit(const char *path, const struct gate_result *res, char *err, size_t errlen);
int gate_write_json(const char *path, const struct gate_side *base, const struct gate_side *cur,
		    const struct gate_result *res, char *err, size_t errlen);

/* Adaptive repetitions (docs/gate.md "Adaptive repetitions"): what more runs of a cell
 * planned for up to nmax of them could do to a budget's verdict. */
/* A median rule (`budget ... OP limit`, judged on the median of the runs' values) on the
 * n values v so far: GATE_PASS or GATE_FAIL when more than nmax/2 of them are on that
 * side of the limit, so that the median of any nmax runs holding them is too (at
 * n >= nmax: the median's own verdict); -1 while the remaining runs could still move it. */
int gate_median_call(const double *v, size_t n, int nmax, enum gate_op op, double limit);
/* A sign-test rule with `over` of n runs over its limit: the verdict it gives at nmax runs
 * (GATE_PASS, GATE_FAIL, or GATE_UNDECIDED where nmax runs cannot reach p < alpha) when
 * every outcome of the nmax - n runs to come gives the same one; -1 otherwise. */
int gate_sign_call(int over, int n, int nmax, double alpha);

/* Index into sb_metric_infos of metric `name`, or -1. */
int gate_metric_index(const char *name);

#endif
