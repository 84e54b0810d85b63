/* gate.c - the regression gate: budgets config, per-cell checks, verdict outputs.
 *
 * A cell is (sampler, workload, threads, hz); its repetitions are the samples the tests
 * see. Only ok runs give metric values; failed and skipped runs are counted in the pseudo
 * metrics failed_runs and skipped_runs. */
#include "../harness/cli.h"
#include "gate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../sampler/sampler.h"
#include "mwu.h"

#define GATE_MAX_TEXT (1 << 20)

/* Condition variables: numbers (threads .. tick) and names (workload .. has). clock, scope
 * and has select samplers by class (docs/gate.md "Classes"). */
enum gate_var { V_THREADS, V_HZ, V_CORES, V_TICK, V_WORKLOAD, V_SAMPLER, V_BUILD, V_CLOCK,
		V_SCOPE, V_HAS, V_NVARS };
static const char *const var_names[V_NVARS] = { "threads", "hz", "cores", "tick", "workload",
						"sampler", "build", "clock", "scope", "has" };
#define IS_NAME_VAR(v) ((v) >= V_WORKLOAD)

/* Capability names of `has=NAME`, in enum sb_sampler_caps order, then `tick`. */
static const struct { const char *name; unsigned cap; } cap_names[] = {
	{ "process_wide", SB_CAP_PROCESS_WIDE }, { "thread_ids", SB_CAP_THREAD_IDS },
	{ "weights", SB_CAP_WEIGHTS },           { "stacks", SB_CAP_STACKS },
	{ "stop_latency", SB_CAP_STOP_LATENCY }, { "suspend_window", SB_CAP_SUSPEND_WINDOW },
};
#define NCAPS (sizeof(cap_names) / sizeof(cap_names[0]))

/* Cell-level counts that budgets can name like metrics. */
static const char *const pseudo_metrics[] = { "failed_runs", "skipped_runs" };
#define NPSEUDO (sizeof(pseudo_metrics) / sizeof(pseudo_metrics[0]))

static const char *const op_names[] = { "<=", ">=", "<", ">", "==", "!=" };

int gate_metric_index(const char *name)
{
	for (size_t i = 0; i < sb_metric_count; i++)
		if (!strcmp(sb_metric_infos[i].name, name))
			return (int)i;
	return -1;
}

static int pseudo_index(const char *name)
{
	for (size_t i = 0; i < NPSEUDO; i++)
		if (!strcmp(pseudo_metrics[i], name))
			return (int)i;
	return -1;
}

static int is_ns_metric(const char *name)
{
	size_t n = strlen(name);
	return n > 3 && !strcmp(name + n - 3, "_ns");
}

/* --- config parsing --- */

struct cparser {
	const char *name;
	int line;
	char *err;
	size_t errlen;
};

static int cerr(struct cparser *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Writes "name:line: message" into p->err. Always returns -1. */
static int cerr(struct cparser *p, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	sb_config_verr(p->err, p->errlen, p->name, p->line, fmt, ap);
	va_end(ap);
	return -1;
}

/* Parses a number with an optional unit: ns, us, µs, ms, s (to ns) or % (to a fraction). */
static int parse_value(struct cparser *p, const char *s, double *out)
{
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "ns", 1 }, { "us", 1e3 }, { "µs", 1e3 }, { "ms", 1e6 }, { "s", 1e9 },
		{ "%", 0.01 },
	};
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !isfinite(v))
		return cerr(p, "invalid number '%s'", s);
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(end, units[i].suffix)) {
			*out = v * units[i].scale;
			return 0;
		}
	return cerr(p, "unknown unit in '%s' (expected ns, us, ms, s or %%)", s);
}

static int check_metric(struct cparser *p, const char *m, int allow_pseudo)
{
	if (gate_metric_index(m) >= 0 || (allow_pseudo && pseudo_index(m) >= 0))
		return 0;
	return cerr(p, "unknown metric '%s' (see 'sampbench show --help')", m);
}

static int check_sampler(struct cparser *p, const char *s)
{
	if (strlen(s) >= GATE_NAME_LEN || !sampler_find(s))
		return cerr(p, "unknown sampler '%s' (see 'sampbench list')", s);
	return 0;
}

static int parse_op(const char *s, enum gate_op *op)
{
	for (size_t i = 0; i < sizeof(op_names) / sizeof(op_names[0]); i++)
		if (!strcmp(s, op_names[i])) {
			*op = (enum gate_op)i;
			return 0;
		}
	if (!strcmp(s, "=")) {
		*op = GATE_EQ;
		return 0;
	}
	return -1;
}

static int var_index(const char *s)
{
	for (int i = 0; i < V_NVARS; i++)
		if (!strcmp(s, var_names[i]))
			return i;
	return -1;
}

/* `threads<=cores`, `hz<=tick`, `hz>250`, `workload=skewed`, `sampler!=none`, `build=plain`. */
static int parse_cond(struct cparser *p, const char *s, struct gate_cond *c)
{
	size_t k = strcspn(s, "<>=!");
	char lhs[GATE_NAME_LEN], opbuf[3] = "", *rhs;

	if (k == 0 || k >= sizeof(lhs) || !s[k])
		return cerr(p, "malformed condition '%s' (expected e.g. threads<=cores)", s);
	memcpy(lhs, s, k);
	lhs[k] = 0;
	size_t o = strspn(s + k, "<>=!");
	if (o > 2)
		return cerr(p, "malformed condition '%s'", s);
	memcpy(opbuf, s + k, o);
	opbuf[o] = 0;
	rhs = (char *)s + k + o;
	memset(c, 0, sizeof(*c));
	if (parse_op(opbuf, &c->op))
		return cerr(p, "unknown operator '%s' in condition '%s'", opbuf, s);
	c->lhs = var_index(lhs);
	if (c->lhs < 0)
		return cerr(p, "unknown variable '%s' in condition '%s' (expected threads, hz, "
			       "cores, tick, workload, sampler, build, clock, scope or has)", lhs, s);
	if (!*rhs)
		return cerr(p, "condition '%s' has no right side", s);
	if (IS_NAME_VAR(c->lhs)) {
		if (c->op != GATE_EQ && c->op != GATE_NE)
			return cerr(p, "'%s' compares names: use = or !=", lhs);
		if (strlen(rhs) >= sizeof(c->name))
			return cerr(p, "name too long in condition '%s'", s);
		snprintf(c->name, sizeof(c->name), "%s", rhs);
		c->rhs = -1;
		if (c->lhs == V_CLOCK && strcmp(rhs, "cpu") && strcmp(rhs, "wall"))
			return cerr(p, "unknown clock '%s' (expected cpu or wall)", rhs);
		if (c->lhs == V_SCOPE && strcmp(rhs, "process") && strcmp(rhs, "thread"))
			return cerr(p, "unknown scope '%s' (expected process or thread)", rhs);
		if (c->lhs == V_HAS) {
			int known = !strcmp(rhs, "tick");
			for (size_t i = 0; i < NCAPS && !known; i++)
				known = !strcmp(rhs, cap_names[i].name);
			if (!known)
				return cerr(p, "unknown capability '%s' (expected thread_ids, weights, "
					       "stacks, stop_latency, suspend_window or tick)", rhs);
		}
		return 0;
	}
	c->rhs = var_index(rhs);
	if (c->rhs >= 0 && IS_NAME_VAR(c->rhs))
		return cerr(p, "cannot compare '%s' with a name", lhs);
	if (c->rhs < 0)
		return parse_value(p, rhs, &c->value);
	return 0;
}

#define MAX_TOKENS 48

static int tokenize(char *s, char **tok)
{
	int n = 0;
	for (char *t = strtok(s, " \t"); t && n < MAX_TOKENS; t = strtok(NULL, " \t"))
		tok[n++] = t;
	return n;
}

static int parse_rule(struct cparser *p, struct gate_config *cfg, char **tok, int n)
{
	if (n < 4 || n > 5)
		return cerr(p, "expected 'regress METRIC up|down|off-one MIN_EFFECT [MIN_REL%%]'");
	if (cfg->nrules == GATE_MAX_RULES)
		return cerr(p, "too many regress rules (at most %d)", GATE_MAX_RULES);
	struct gate_rule *r = &cfg->rules[cfg->nrules];
	memset(r, 0, sizeof(*r));
	r->line = p->line;
	if (check_metric(p, tok[1], 0))
		return -1;
	snprintf(r->metric, sizeof(r->metric), "%s", tok[1]);
	if (!strcmp(tok[2], "up"))
		r->dir = GATE_UP;
	else if (!strcmp(tok[2], "down"))
		r->dir = GATE_DOWN;
	else if (!strcmp(tok[2], "off-one"))
		r->dir = GATE_OFF_ONE;
	else
		return cerr(p, "unknown direction '%s' (expected up, down or off-one)", tok[2]);
	if (parse_value(p, tok[3], &r->min_abs))
		return -1;
	if (r->min_abs < 0)
		return cerr(p, "minimum effect must be >= 0, got %s", tok[3]);
	if (n == 5) {
		size_t l = strlen(tok[4]);
		if (l < 2 || tok[4][l - 1] != '%')
			return cerr(p, "relative minimum effect must be a percentage, got '%s'", tok[4]);
		if (parse_value(p, tok[4], &r->min_rel) || r->min_rel < 0)
			return r->min_rel < 0 ? cerr(p, "relative minimum must be >= 0") : -1;
	}
	for (int i = 0; i < cfg->nrules; i++)
		if (!strcmp(cfg->rules[i].metric, r->metric))
			return cerr(p, "second regress rule for '%s' (first on line %d)", r->metric,
				    cfg->rules[i].line);
	cfg->nrules++;
	return 0;
}

