/* gate_int.h - what the parts of the gate share (not part of the interface). The parts
 * call in one direction, each only those listed before it:
 *   gate_parse.c   the budgets language and its vocabulary (operators, metrics, pooled
 *                  quantiles, capabilities, how a value is printed);
 *   gate_cells.c   cells, classes and hosts of a side, and the check a cell adds;
 *   gate_pauses.c, gate_regress.c   the judgements of tails and of regressions;
 *   gate_eval.c    each host's cells checked against the budgets, the result assembled;
 *   gate_out.c     the verdict table, JUnit, JSON. */
#ifndef SB_GATE_INT_H
#define SB_GATE_INT_H

#include <stddef.h>

#include "analysis/gate.h"

/* Condition variables: numbers (threads .. tick) and names (workload .. variant). clock,
 * scope and has select samplers by class (docs/gate.md "Classes"); workload names a
 * workload without its build variant, variant that variant (fp for the plain build). */
enum gate_var { V_THREADS, V_HZ, V_CORES, V_TICK, V_WORKLOAD, V_SAMPLER, V_BUILD, V_CLOCK,
		V_SCOPE, V_HAS, V_VARIANT, V_NVARS };
#define IS_NAME_VAR(v) ((v) >= V_WORKLOAD)
extern const char *const gate_var_names[V_NVARS];

/* Capability names of `has=NAME`, in enum sb_sampler_caps order (`tick` is apart). */
struct gate_cap_name {
	const char *name;
	unsigned cap;
};
#define GATE_NCAPS 8
extern const struct gate_cap_name gate_cap_names[GATE_NCAPS];

extern const char *const gate_op_names[6]; /* by enum gate_op */
/* Whether `a OP b` holds (false when either is NaN, but for !=). */
int gate_op_holds(enum gate_op op, double a, double b);

/* Quantile metrics judged on every sample of a cell pooled over its repetitions: the
 * sample field they read (or GATE_OBSERVED_WINDOW) and the quantile. */
#define GATE_OBSERVED_WINDOW ((size_t)-1) /* not a field: the sample's observed window */
struct gate_pooled_metric {
	const char *metric;
	size_t field;
	double q;
};
#define GATE_NPOOLED 6
extern const struct gate_pooled_metric gate_pooled_metrics[GATE_NPOOLED];
/* The pooled metric named m, or NULL. */
const struct gate_pooled_metric *gate_pooled_find(const char *m);
/* 1 when m is a pooled quantile metric (gate_pooled_find), else 0. */
int is_pooled_metric(const char *m);

/* Index of a cell-level pseudo metric (failed_runs, skipped_runs, lossy_runs), or -1. */
int gate_pseudo_index(const char *name);
/* 1 when the metric is in ns (its name ends in _ns). */
int gate_is_ns_metric(const char *name);
/* Formats v of metric for a report: "-" for NaN, µs for ns metrics. */
void gate_fmt_value(char *buf, size_t len, const char *metric, double v);

/* A cell: (sampler, workload, threads, hz) and its repetitions. */
struct cell {
	const char *sampler, *workload;
	int threads;
	double hz;
	size_t *runs; /* indices of the cell's runs */
	size_t n;
	int failed, skipped, lossy;
	int reps_min, reps_max; /* an adaptive cell's range (its runs' stats); 0, 0: fixed */
	struct gate_class cls;
};

struct cells {
	struct cell *v;
	size_t n;
	size_t *idx; /* storage for every cell's run indices */
};

/* Groups side's runs into cells, in order of first appearance. Returns 0 or -1 (memory). */
int gate_cells_build(const struct gate_side *side, struct cells *cs);
void gate_cells_free(struct cells *cs);
const struct cell *gate_cells_find(const struct cells *cs, const char *sampler,
				   const char *workload, int threads, double hz);
/* The metric's values over the cell's ok runs (NaN left out) into out; returns how many.
 * Pseudo metrics give one value: the count. */
size_t gate_cell_values(const struct gate_side *side, const struct cell *c, const char *metric,
			double *out);

/* The hosts of a side as the gate judges them: runs grouped by host fingerprint (by host
 * name when a run has none), so identical machines (CI runners of one class, the shards
 * of one bench) are one host and different machines are never pooled into one cell. */