static int parse_budget(struct cparser *p, struct gate_config *cfg, char **tok, int n,
			const char *text)
{
	if (n < 5)
		return cerr(p, "expected 'budget SAMPLERS METRIC OP VALUE [floor host.F] [sign-test] "
			       "[if COND...]'");
	if (cfg->nbudgets == GATE_MAX_BUDGETS)
		return cerr(p, "too many budgets (at most %d)", GATE_MAX_BUDGETS);
	struct gate_budget *b = &cfg->budgets[cfg->nbudgets];
	memset(b, 0, sizeof(*b));
	b->line = p->line;
	snprintf(b->text, sizeof(b->text), "%.159s", text);

	if (strcmp(tok[1], "*")) {
		char list[512];
		snprintf(list, sizeof(list), "%s", tok[1]);
		for (char *save, *s = strtok_r(list, ",", &save); s; s = strtok_r(NULL, ",", &save)) {
			if (b->nsamplers == GATE_MAX_LIST)
				return cerr(p, "too many samplers (at most %d)", GATE_MAX_LIST);
			if (check_sampler(p, s))
				return -1;
			snprintf(b->samplers[b->nsamplers++], GATE_NAME_LEN, "%s", s);
		}
		if (b->nsamplers == 0)
			return cerr(p, "empty sampler list");
	}
	if (check_metric(p, tok[2], 1))
		return -1;
	snprintf(b->metric, sizeof(b->metric), "%s", tok[2]);
	if (parse_op(tok[3], &b->op))
		return cerr(p, "unknown operator '%s' (expected <=, >=, <, >, == or !=)", tok[3]);

	int i = 4;
	char *dot = strchr(tok[i], '.');
	if (dot && !isdigit((unsigned char)tok[i][0]) && tok[i][0] != '-' && tok[i][0] != '.') {
		*dot = 0;
		if (check_sampler(p, tok[i]) || check_metric(p, dot + 1, 0))
			return -1;
		snprintf(b->ref_sampler, sizeof(b->ref_sampler), "%s", tok[i]);
		snprintf(b->ref_metric, sizeof(b->ref_metric), "%s", dot + 1);
		i++;
		if (i < n && (!strcmp(tok[i], "+") || !strcmp(tok[i], "-"))) {
			if (i + 1 >= n)
				return cerr(p, "'%s' needs a number after it", tok[i]);
			if (parse_value(p, tok[i + 1], &b->value))
				return -1;
			if (tok[i][0] == '-')
				b->value = -b->value;
			i += 2;
		}
	} else {
		if (parse_value(p, tok[i], &b->value))
			return -1;
		i++;
		if (i < n && !strcmp(tok[i], "*")) { /* 2.0 * host.rendezvous_p99_ns */
			if (i + 1 >= n || strncmp(tok[i + 1], "host.", 5) || !tok[i + 1][5])
				return cerr(p, "'*' needs a host fact after it (e.g. 2.0 * "
					       "host.rendezvous_p99_ns)");
			snprintf(b->host_fact, sizeof(b->host_fact), "%.47s", tok[i + 1] + 5);
			i += 2;
		}
	}
	if (i < n && !strcmp(tok[i], "floor")) { /* floor host.rendezvous_p99_ns */
		if (i + 1 >= n || strncmp(tok[i + 1], "host.", 5) || !tok[i + 1][5])
			return cerr(p, "'floor' needs a host fact after it (e.g. floor "
				       "host.rendezvous_p99_ns)");
		snprintf(b->floor_fact, sizeof(b->floor_fact), "%.47s", tok[i + 1] + 5);
		i += 2;
	}
	if (i < n && !strcmp(tok[i], "sign-test")) {
		b->sign_test = 1;
		i++;
	}
	if (i < n) {
		if (strcmp(tok[i], "if"))
			return cerr(p, "expected 'if', 'floor', 'sign-test' or the end of the line, got '%s'",
				    tok[i]);
		if (++i == n)
			return cerr(p, "'if' needs a condition");
		for (; i < n; i++) {
			if (b->nconds == GATE_MAX_CONDS)
				return cerr(p, "too many conditions (at most %d)", GATE_MAX_CONDS);
			if (parse_cond(p, tok[i], &b->conds[b->nconds++]))
				return -1;
		}
	}
	cfg->nbudgets++;
	return 0;
}

/* `expect SAMPLER METRIC REASON...`: the sampler may be a plugin, so any name is taken. */
static int parse_expect(struct cparser *p, struct gate_config *cfg, char **tok, int n)
{
	if (n < 4)
		return cerr(p, "expected 'expect SAMPLER METRIC REASON...' (the reason is required)");
	if (cfg->nexpects == GATE_MAX_EXPECTS)
		return cerr(p, "too many expect lines (at most %d)", GATE_MAX_EXPECTS);
	if (strlen(tok[1]) >= GATE_NAME_LEN)
		return cerr(p, "sampler name too long '%s'", tok[1]);
	if (check_metric(p, tok[2], 1))
		return -1;
	struct gate_expect *e = &cfg->expects[cfg->nexpects++];
	memset(e, 0, sizeof(*e));
	e->line = p->line;
	snprintf(e->sampler, sizeof(e->sampler), "%s", tok[1]);
	snprintf(e->metric, sizeof(e->metric), "%s", tok[2]);
	for (int i = 3, used = 0; i < n && used < (int)sizeof(e->reason); i++)
		used += snprintf(e->reason + used, sizeof(e->reason) - (size_t)used, "%s%s",
				 i > 3 ? " " : "", tok[i]);
	return 0;
}

int gate_config_parse(const char *text, const char *name, struct gate_config *cfg, char *err,
		      size_t errlen)
{
	struct cparser p = { .name = name, .err = err, .errlen = errlen };
	char *copy = strdup(text), *save, *line;
	int rc = -1;

	memset(cfg, 0, sizeof(*cfg));
	cfg->name = name;
	cfg->alpha = 0.05;
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (save = copy; (line = strsep(&save, "\n")) != NULL;) {
		char *tok[MAX_TOKENS], clean[512];
		p.line++;
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		int n = tokenize(line, tok);
		if (n == 0)
			continue;
		if (n == MAX_TOKENS) {
			cerr(&p, "line too long");
			goto cleanup;
		}
		clean[0] = 0;
		for (int i = 0, used = 0; i < n && used < (int)sizeof(clean); i++)
			used += snprintf(clean + used, sizeof(clean) - (size_t)used, "%s%s",
					 i ? " " : "", tok[i]);
		if (!strcmp(tok[0], "regress")) {
			if (parse_rule(&p, cfg, tok, n))
				goto cleanup;
		} else if (!strcmp(tok[0], "budget")) {
			if (parse_budget(&p, cfg, tok, n, clean + 7))
				goto cleanup;
		} else if (!strcmp(tok[0], "expect")) {
			if (parse_expect(&p, cfg, tok, n))
				goto cleanup;
		} else if (!strcmp(tok[0], "alpha")) {
			if (n != 2 || parse_value(&p, tok[1], &cfg->alpha) || !(cfg->alpha > 0) ||
			    cfg->alpha >= 1) {
				if (n != 2 || !(cfg->alpha > 0) || cfg->alpha >= 1)
					cerr(&p, "expected 'alpha P' with 0 < P < 1");
				goto cleanup;
			}
		} else if (!strcmp(tok[0], "reference")) {
			if (n != 2) {
				cerr(&p, "expected 'reference SAMPLER'");
				goto cleanup;
			}
			if (check_sampler(&p, tok[1]))
				goto cleanup;
			snprintf(cfg->reference, sizeof(cfg->reference), "%s", tok[1]);
		} else if (!strcmp(tok[0], "compare")) {
			if (n < 2 || n - 1 > GATE_MAX_LIST) {
				cerr(&p, "expected 'compare METRIC...' (1 to %d metrics)", GATE_MAX_LIST);
				goto cleanup;
			}
			cfg->ncompare = 0;
			for (int i = 1; i < n; i++) {
				if (check_metric(&p, tok[i], 0))
					goto cleanup;
				snprintf(cfg->compare[cfg->ncompare++], GATE_NAME_LEN, "%s", tok[i]);
			}
		} else {
			cerr(&p, "unknown directive '%s' (expected regress, budget, expect, alpha, "
				 "reference or compare)", tok[0]);
			goto cleanup;
		}
	}
	rc = 0;
cleanup:
	free(copy);
	return rc;
}

int gate_config_load(const char *path, struct gate_config *cfg, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	int rc = -1;

	if (!f) {
		snprintf(err, errlen, "cannot read budgets '%s': %s", path, strerror(errno));
		return -1;
	}
	text = malloc(GATE_MAX_TEXT + 1);
	if (!text) {
		snprintf(err, errlen, "out of memory");
		goto cleanup;
	}
	size_t n = fread(text, 1, GATE_MAX_TEXT + 1, f);
	if (ferror(f) || n > GATE_MAX_TEXT || memchr(text, 0, n)) {
		snprintf(err, errlen, "budgets '%s' is not a readable text file under 1 MiB", path);
		goto cleanup;
	}
	text[n] = 0;
	rc = gate_config_parse(text, path, cfg, err, errlen);
cleanup:
	free(text);
	fclose(f);
	return rc;
}

/* --- cells --- */

struct cell {
	const char *sampler, *workload;
	int threads;
	double hz;
	size_t *runs; /* indices of the cell's runs */
	size_t n;
	int failed, skipped;
	struct gate_class cls;
};

void gate_class_of(const char *sampler, const struct sb_run *runs, size_t n,
		   struct gate_class *cls)
{
	const struct sb_run *r = NULL;
	const struct sampler *s = sampler_find(sampler);

	memset(cls, 0, sizeof(*cls));
	for (size_t i = 0; i < n; i++)
		if (!strcmp(runs[i].sampler, sampler) && (!r || runs[i].status == SB_RUN_OK))
			if (!r || r->status != SB_RUN_OK)
				r = &runs[i];
	cls->clock = r ? r->clock : s ? (int)s->clock : SB_CLOCK_CPU;
	double caps = r ? run_stat(r, "class_caps") : NAN;
	if (!isnan(caps)) { /* a plugin: what it declared through the ABI (harness/plugin.c) */
		double abi = run_stat(r, "class_abi");
		cls->caps = (unsigned)caps & 0xffffu;
		cls->tick_driven = ((unsigned)caps >> 16) & 1;
		if (abi == 1)
			snprintf(cls->source, sizeof(cls->source), "plugin ABI 1: v1 defaults assumed "
				 "(thread_ids, weights, stacks, per-thread)");
		else
			snprintf(cls->source, sizeof(cls->source), "declared by the plugin (ABI %g)",
				 abi);
	} else if (s) {
		cls->caps = s->caps;
		cls->tick_driven = !!(s->flags & SB_SAMPLER_TICK_DRIVEN);
		cls->baseline = !!(s->flags & SB_SAMPLER_BASELINE);
		snprintf(cls->source, sizeof(cls->source), "built-in table");
	} else {
		/* Unknown to this sampbench and no class in the file: judge it by every rule. */
		cls->caps = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS |
			    SB_CAP_STOP_LATENCY | SB_CAP_SUSPEND_WINDOW;
		snprintf(cls->source, sizeof(cls->source), "unknown sampler, no class in the file: "
			 "every capability assumed");
	}
}

/* "cpu clock, per-thread, tick-driven, claims thread_ids,weights (built-in table)" */
static void fmt_class(char *buf, size_t len, const struct gate_class *c)
{
	size_t u = (size_t)snprintf(buf, len, "%s clock, %s%s, claims ",
				    c->clock == SB_CLOCK_WALL ? "wall" : "cpu",
				    (c->caps & SB_CAP_PROCESS_WIDE) ? "process-wide signal" : "per-thread",
				    c->tick_driven ? ", tick-driven" : "");
	int any = 0;
	for (size_t i = 1; i < NCAPS && u < len; i++)
		if (c->caps & cap_names[i].cap)
			u += (size_t)snprintf(buf + u, len - u, "%s%s", any++ ? "," : "",
					      cap_names[i].name);
	if (u < len)
		snprintf(buf + u, len - u, "%s (%s)", any ? "" : "nothing", c->source);
}

struct cells {
	struct cell *v;
	size_t n;
	size_t *idx; /* storage for every cell's run indices */
};

static int same_cell(const struct cell *c, const struct sb_run *r)
{
	return !strcmp(c->sampler, r->sampler) && !strcmp(c->workload, r->workload) &&
	       c->threads == r->threads && c->hz == r->hz;
}

static void cells_free(struct cells *cs)
{
	free(cs->v);
	free(cs->idx);
	memset(cs, 0, sizeof(*cs));
}

/* Groups runs into cells, in order of first appearance. */
static int cells_build(const struct gate_side *side, struct cells *cs)
{
	memset(cs, 0, sizeof(*cs));
	cs->v = calloc(side->nruns + 1, sizeof(*cs->v));
	cs->idx = calloc(side->nruns + 1, sizeof(*cs->idx));
	if (!cs->v || !cs->idx) {
		cells_free(cs);
		return -1;
	}
	/* two passes: count per cell, then place the indices contiguously */
	size_t *cell_of = calloc(side->nruns + 1, sizeof(*cell_of));
	if (!cell_of) {
		cells_free(cs);
		return -1;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		const struct sb_run *r = &side->runs[i];
		size_t c = 0;
		while (c < cs->n && !same_cell(&cs->v[c], r))
			c++;
		if (c == cs->n)
			cs->v[cs->n++] = (struct cell){ .sampler = r->sampler, .workload = r->workload,
							 .threads = r->threads, .hz = r->hz };
		cell_of[i] = c;
		cs->v[c].n++;
		cs->v[c].failed += r->status == SB_RUN_FAILED;
		cs->v[c].skipped += r->status == SB_RUN_SKIPPED;
	}
	size_t off = 0;
	for (size_t c = 0; c < cs->n; c++) {
		cs->v[c].runs = cs->idx + off;
		off += cs->v[c].n;
		cs->v[c].n = 0;
	}
	for (size_t i = 0; i < side->nruns; i++) {
		struct cell *c = &cs->v[cell_of[i]];
		c->runs[c->n++] = i;
	}
	for (size_t c = 0; c < cs->n; c++)
		gate_class_of(cs->v[c].sampler, side->runs, side->nruns, &cs->v[c].cls);
	free(cell_of);
	return 0;
}

static const struct cell *cells_find(const struct cells *cs, const char *sampler,
				     const char *workload, int threads, double hz)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *c = &cs->v[i];
		if (!strcmp(c->sampler, sampler) && !strcmp(c->workload, workload) &&
		    c->threads == threads && c->hz == hz)
			return c;
	}
	return NULL;
}

/* The metric's values over the cell's ok runs (NaN ones left out) into out; returns how
 * many. Pseudo metrics give one value: the count. */
static size_t cell_values(const struct gate_side *side, const struct cell *c, const char *metric,
			  double *out)
{
	int pi = pseudo_index(metric), mi;
	size_t k = 0;

	if (pi >= 0) {
		out[0] = pi == 0 ? c->failed : c->skipped;
		return 1;
	}
	mi = gate_metric_index(metric);
	if (mi < 0)
		return 0;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status != SB_RUN_OK)
			continue;
		double v = *(const double *)((const char *)&r->metrics + sb_metric_infos[mi].offset);
		if (!isnan(v))
			out[k++] = v;
	}
	return k;
}

/* --- evaluation --- */

static struct gate_check *add_check(struct gate_result *res, size_t *cap, const struct cell *c,
				    enum gate_kind kind, const char *metric)
{
	if (res->nchecks == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct gate_check *v = realloc(res->checks, ncap * sizeof(*v));
		if (!v)
			return NULL;
		res->checks = v;
		*cap = ncap;
	}
	struct gate_check *k = &res->checks[res->nchecks++];
	memset(k, 0, sizeof(*k));
	k->kind = kind;
	k->state = GATE_PASS;
	snprintf(k->sampler, sizeof(k->sampler), "%s", c->sampler);
	snprintf(k->workload, sizeof(k->workload), "%s", c->workload);
	k->threads = c->threads;
	k->hz = c->hz;
	snprintf(k->metric, sizeof(k->metric), "%s", metric);
	k->baseline = k->current = k->p = k->effect = NAN;
	return k;
}

static int op_holds(enum gate_op op, double a, double b)
{
	switch (op) {
	case GATE_LE: return a <= b;
	case GATE_GE: return a >= b;
	case GATE_LT: return a < b;
	case GATE_GT: return a > b;
	case GATE_EQ: return a == b;
	case GATE_NE: return a != b;
	}
	return 0;
}

/* Value of a numeric condition variable for cell c on host h; NaN when unknown. */
static double var_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_THREADS: return c->threads;
	case V_HZ: return c->hz;
	case V_CORES: return h->nproc > 0 ? h->nproc : NAN;
	case V_TICK: return h->tick_hz > 0 ? h->tick_hz : NAN;
	}
	return NAN;
}

/* Value of a name variable (workload, sampler, build, clock, scope) for cell c on host h. */
static const char *name_value(int v, const struct cell *c, const struct sb_host *h)
{
	switch (v) {
	case V_WORKLOAD: return c->workload;
	case V_SAMPLER: return c->sampler;
	case V_BUILD: return h->build;
	case V_CLOCK: return c->cls.clock == SB_CLOCK_WALL ? "wall" : "cpu";
	case V_SCOPE: return (c->cls.caps & SB_CAP_PROCESS_WIDE) ? "process" : "thread";
	}
	return "";
}

/* Does the cell's class claim capability `name` (`has=weights`, `has=tick`)? */
static int class_has(const struct gate_class *cls, const char *name)
{
	if (!strcmp(name, "tick"))
		return cls->tick_driven;
	for (size_t i = 0; i < NCAPS; i++)
		if (!strcmp(name, cap_names[i].name))
			return !!(cls->caps & cap_names[i].cap);
	return 0;
}