struct gate_hostset {
	size_t n;                    /* groups; 1 for a file of one host */
	const struct sb_host **host; /* each group's host: that of its first run */
	char (*label)[64];           /* its name in the verdict: the host name, or the
				      * fingerprint when two groups share a host name */
	size_t *of_run;              /* run i is in group of_run[i] */
};

/* Groups side's runs by host. Returns 0, or -1 when out of memory. */
int gate_hosts_group(const struct gate_side *side, struct gate_hostset *hs);
void gate_hosts_free(struct gate_hostset *hs);
/* The group of hs whose fingerprint (host name when it has none) is h's, or -1. */
long gate_hosts_find(const struct gate_hostset *hs, const struct sb_host *h);
/* out: the side of group g's runs alone, on that group's host; *runs holds shallow copies
 * of them (free it, not the runs' arrays). Returns 0, or -1 when out of memory. */
int gate_side_of_host(const struct gate_side *side, const struct gate_hostset *hs, size_t g,
		      struct gate_side *out, struct sb_run **runs);

/* A cell's pooled quantile with its distribution-free one-sided confidence bounds. */
struct pooled {
	size_t n;          /* samples pooled (0: the runs carry no samples) */
	double q, est;     /* the quantile and its point estimate (type 7, as metrics.c) */
	double lo, hi;     /* X_(l) <= q-quantile with prob >= 1-a; X_(u) >= it likewise */
};

/* How regressions are judged: across files (baseline) or inside one A/B file. */
struct reg_mode {
	int timing;       /* compare timing metrics (same fingerprint, or A/B) */
	int ab;           /* same-run A/B: pooled quantiles compared on their samples */
	double alpha_ab;  /* A/B: per-comparison level of the pooled tests (Bonferroni) */
};

/* "cpu clock, per-thread, tick-driven, claims thread_ids,weights (built-in table)" */
void fmt_class(char *buf, size_t len, const struct gate_class *c);
/* Appends a passing check of metric on cell c to res (growing res->checks, *cap its room)
 * and returns it, or NULL when out of memory. */
struct gate_check *add_check(struct gate_result *res, size_t *cap, const struct cell *c,
			     enum gate_kind kind, const char *metric);
/* P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test of "k of n runs over". */
double sign_test_p(int k, int n);
/* Pools metric's per-sample values over the cell's ok runs and bounds its quantile: X_(l)
 * with l the largest rank such that P(Bin(n,q) >= l) >= 1 - alpha (the quantile is at or
 * above X_(l) with that confidence), X_(u) with u the smallest such that
 * P(Bin(n,q) <= u - 1) >= 1 - alpha. Order statistics only: no assumption on the
 * distribution, only independent samples. Returns 0 (pl->n = 0 when no samples), -1 when
 * out of memory or the metric is not a pooled one. */
int pooled_quantile(const struct gate_side *side, const struct cell *c, const char *metric,
		    double alpha, struct pooled *pl);

/* --- observed pauses (gate_pauses.c) --- */
/* The cell's ok run with the worst value of metric (the highest for <= and <, the lowest
 * for >= and >), its value in *v; NULL (v NaN) when no run has one. */
const struct sb_run *gate_worst_run(const struct gate_side *side, const struct cell *c,
				    const char *metric, enum gate_op op, double *v);
/* Where run r's maximum of a tail metric happened: "run 12, thread 1, 0.73 s into the
 * run" (suspend_window_max_ns, stop_latency_max_ns, window_observed_max_ns, pause_max_ns;
 * "run 12" alone when the file was read without samples). */
void gate_pause_where(const struct sb_run *r, const char *metric, char *buf, size_t len);
/* "observed 1.5ms vs reported 20.0µs (median p50s)" for a cell's window_report_ratio. */
void gate_window_detail(const struct gate_side *side, const struct cell *c, char *buf,
			size_t len);
void regression_checks(const struct gate_config *cfg, const struct gate_side *base,
		       const struct cell *bc, const struct gate_side *cur,
		       const struct cell *cc, const struct reg_mode *mode,
		       struct gate_result *res, size_t *cap, double *bv, double *cv);

#endif