/* Does budget b apply to cell c? A condition on an unknown host fact (tick) is false. */
static int budget_applies(const struct gate_budget *b, const struct cell *c,
			  const struct sb_host *h)
{
	if (b->nsamplers) {
		int hit = 0;
		for (int i = 0; i < b->nsamplers && !hit; i++)
			hit = !strcmp(b->samplers[i], c->sampler);
		if (!hit)
			return 0;
	}
	for (int i = 0; i < b->nconds; i++) {
		const struct gate_cond *k = &b->conds[i];
		if (k->lhs == V_HAS) {
			if (class_has(&c->cls, k->name) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		if (IS_NAME_VAR(k->lhs)) {
			if ((strcmp(name_value(k->lhs, c, h), k->name) == 0) != (k->op == GATE_EQ))
				return 0;
			continue;
		}
		double a = var_value(k->lhs, c, h);
		double r = k->rhs >= 0 ? var_value(k->rhs, c, h) : k->value;
		if (isnan(a) || isnan(r) || !op_holds(k->op, a, r))
			return 0;
	}
	return 1;
}

static void fmt_value(char *buf, size_t len, const char *metric, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (is_ns_metric(metric))
		snprintf(buf, len, "%.1fµs", v / 1e3);
	else if (v == floor(v) && fabs(v) < 1e9)
		snprintf(buf, len, "%.0f", v);
	else
		snprintf(buf, len, "%.3f", v);
}

static double bad_change(enum gate_dir dir, double base, double cur)
{
	switch (dir) {
	case GATE_UP: return cur - base;
	case GATE_DOWN: return base - cur;
	case GATE_OFF_ONE: return fabs(cur - 1) - fabs(base - 1);
	}
	return NAN;
}

/* P(X >= k) for X ~ Binomial(n, 1/2): the one-sided sign test of "k of n runs over". */
static double sign_test_p(int k, int n)
{
	double p = 0, c = 1; /* c = C(n, j) */
	for (int j = 0; j <= n; j++) {
		if (j >= k)
			p += c;
		c = c * (n - j) / (j + 1);
	}
	return p / pow(2.0, n);
}

/* Quantile metrics judged on every sample of a cell pooled over its repetitions. */
static const struct { const char *metric; size_t field; double q; } pooled_metrics[] = {
	{ "stop_latency_p50_ns", offsetof(struct sb_sample, stop_latency_ns), 0.5 },
	{ "stop_latency_p99_ns", offsetof(struct sb_sample, stop_latency_ns), 0.99 },
	{ "suspend_window_p50_ns", offsetof(struct sb_sample, suspend_window_ns), 0.5 },
	{ "suspend_window_p99_ns", offsetof(struct sb_sample, suspend_window_ns), 0.99 },
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* A cell's pooled quantile with its distribution-free one-sided confidence bounds. */
struct pooled {
	size_t n;          /* samples pooled (0: the runs carry no samples) */
	double q, est;     /* the quantile and its point estimate (type 7, as metrics.c) */
	double lo, hi;     /* X_(l) <= q-quantile with prob >= 1-a; X_(u) >= it likewise */
};

/* P(Bin(n, q) = k) for every k, into pmf[0..n] (log-space, so n of 10^5 is fine). */
static void binom_pmf(size_t n, double q, double *pmf)
{
	for (size_t k = 0; k <= n; k++)
		pmf[k] = exp(lgamma((double)n + 1) - lgamma((double)k + 1) -
			     lgamma((double)(n - k) + 1) + (double)k * log(q) +
			     (double)(n - k) * log1p(-q));
}

/* Pools metric's per-sample values over the cell's ok runs and bounds its quantile: X_(l)
 * with l the largest rank such that P(Bin(n,q) >= l) >= 1 - alpha (the quantile is at or
 * above X_(l) with that confidence), X_(u) with u the smallest such that
 * P(Bin(n,q) <= u - 1) >= 1 - alpha. Order statistics only: no assumption on the
 * distribution, only independent samples. Returns 0 (pl->n = 0 when no samples), -1 when
 * out of memory or the metric is not a pooled one. */
static int pooled_quantile(const struct gate_side *side, const struct cell *c, const char *metric,
			   double alpha, struct pooled *pl)
{
	size_t field = 0, total = 0, n = 0;
	int pi = -1;

	memset(pl, 0, sizeof(*pl));
	pl->est = pl->lo = pl->hi = NAN;
	for (size_t i = 0; i < sizeof(pooled_metrics) / sizeof(pooled_metrics[0]); i++)
		if (!strcmp(pooled_metrics[i].metric, metric))
			pi = (int)i;
	if (pi < 0)
		return -1;
	field = pooled_metrics[pi].field;
	pl->q = pooled_metrics[pi].q;
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status == SB_RUN_OK && r->samples)
			total += r->nsamples;
	}
	if (total == 0)
		return 0;
	double *v = malloc(total * sizeof(*v)), *pmf = malloc((total + 1) * sizeof(*pmf));
	if (!v || !pmf) {
		free(v);
		free(pmf);
		return -1;
	}
	for (size_t i = 0; i < c->n; i++) {
		const struct sb_run *r = &side->runs[c->runs[i]];
		if (r->status != SB_RUN_OK || !r->samples)
			continue;
		for (size_t j = 0; j < r->nsamples; j++) {
			/* as metrics.c: a wall sampler's idle non-workload threads are left out */
			if (r->clock == SB_CLOCK_WALL && r->samples[j].thread_index < 0)
				continue;
			double x = *(const double *)((const char *)&r->samples[j] + field);
			if (!isnan(x))
				v[n++] = x;
		}
	}
	pl->n = n;
	if (n > 0) {
		qsort(v, n, sizeof(*v), cmp_double);
		double h = (double)(n - 1) * pl->q;
		size_t k = (size_t)h;
		pl->est = k + 1 < n ? v[k] + (h - (double)k) * (v[k + 1] - v[k]) : v[n - 1];
		binom_pmf(n, pl->q, pmf);
		double tail = 0; /* P(Bin >= l), l going down from n */
		size_t l = 0;
		for (size_t r = n; r >= 1; r--) {
			tail += pmf[r];
			if (tail >= 1 - alpha) {
				l = r;
				break;
			}
		}
		double head = 0; /* P(Bin <= u - 1), u going up from 1 */
		size_t u = 0;
		for (size_t r = 1; r <= n; r++) {
			head += pmf[r - 1];
			if (head >= 1 - alpha) {
				u = r;
				break;
			}
		}
		pl->lo = l ? v[l - 1] : -INFINITY; /* too few samples: no bound at this level */
		pl->hi = u ? v[u - 1] : INFINITY;
	}
	free(v);
	free(pmf);
	return 0;
}

static int is_pooled_metric(const char *m)
{
	for (size_t i = 0; i < sizeof(pooled_metrics) / sizeof(pooled_metrics[0]); i++)
		if (!strcmp(pooled_metrics[i].metric, m))
			return 1;
	return 0;
}

/* Timing metrics depend on the machine: compared only within one host fingerprint (or
 * inside one A/B file). Correctness metrics may be compared across machines. */
static int is_timing_metric(const char *m)
{
	size_t n = strlen(m);
	return is_ns_metric(m) || (n > 12 && !strcmp(m + n - 12, "_floor_ratio")) ||
	       !strcmp(m, "sampler_cpu_fraction") || !strcmp(m, "overhead");
}

/* How regressions are judged: across files (baseline) or inside one A/B file. */
struct reg_mode {
	int timing;       /* compare timing metrics (same fingerprint, or A/B) */
	int ab;           /* same-run A/B: pooled quantiles compared on their samples */
	double alpha_ab;  /* A/B: per-comparison level of the pooled tests (Bonferroni) */
};

/* One run's quantile q of a per-sample field, as metrics.c computes it; NaN when none. */
static double run_quantile(const struct sb_run *r, size_t field, double q, double *buf)
{
	size_t n = 0;
	for (size_t j = 0; j < r->nsamples; j++) {
		if (r->clock == SB_CLOCK_WALL && r->samples[j].thread_index < 0)
			continue;
		double x = *(const double *)((const char *)&r->samples[j] + field);
		if (!isnan(x))
			buf[n++] = x;
	}
	return quantile(buf, n, q);
}

/* Pairs A's and B's runs by repetition (interleaved: they shared the host's state) and
 * counts the pairs in which B's own quantile is worse. */
static void paired_worse(const struct gate_side *a, const struct cell *ac, const struct gate_side *b,
			 const struct cell *bc, const char *metric, enum gate_dir dir, int *worse,
			 int *pairs)
{
	size_t field = 0, total = 0;
	double q = 0.5;
	*worse = *pairs = 0;
	for (size_t i = 0; i < sizeof(pooled_metrics) / sizeof(pooled_metrics[0]); i++)
		if (!strcmp(pooled_metrics[i].metric, metric)) {
			field = pooled_metrics[i].field;
			q = pooled_metrics[i].q;
		}
	for (size_t i = 0; i < ac->n; i++)
		total = a->runs[ac->runs[i]].nsamples > total ? a->runs[ac->runs[i]].nsamples : total;
	for (size_t i = 0; i < bc->n; i++)
		total = b->runs[bc->runs[i]].nsamples > total ? b->runs[bc->runs[i]].nsamples : total;
	double *buf = malloc((total + 1) * sizeof(*buf));
	if (!buf)
		return;
	for (size_t i = 0; i < ac->n; i++) {
		const struct sb_run *ra = &a->runs[ac->runs[i]];
		for (size_t j = 0; j < bc->n; j++) {
			const struct sb_run *rb = &b->runs[bc->runs[j]];
			if (rb->repetition != ra->repetition || ra->status != SB_RUN_OK ||
			    rb->status != SB_RUN_OK)
				continue;
			double va = run_quantile(ra, field, q, buf), vb = run_quantile(rb, field, q, buf);
			if (isnan(va) || isnan(vb))
				break;
			(*pairs)++;
			*worse += bad_change(dir, va, vb) > 0;
			break;
		}
	}
	free(buf);
}

/* A/B, pooled quantile metric: regressed when B's quantile is worse than A's by more than
 * the rule's absolute minimum AND their one-sided confidence bounds at alpha_ab do not
 * meet (up: B's lower bound above A's upper bound) AND B was worse in its own repetition
 * pairs more often than chance (one-sided sign test, p < alpha: 5 of 5 pairs). The pooled
 * bounds treat samples as independent, which runs sharing a host state are not; the
 * paired sign test is what keeps a run-level drift from being called a regression.
 * Returns 1 when judged (k filled), 0 when the runs carry no samples (the caller falls
 * back to the U test). */
static int pooled_regression(const struct gate_config *cfg, const struct gate_rule *rule,
			     const struct gate_side *base, const struct cell *bc,
			     const struct gate_side *cur, const struct cell *cc,
			     const struct reg_mode *mode, struct gate_check *k)
{
	struct pooled pa, pb;
	if (pooled_quantile(base, bc, rule->metric, mode->alpha_ab, &pa) != 0 ||
	    pooled_quantile(cur, cc, rule->metric, mode->alpha_ab, &pb) != 0 || pa.n == 0 ||
	    pb.n == 0)
		return 0;
	k->nbase = (int)pa.n;
	k->ncur = (int)pb.n;
	k->baseline = pa.est;
	k->current = pb.est;
	k->effect = bad_change(rule->dir, pa.est, pb.est);
	int apart = rule->dir == GATE_DOWN ? pb.hi < pa.lo : pb.lo > pa.hi;
	int worse, pairs;
	paired_worse(base, bc, cur, cc, rule->metric, rule->dir, &worse, &pairs);
	k->p = pairs ? sign_test_p(worse, pairs) : NAN;
	int consistent = pairs > 0 && k->p < cfg->alpha;
	char lim[24], al[24], bl[24];
	fmt_value(lim, sizeof(lim), rule->metric, rule->min_abs);
	fmt_value(al, sizeof(al), rule->metric, rule->dir == GATE_DOWN ? pa.lo : pa.hi);
	fmt_value(bl, sizeof(bl), rule->metric, rule->dir == GATE_DOWN ? pb.hi : pb.lo);
	if (apart && consistent && k->effect > rule->min_abs) {
		k->state = GATE_FAIL;
		snprintf(k->reason, sizeof(k->reason), "regressed (A/B, pooled p%g of %zu/%zu "
			 "samples): worse by more than %s, bounds at %.3g apart (A %s, B %s), worse in "
			 "%d of %d pairs (%.40s:%d)", pa.q * 100, pa.n, pb.n, lim, mode->alpha_ab, al,
			 bl, worse, pairs, cfg->name, rule->line);
	} else {
		snprintf(k->reason, sizeof(k->reason), "A/B pooled p%g: %s (bounds A %s, B %s at "
			 "%.3g; worse in %d of %d pairs; minimum %s)", pa.q * 100,
			 apart && consistent ? "changed, within the minimum" : "no significant change",
			 al, bl, mode->alpha_ab, worse, pairs, lim);
	}
	return 1;
}

static void regression_checks(const struct gate_config *cfg, const struct gate_side *base,
			      const struct cell *bc, const struct gate_side *cur,
			      const struct cell *cc, const struct reg_mode *mode,
			      struct gate_result *res, size_t *cap, double *bv, double *cv)
{
	for (int i = 0; i < cfg->nrules; i++) {
		const struct gate_rule *rule = &cfg->rules[i];
		if (!mode->timing && is_timing_metric(rule->metric))
			continue; /* another machine class: said once in the notes */
		size_t nb = cell_values(base, bc, rule->metric, bv);
		size_t nc = cell_values(cur, cc, rule->metric, cv);
		if (mode->ab && is_pooled_metric(rule->metric)) {
			struct gate_check probe = { 0 };
			if (pooled_regression(cfg, rule, base, bc, cur, cc, mode, &probe)) {
				struct gate_check *k = add_check(res, cap, cc, GATE_REGRESSION,
								 rule->metric);
				if (!k)
					return;
				probe.kind = k->kind;
				probe.p = NAN;
				memcpy(probe.sampler, k->sampler, sizeof(probe.sampler));
				memcpy(probe.workload, k->workload, sizeof(probe.workload));
				probe.threads = k->threads;
				probe.hz = k->hz;
				memcpy(probe.metric, k->metric, sizeof(probe.metric));
				*k = probe;
				continue;
			}
		}
		if (nb == 0 && nc == 0)
			continue; /* the mechanism cannot measure it: nothing to compare */
		struct gate_check *k = add_check(res, cap, cc, GATE_REGRESSION, rule->metric);
		if (!k)
			return;
		k->nbase = (int)nb;
		k->ncur = (int)nc;
		k->baseline = median_of(bv, nb);
		k->current = median_of(cv, nc);
		if (nb == 0 || nc == 0) {
			k->state = GATE_WARN;
			snprintf(k->reason, sizeof(k->reason), "no values in the %s",
				 nb == 0 ? "baseline" : "current run");
			continue;
		}
		struct mwu_result u;
		if (mwu_test(cv, nc, bv, nb, &u) == 0)
			k->p = u.p;
		k->effect = bad_change(rule->dir, k->baseline, k->current);
		double need = rule->min_abs;
		if (rule->min_rel > 0 && rule->min_rel * fabs(k->baseline) > need)
			need = rule->min_rel * fabs(k->baseline);
		char lim[32];
		fmt_value(lim, sizeof(lim), rule->metric, need);
		int significant = !isnan(k->p) && k->p < cfg->alpha;
		if (significant && k->effect > need) {
			k->state = GATE_FAIL;
			snprintf(k->reason, sizeof(k->reason),
				 "regressed: worse by more than %s and p < %g (%s:%d)", lim, cfg->alpha,
				 cfg->name, rule->line);
		} else if (significant && k->effect < 0) {
			snprintf(k->reason, sizeof(k->reason), "improved (p < %g)", cfg->alpha);
		} else if (significant) {
			snprintf(k->reason, sizeof(k->reason), "changed, within %s (%s:%d)", lim,
				 cfg->name, rule->line);
		} else {
			snprintf(k->reason, sizeof(k->reason), "no significant change%s",
				 nb < 4 || nc < 4 ? " (< 4 reps a side can never reach p < 0.05)" : "");
		}
	}
}


/* The capability a metric needs, for "NaN: failure or not measured": a cap bit; 0 when
 * every sampler must give it (it counts samples or the run); -1 when it needs something
 * outside the sampler (a `none` run for overhead, host calibration for floor ratios). */
static long metric_needs(const char *m)
{
	static const struct { const char *prefix; long cap; } needs[] = {
		{ "thread_tvd", SB_CAP_THREAD_IDS },  { "wall_thread_tvd", SB_CAP_THREAD_IDS },
		{ "magnitude_error", SB_CAP_WEIGHTS }, { "misattributed_fraction", SB_CAP_STACKS },
		{ "stack_correct_fraction", SB_CAP_STACKS }, { "function_tvd", SB_CAP_STACKS },
		{ "truncated_fraction", SB_CAP_STACKS }, { "offcpu_sample_fraction", SB_CAP_STACKS },
		{ "stop_latency_", SB_CAP_STOP_LATENCY }, { "suspend_window_", SB_CAP_SUSPEND_WINDOW },
		{ "overhead", -1 }, { "sampler_cpu_", -1 }, { "offcpu_true", -1 },
		{ "eintr_", -1 }, { "short_io_", -1 }, { "interval_", -1 }, { "wall_rate", -1 },
	};
	size_t n = strlen(m);
	if (n > 12 && !strcmp(m + n - 12, "_floor_ratio"))
		return -1;
	for (size_t i = 0; i < sizeof(needs) / sizeof(needs[0]); i++)
		if (!strncmp(m, needs[i].prefix, strlen(needs[i].prefix)))
			return needs[i].cap;
	return 0;
}

static const char *cap_name(long cap)
{
	for (size_t i = 0; i < NCAPS; i++)
		if (cap_names[i].cap == (unsigned long)cap)
			return cap_names[i].name;
	return "?";
}

/* The expect line exempting (sampler, metric), or NULL. */
static const struct gate_expect *find_expect(const struct gate_config *cfg, const char *sampler,
					     const char *metric)
{
	for (int i = 0; i < cfg->nexpects; i++)
		if (!strcmp(cfg->expects[i].sampler, sampler) &&
		    !strcmp(cfg->expects[i].metric, metric))
			return &cfg->expects[i];
	return NULL;
}

/* Sets k's state and reason from `ok`, turning a failure into EXEMPT when an expect line
 * names it. */
static void settle(const struct gate_config *cfg, struct gate_check *k, int ok)
{
	k->state = ok ? GATE_PASS : GATE_FAIL;
	if (ok)
		return;
	const struct gate_expect *e = find_expect(cfg, k->sampler, k->metric);
	if (!e)
		return;
	char was[320];
	snprintf(was, sizeof(was), "%s", k->reason);
	k->state = GATE_EXEMPT;
	snprintf(k->reason, sizeof(k->reason), "EXPECTED (%.40s:%d: %.160s): %.90s", cfg->name,
		 e->line, e->reason, was);
}

/* Does another sampler of the file give `metric` in c's (workload, threads, hz)? Tells a
 * metric the workload does not define from one this sampler failed to measure. */
static int measured_nearby(const struct gate_side *side, const struct cells *cs,
			   const struct cell *c, const char *metric, double *buf)
{
	for (size_t i = 0; i < cs->n; i++) {
		const struct cell *o = &cs->v[i];
		if (o != c && !strcmp(o->workload, c->workload) && o->threads == c->threads &&
		    o->hz == c->hz && cell_values(side, o, metric, buf) > 0)
			return 1;
	}
	return 0;
}

static void budget_checks(const struct gate_config *cfg, const struct gate_side *cur,
			  const struct cells *cs, const struct cell *c, struct gate_result *res,
			  size_t *cap, double *buf)
{
	char cls[200];
	fmt_class(cls, sizeof(cls), &c->cls);
	for (int i = 0; i < cfg->nbudgets; i++) {
		const struct gate_budget *b = &cfg->budgets[i];
		if (!budget_applies(b, c, cur->host))
			continue;
		/* the `none` reference takes no samples: only run-level budgets apply to it */
		if (c->cls.baseline && pseudo_index(b->metric) < 0 &&
		    strcmp(b->metric, "checksum_errors"))
			continue;
		size_t n = cell_values(cur, c, b->metric, buf);
		struct gate_check *k = add_check(res, cap, c, GATE_BUDGET, b->metric);
		if (!k)
			return;
		snprintf(k->why, sizeof(k->why), "rule %.60s:%d `%.130s`; %s: %.170s", cfg->name,
			 b->line, b->text, c->sampler, cls);
		k->ncur = (int)n;
		k->current = median_of(buf, n);
		double limit = b->value;
		char lim[96], rvs[32];
		fmt_value(lim, sizeof(lim), b->metric, limit);
		if (b->host_fact[0]) {
			double f = host_fact(cur->host, b->host_fact);
			if (isnan(f)) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: the file has no "
					 "host fact %s (no calibration) for %s %g * host.%s (%s:%d)",
					 b->host_fact, op_names[b->op], b->value, b->host_fact,
					 cfg->name, b->line);
				continue;
			}
			limit = b->value * f;
			fmt_value(rvs, sizeof(rvs), b->host_fact, f);
			snprintf(lim, sizeof(lim), "%g x host %s %s = ", b->value, b->host_fact, rvs);
			size_t u = strlen(lim);
			fmt_value(lim + u, sizeof(lim) - u, b->metric, limit);
		}
		if (b->ref_sampler[0]) {
			const struct cell *rc = cells_find(cs, b->ref_sampler, c->workload, c->threads,
							   c->hz);
			size_t rn = rc ? cell_values(cur, rc, b->ref_metric, buf) : 0;
			double rv = median_of(buf, rn);
			if (isnan(rv)) {
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "no %s %s in this cell to compare "
					 "with (%s:%d)", b->ref_sampler, b->ref_metric, cfg->name, b->line);
				continue;
			}
			limit = rv + b->value;
			fmt_value(rvs, sizeof(rvs), b->ref_metric, rv);
			snprintf(lim, sizeof(lim), "%s %s%+g = ", b->ref_sampler, rvs, b->value);
			size_t u = strlen(lim);
			fmt_value(lim + u, sizeof(lim) - u, b->metric, limit);
		}
		k->baseline = limit;
		if (b->floor_fact[0]) {
			double fl = host_fact(cur->host, b->floor_fact);
			if (!isnan(fl) && !op_holds(b->op, fl, limit)) {
				char fs[32];
				fmt_value(fs, sizeof(fs), b->floor_fact, fl);
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "absolute budget not applicable: "
					 "floor %s (host %s) is not %s %s (%s:%d)", fs, b->floor_fact,
					 op_names[b->op], lim, cfg->name, b->line);
				continue;
			}
		}
		struct pooled pl;
		if (pooled_quantile(cur, c, b->metric, cfg->alpha, &pl) != 0 || pl.n == 0)
			pl.n = 0;
		if (n == 0 && pl.n == 0) {
			long need = metric_needs(b->metric);
			int ran = c->n > (size_t)(c->failed + c->skipped);
			if (!ran) {
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "no values (%d failed, %d skipped "
					 "runs) for budget %s %s (%s:%d)", c->failed, c->skipped,
					 op_names[b->op], lim, cfg->name, b->line);
			} else if (!measured_nearby(cur, cs, c, b->metric, buf)) {
				/* the workload does not define it (misattributed_fraction on hotspot,
				 * whose leaves are shared): nobody could have measured it */
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: no sampler of this "
					 "file gives it on %s (%s:%d)", c->workload, cfg->name, b->line);
			} else if (need > 0 && !(c->cls.caps & (unsigned long)need)) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: %s does not claim "
					 "%s (%s:%d)", c->sampler, cap_name(need), cfg->name, b->line);
			} else if (need < 0) {
				k->state = GATE_NA;
				snprintf(k->reason, sizeof(k->reason), "not measured: needs a `none` run "
					 "or host calibration in the file (%s:%d)", cfg->name, b->line);
			} else {
				snprintf(k->reason, sizeof(k->reason), "NaN in every run, yet %s (%s:%d)",
					 need > 0 ? "the sampler claims it" : "every sampler must give it",
					 cfg->name, b->line);
				settle(cfg, k, 0);
			}
			continue;
		}
		if (pl.n > 0) {
			/* a quantile: judged on every sample of the cell, failing only when its
			 * confidence interval lies beyond the limit */
			int upper = b->op == GATE_LE || b->op == GATE_LT;
			double bound = upper ? pl.lo : pl.hi;
			int ok = isinf(bound) || op_holds(b->op, bound, limit);
			char es[32], bs[32];
			fmt_value(es, sizeof(es), b->metric, pl.est);
			fmt_value(bs, sizeof(bs), b->metric, bound);
			k->current = pl.est;
			k->ncur = (int)pl.n;
			snprintf(k->reason, sizeof(k->reason), "%s %s %s: pooled p%g of %zu samples %s, "
				 "%g%% %s bound %s (%s:%d)", ok ? "budget" : "OVER BUDGET",
				 op_names[b->op], lim, pl.q * 100, pl.n, es, (1 - cfg->alpha) * 100,
				 upper ? "lower" : "upper", isinf(bound) ? "none (too few)" : bs,
				 cfg->name, b->line);
			settle(cfg, k, ok);
			continue;
		}
		int ok = op_holds(b->op, k->current, limit);
		char why[96] = "";
		if (b->sign_test) {
			/* A noisy timing metric (host stalls land in its tail): the budget fails
			 * only when the runs are over it more often than chance would make them. */
			int over = 0;
			n = cell_values(cur, c, b->metric, buf); /* buf held the reference */
			for (size_t j = 0; j < n; j++)
				over += !op_holds(b->op, buf[j], limit);
			double p = sign_test_p(over, (int)n);
			ok = !(2 * over > (int)n && p < cfg->alpha);
			k->p = p;
			snprintf(why, sizeof(why), ", %d of %zu runs over, sign test p=%.3f", over, n, p);
		}
		snprintf(k->reason, sizeof(k->reason), "%s %s %s%s (%s:%d)",
			 ok ? "budget" : "OVER BUDGET", op_names[b->op], lim, why, cfg->name, b->line);
		settle(cfg, k, ok);
	}
}

static void host_warnings(const struct gate_side *base, const struct gate_side *cur,
			  struct gate_result *res)
{
	const struct sb_host *a = base->host, *b = cur->host;
	char diff[200] = "";
	size_t u = 0;

#define HOST_DIFF(cond, ...)                                                               \
	do {                                                                               \
		if ((cond) && u < sizeof(diff))                                            \
			u += (size_t)snprintf(diff + u, sizeof(diff) - u, __VA_ARGS__);    \
	} while (0)
	HOST_DIFF(strcmp(a->host, b->host), " host %s vs %s;", a->host, b->host);
	HOST_DIFF(strcmp(a->kernel, b->kernel), " kernel %s vs %s;", a->kernel, b->kernel);
	HOST_DIFF(a->nproc != b->nproc, " nproc %d vs %d;", a->nproc, b->nproc);
	HOST_DIFF(a->tick_hz != b->tick_hz, " tick %d Hz vs %d Hz;", a->tick_hz, b->tick_hz);
#undef HOST_DIFF
	if (u == 0 || res->nwarnings == (int)(sizeof(res->warnings) / sizeof(res->warnings[0])))
		return;
	if (diff[strlen(diff) - 1] == ';')
		diff[strlen(diff) - 1] = 0;
	snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
		 "baseline comes from another machine, comparisons may be meaningless:%.170s", diff);
}

static void add_note(struct gate_result *res, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
static void add_note(struct gate_result *res, const char *fmt, ...)
{
	va_list ap;
	if (res->nnotes == (int)(sizeof(res->notes) / sizeof(res->notes[0])))
		return;
	va_start(ap, fmt);
	vsnprintf(res->notes[res->nnotes++], sizeof(res->notes[0]), fmt, ap);
	va_end(ap);
}

/* Splits an A/B file's runs by variant into a and b (shallow copies: the runs still own
 * their arrays). Returns 1 when the file holds both variants, 0 when not, -1 on no memory. */
static int split_variants(const struct gate_side *cur, struct sb_run **a, size_t *na,
			  struct sb_run **b, size_t *nb)
{
	*a = *b = NULL;
	*na = *nb = 0;
	for (size_t i = 0; i < cur->nruns; i++) {
		*na += !strcmp(cur->runs[i].variant, "A");
		*nb += !strcmp(cur->runs[i].variant, "B");
	}
	if (*na == 0 || *nb == 0)
		return 0;
	*a = malloc(*na * sizeof(**a));
	*b = malloc(*nb * sizeof(**b));
	if (!*a || !*b)
		return -1;
	*na = *nb = 0;
	for (size_t i = 0; i < cur->nruns; i++) {
		if (!strcmp(cur->runs[i].variant, "A"))
			(*a)[(*na)++] = cur->runs[i];
		else if (!strcmp(cur->runs[i].variant, "B"))
			(*b)[(*nb)++] = cur->runs[i];
	}
	return 1;
}

int gate_eval(const struct gate_config *cfg, const struct gate_side *base,
	      const struct gate_side *cur, struct gate_result *res)
{
	struct cells cc = { 0 }, bc = { 0 };
	size_t cap = 0, maxruns, na = 0, nb = 0;
	struct sb_run *ra = NULL, *rb = NULL;
	struct gate_side side_a, side_b;
	struct reg_mode mode = { .timing = 1, .alpha_ab = cfg->alpha };
	double *b1 = NULL, *b2 = NULL;
	int rc = -1;

	memset(res, 0, sizeof(*res));
	int ab = split_variants(cur, &ra, &na, &rb, &nb);
	if (ab < 0)
		goto cleanup;
	if (ab) {
		/* same-run A/B: B (the candidate) against A (the reference) inside the file;
		 * same machine and session, so timing metrics are compared too */
		side_a = (struct gate_side){ cur->path, cur->host, ra, na, cur->only };
		side_b = (struct gate_side){ cur->path, cur->host, rb, nb, cur->only };
		if (base)
			add_note(res, "the current file holds an A/B pair: the baseline '%s' is not "
				 "used", base->path ? base->path : "");
		base = &side_a;
		cur = &side_b;
		mode.ab = 1;
	}
	maxruns = cur->nruns + (base ? base->nruns : 0) + 1;
	b1 = malloc(maxruns * sizeof(*b1));
	b2 = malloc(maxruns * sizeof(*b2));
	if (!b1 || !b2 || cells_build(cur, &cc) || (base && cells_build(base, &bc)))
		goto cleanup;
	if (base && !ab) {
		host_warnings(base, cur, res);
		const char *fa = base->host->fingerprint, *fb = cur->host->fingerprint;
		if (!fa[0] || !fb[0] || strcmp(fa, fb)) {
			mode.timing = 0;
			if (fa[0] && fb[0])
				add_note(res, "timing metrics were not compared: the baseline's host "
					 "fingerprint '%s' is not the current file's '%s' (timings "
					 "compare only within one machine class); correctness metrics "
					 "were", fa, fb);
			else
				add_note(res, "timing metrics were not compared: %s, so the machines "
					 "cannot be known to match; correctness metrics were",
					 !fa[0] && !fb[0] ? "neither file has a host fingerprint" :
					 !fa[0] ? "the baseline has no host fingerprint" :
						  "the current file has no host fingerprint");
		}
	}
	if (ab) {
		/* one family of pooled tests: Bonferroni over them keeps the chance of any
		 * false alarm in a HEAD-vs-HEAD comparison under alpha */
		size_t m = 0;
		for (size_t i = 0; i < cc.n; i++)
			if (cells_find(&bc, cc.v[i].sampler, cc.v[i].workload, cc.v[i].threads,
				       cc.v[i].hz))
				for (int r = 0; r < cfg->nrules; r++)
					m += is_pooled_metric(cfg->rules[r].metric);
		mode.alpha_ab = cfg->alpha / (double)(m ? m : 1);
		add_note(res, "same-run A/B: variant B (candidate) judged against variant A "
			 "(reference) of this file with every regress rule, timing included (same "
			 "machine, same session); quantiles pooled over samples, %zu tests at "
			 "alpha %g/%zu, absolute minimum effects only", m, cfg->alpha, m ? m : 1);
	}
	if (cur->host->tick_hz <= 0)
		snprintf(res->warnings[res->nwarnings++], sizeof(res->warnings[0]),
			 "the current file has no kernel tick rate: budgets conditioned on hz<=tick "
			 "are not applied");

	for (size_t i = 0; i < cc.n; i++) {
		const struct cell *c = &cc.v[i];
		if (cur->only && strcmp(c->sampler, cur->only))
			continue;
		if (base) {
			const struct cell *b = cells_find(&bc, c->sampler, c->workload, c->threads, c->hz);
			if (b) {
				regression_checks(cfg, base, b, cur, c, &mode, res, &cap, b1, b2);
			} else {
				struct gate_check *k = add_check(res, &cap, c, GATE_MISSING, "-");
				if (!k)
					goto cleanup;
				k->state = GATE_WARN;
				snprintf(k->reason, sizeof(k->reason), "cell missing in the %s",
					 ab ? "A variant" : "baseline");
			}
		}
		budget_checks(cfg, cur, &cc, c, res, &cap, b1);
	}
	for (size_t i = 0; base && i < bc.n; i++) {
		const struct cell *b = &bc.v[i];
		if (cur->only && strcmp(b->sampler, cur->only))
			continue;
		if (cells_find(&cc, b->sampler, b->workload, b->threads, b->hz))
			continue;
		struct gate_check *k = add_check(res, &cap, b, GATE_MISSING, "-");
		if (!k)
			goto cleanup;
		k->state = GATE_WARN;
		snprintf(k->reason, sizeof(k->reason), "cell missing in the %s",
			 ab ? "B variant" : "current run");
	}
	for (size_t i = 0; i < res->nchecks; i++) {
		res->failed += res->checks[i].state == GATE_FAIL;
		res->warned += res->checks[i].state == GATE_WARN;
		res->na += res->checks[i].state == GATE_NA;
		res->exempt += res->checks[i].state == GATE_EXEMPT;
	}
	rc = 0;
cleanup:
	/* the checks copied every name they need: the cells can go */
	cells_free(&cc);
	cells_free(&bc);
	free(b1);
	free(b2);
	free(ra);
	free(rb);
	return rc;
}

void gate_result_free(struct gate_result *res)
{
	free(res->checks);
	memset(res, 0, sizeof(*res));
}

/* --- outputs --- */

static void fmt_cell(char *buf, size_t len, const struct gate_check *k)
{
	snprintf(buf, len, "%s/%s/%dt/%gHz", k->sampler, k->workload, k->threads, k->hz);
}

static const char *state_mark(enum gate_state s)
{
	static const char *const marks[] = { "✓", "✗", "!", "–", "~" };
	return marks[s];
}

/* The reference table: every sampler's medians next to the reference sampler's in the same
 * (workload, threads, hz). */
static void print_reference(FILE *out, const struct gate_config *cfg, const struct gate_side *cur)
{
	struct cells cs;
	double *buf;

	if (!cfg->reference[0] || cfg->ncompare == 0)
		return;
	buf = malloc((cur->nruns + 1) * sizeof(*buf));
	if (!buf || cells_build(cur, &cs)) {
		free(buf);
		return;
	}
	int header = 0;
	for (size_t i = 0; i < cs.n; i++) {
		const struct cell *r = &cs.v[i];
		if (strcmp(r->sampler, cfg->reference))
			continue;
		if (!header) {
			fprintf(out, "\nversus %s in the same run (medians; Δ = sampler - %s):\n",
				cfg->reference, cfg->reference);
			fprintf(out, "  %-28s", "cell");
			for (int m = 0; m < cfg->ncompare; m++)
				fprintf(out, " %24s", cfg->compare[m]);
			fputc('\n', out);
			header = 1;
		}
		for (size_t j = 0; j < cs.n; j++) {
			const struct cell *c = &cs.v[j];
			if (strcmp(c->workload, r->workload) || c->threads != r->threads || c->hz != r->hz)
				continue;
			char name[96];
			snprintf(name, sizeof(name), "%s/%s/%dt/%gHz", c->sampler, c->workload,
				 c->threads, c->hz);
			fprintf(out, "  %-28s", name);
			for (int m = 0; m < cfg->ncompare; m++) {
				const char *mn = cfg->compare[m];
				double v = median_of(buf, cell_values(cur, c, mn, buf));
				double rv = median_of(buf, cell_values(cur, r, mn, buf));
				char vs[32], ds[40], col[80];
				fmt_value(vs, sizeof(vs), mn, v);
				if (c == r || isnan(v) || isnan(rv))
					snprintf(ds, sizeof(ds), "%s", c == r ? "(ref)" : "");
				else if (is_ns_metric(mn))
					snprintf(ds, sizeof(ds), "Δ%+.1fµs", (v - rv) / 1e3);
				else
					snprintf(ds, sizeof(ds), "Δ%+.3f", v - rv);
				snprintf(col, sizeof(col), "%s %s", vs, ds);
				fprintf(out, " %24s", col);
			}
			fputc('\n', out);
		}
	}
	cells_free(&cs);
	free(buf);
}

/* Display width of UTF-8 s: continuation bytes take no column. */
static int display_width(const char *s)
{
	int w = 0;
	for (; *s; s++)
		w += ((unsigned char)*s & 0xc0) != 0x80;
	return w;
}

/* Prints s padded with spaces to width columns, left or right aligned. */
static void pad(FILE *out, const char *s, int width, int left)
{
	int fill = width - display_width(s);
	if (left)
		fputs(s, out);
	for (; fill > 0; fill--)
		fputc(' ', out);
	if (!left)
		fputs(s, out);
}

/* The row's columns: baseline -> current, p, effect. */
static void fmt_row(const struct gate_check *k, char *bc, size_t bclen, char *pv, size_t pvlen,
		    char *ev, size_t evlen)
{
	char bv[32], cv[32];
	fmt_value(bv, sizeof(bv), k->metric, k->kind == GATE_BUDGET ? NAN : k->baseline);
	fmt_value(cv, sizeof(cv), k->metric, k->current);
	snprintf(bc, bclen, "%s → %s", bv, cv);
	if (isnan(k->p))
		snprintf(pv, pvlen, "-");
	else
		snprintf(pv, pvlen, "%.3f", k->p);
	if (isnan(k->effect))
		snprintf(ev, evlen, "-");
	else if (is_ns_metric(k->metric))
		snprintf(ev, evlen, "%+.1fµs", k->effect / 1e3);
	else
		snprintf(ev, evlen, "%+.3f", k->effect);
}

void gate_print(FILE *out, const struct gate_config *cfg, const struct gate_side *cur,
		const struct gate_result *res, int failures_only)
{
	size_t nreg = 0, nbud = 0, fail_reg = 0, fail_bud = 0, missing = 0, shown = 0;
	int wcell = 4, wmetric = 6, wbc = 18;

	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], bc[80], pv[16], ev[32];
		nreg += k->kind == GATE_REGRESSION;
		nbud += k->kind == GATE_BUDGET;
		fail_reg += k->kind == GATE_REGRESSION && k->state == GATE_FAIL;
		fail_bud += k->kind == GATE_BUDGET && k->state == GATE_FAIL;
		missing += k->kind == GATE_MISSING;
		if (failures_only && k->state == GATE_PASS)
			continue;
		fmt_cell(cell, sizeof(cell), k);
		fmt_row(k, bc, sizeof(bc), pv, sizeof(pv), ev, sizeof(ev));
		if (display_width(cell) > wcell)
			wcell = display_width(cell);
		if (display_width(k->metric) > wmetric)
			wmetric = display_width(k->metric);
		if (display_width(bc) > wbc)
			wbc = display_width(bc);
	}
	fputs("  ", out);
	pad(out, "cell", wcell, 1);
	fputs("  ", out);
	pad(out, "metric", wmetric, 1);
	fputs("  ", out);
	pad(out, "baseline → current", wbc, 0);
	fprintf(out, "  %6s  %9s  %s\n", "p", "effect", "reason");
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], bc[80], pv[16], ev[32];
		if (failures_only && k->state == GATE_PASS)
			continue;
		shown++;
		fmt_cell(cell, sizeof(cell), k);
		fmt_row(k, bc, sizeof(bc), pv, sizeof(pv), ev, sizeof(ev));
		fprintf(out, "%s ", state_mark(k->state));
		pad(out, cell, wcell, 1);
		fputs("  ", out);
		pad(out, k->metric, wmetric, 1);
		fputs("  ", out);
		pad(out, bc, wbc, 0);
		fprintf(out, "  %6s  ", pv);
		pad(out, ev, 9, 0);
		fprintf(out, "  %s\n", k->reason);
		/* a failed or exempted budget says which class rule applied and why */
		if ((k->state == GATE_FAIL || k->state == GATE_EXEMPT) && k->why[0])
			fprintf(out, "    because: %s\n", k->why);
	}
	if (failures_only)
		fprintf(out, "(%zu passing checks not shown)\n", res->nchecks - shown);
	print_reference(out, cfg, cur);
	for (int i = 0; i < res->nnotes; i++)
		fprintf(out, "\nnote: %s\n", res->notes[i]);
	for (int i = 0; i < res->nwarnings; i++)
		fprintf(out, "\n!!! WARNING: %s\n", res->warnings[i]);
	fprintf(out, "\ngate: %s: %zu checks, %zu failed (%zu of %zu regression tests, %zu of %zu "
		"budgets), %zu warnings, %zu not measured or not applicable, %zu expected, %zu "
		"cells missing on one side\n",
		res->failed ? "FAIL" : "PASS", res->nchecks, res->failed, fail_reg, nreg, fail_bud,
		nbud, res->warned, res->na, res->exempt, missing);
}

static void xml_escape(FILE *f, const char *s)
{
	for (; *s; s++) {
		switch (*s) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*s, f);
		}
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;
		if (ch == '"' || ch == '\\')
			fprintf(f, "\\%c", ch);
		else if (ch < 0x20)
			fprintf(f, "\\u%04x", ch);
		else
			fputc(ch, f);
	}
	fputc('"', f);
}

static void json_num(FILE *f, double v)
{
	if (isnan(v) || isinf(v))
		fputs("null", f);
	else
		fprintf(f, "%.17g", v);
}

static const char *kind_name(enum gate_kind k)
{
	return k == GATE_REGRESSION ? "regression" : k == GATE_BUDGET ? "budget" : "missing";
}

static const char *state_name(enum gate_state s)
{
	static const char *const names[] = { "pass", "fail", "warn", "not_measured", "expected" };
	return names[s];
}

/* Opens path.tmp; the caller writes and calls finish_tmp(). */
static FILE *open_tmp(const char *path, char *tmp, size_t tmplen, char *err, size_t errlen)
{
	snprintf(tmp, tmplen, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		snprintf(err, errlen, "cannot create '%s': %s", tmp, strerror(errno));
	return f;
}

static int finish_tmp(FILE *f, const char *tmp, const char *path, char *err, size_t errlen)
{
	int bad = ferror(f);
	if (fclose(f) != 0 || bad) {
		snprintf(err, errlen, "cannot write '%s'", tmp);
		unlink(tmp);
		return -1;
	}
	if (rename(tmp, path) != 0) {
		snprintf(err, errlen, "cannot rename '%s' to '%s': %s", tmp, path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

int gate_write_junit(const char *path, const struct gate_result *res, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f = open_tmp(path, tmp, sizeof(tmp), err, errlen);

	if (!f)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	fprintf(f, "<testsuites name=\"sampbench gate\" tests=\"%zu\" failures=\"%zu\">\n",
		res->nchecks, res->failed);
	fprintf(f, "  <testsuite name=\"gate\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
		res->nchecks, res->failed, res->warned);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[160], name[256], bv[32], cv[32];
		fmt_cell(cell, sizeof(cell), k);
		snprintf(name, sizeof(name), "%s %s %s", kind_name(k->kind), k->metric, cell);
		fmt_value(bv, sizeof(bv), k->metric, k->baseline);
		fmt_value(cv, sizeof(cv), k->metric, k->current);
		fputs("    <testcase classname=\"", f);
		xml_escape(f, cell);
		fputs("\" name=\"", f);
		xml_escape(f, name);
		fputs("\"", f);
		if (k->state == GATE_PASS) {
			fputs("/>\n", f);
			continue;
		}
		fputs(">\n      <", f);
		fputs(k->state == GATE_FAIL ? "failure" : "skipped", f);
		fputs(" message=\"", f);
		xml_escape(f, k->reason);
		fprintf(f, "\">baseline %s, current %s", bv, cv);
		if (k->why[0]) {
			fputs("; ", f);
			xml_escape(f, k->why);
		}
		fprintf(f, "</%s>\n    </testcase>\n", k->state == GATE_FAIL ? "failure" : "skipped");
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish_tmp(f, tmp, path, err, errlen);
}

int gate_write_json(const char *path, const struct gate_side *base, const struct gate_side *cur,
		    const struct gate_result *res, char *err, size_t errlen)
{
	char tmp[4096];
	FILE *f = open_tmp(path, tmp, sizeof(tmp), err, errlen);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"verdict\": \"%s\",\n  \"exit_code\": %d,\n", res->failed ? "fail" : "pass",
		res->failed ? 1 : 0);
	fputs("  \"current\": ", f);
	json_string(f, cur->path ? cur->path : "");
	fputs(",\n  \"baseline\": ", f);
	if (base)
		json_string(f, base->path ? base->path : "");
	else
		fputs("null", f);
	fprintf(f, ",\n  \"checks\": %zu,\n  \"failed\": %zu,\n  \"warned\": %zu,\n  \"not_measured\": %zu,"
		"\n  \"expected\": %zu,\n  \"warnings\": [", res->nchecks, res->failed, res->warned,
		res->na, res->exempt);
	for (int i = 0; i < res->nwarnings; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, res->warnings[i]);
	}
	fputs("],\n  \"results\": [\n", f);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		fputs("    {\"kind\": ", f);
		json_string(f, kind_name(k->kind));
		fputs(", \"state\": ", f);
		json_string(f, state_name(k->state));
		fputs(", \"sampler\": ", f);
		json_string(f, k->sampler);
		fputs(", \"workload\": ", f);
		json_string(f, k->workload);
		fprintf(f, ", \"threads\": %d, \"hz\": ", k->threads);
		json_num(f, k->hz);
		fputs(", \"metric\": ", f);
		json_string(f, k->metric);
		fputs(", \"baseline\": ", f);
		json_num(f, k->baseline);
		fputs(", \"current\": ", f);
		json_num(f, k->current);
		fputs(", \"p\": ", f);
		json_num(f, k->p);
		fputs(", \"effect\": ", f);
		json_num(f, k->effect);
		fprintf(f, ", \"n_baseline\": %d, \"n_current\": %d, \"reason\": ", k->nbase, k->ncur);
		json_string(f, k->reason);
		fputs(", \"class\": ", f);
		json_string(f, k->why);
		fprintf(f, "}%s\n", i + 1 < res->nchecks ? "," : "");
	}
	fputs("  ]\n}\n", f);
	return finish_tmp(f, tmp, path, err, errlen);
}
