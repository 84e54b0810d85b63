/* gate_out.c - the gate's outputs: the verdict table with its `because:` lines, the table
 * against the reference sampler, JUnit XML and JSON (each through a temporary
 * file, renamed). */
#include "analysis/gate_int.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/mwu.h"
#include "core/atomic_file.h"

/* --- outputs --- */

/* The cell of k, after its host in a file of several hosts: "host/sampler/...". */
static void fmt_cell(char *buf, size_t len, const struct gate_check *k)
{
	snprintf(buf, len, "%s%s%s/%s/%dt/%gHz", k->host, k->host[0] ? "/" : "", k->sampler,
		 k->workload, k->threads, k->hz);
}

static const char *state_mark(enum gate_state s)
{
	static const char *const marks[] = { "✓", "✗", "!", "–", "~", "?" };
	return marks[s];
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

/* The reference table: every sampler's medians next to the reference sampler's in the same
 * (workload, threads, hz) on the same host (label: which, in a file of several hosts). */
static void print_reference(FILE *out, const struct gate_config *cfg, const struct gate_side *cur,
			    const char *label)
{
	struct cells cs;
	double *buf;

	if (!cfg->reference[0] || cfg->ncompare == 0)
		return;
	buf = malloc((cur->nruns + 1) * sizeof(*buf));
	if (!buf || gate_cells_build(cur, &cs)) {
		free(buf);
		return;
	}
	int header = 0, width = 28;
	/* the cell column fits the longest name (a tool's may be 21 characters) */
	for (size_t i = 0; i < cs.n; i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s/%s/%dt/%gHz", cs.v[i].sampler, cs.v[i].workload,
			 cs.v[i].threads, cs.v[i].hz);
		if (display_width(name) > width)
			width = display_width(name);
	}
	for (size_t i = 0; i < cs.n; i++) {
		const struct cell *r = &cs.v[i];
		if (strcmp(r->sampler, cfg->reference))
			continue;
		if (!header) {
			fprintf(out, "\nversus %s in the same run%s%s (medians; Δ = sampler - %s):\n",
				cfg->reference, label ? " on host " : "", label ? label : "",
				cfg->reference);
			fputs("  ", out);
			pad(out, "cell", width, 1);
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
			fputs("  ", out);
			pad(out, name, width, 1);
			for (int m = 0; m < cfg->ncompare; m++) {
				const char *mn = cfg->compare[m];
				double v = median_of(buf, gate_cell_values(cur, c, mn, buf));
				double rv = median_of(buf, gate_cell_values(cur, r, mn, buf));
				char vs[32], ds[40], col[80];
				gate_fmt_value(vs, sizeof(vs), mn, v);
				if (c == r || isnan(v) || isnan(rv))
					snprintf(ds, sizeof(ds), "%s", c == r ? "(ref)" : "");
				else if (gate_is_ns_metric(mn))
					snprintf(ds, sizeof(ds), "Δ%+.1fµs", (v - rv) / 1e3);
				else
					snprintf(ds, sizeof(ds), "Δ%+.3f", v - rv);
				snprintf(col, sizeof(col), "%s %s", vs, ds);
				fputc(' ', out);
				pad(out, col, 24, 0); /* "Δ" is two bytes, one column */
			}
			fputc('\n', out);
		}
	}
	gate_cells_free(&cs);
	free(buf);
}

/* The reference tables: one, or one per host of a file of several hosts (its cells never
 * pool hosts). */
static void print_references(FILE *out, const struct gate_config *cfg,
			     const struct gate_side *cur, const struct gate_result *res)
{
	struct gate_hostset hs;

	if (res->nhosts == 0 || gate_hosts_group(cur, &hs) != 0) {
		print_reference(out, cfg, cur, NULL);
		return;
	}
	for (size_t g = 0; g < hs.n; g++) {
		struct gate_side side;
		struct sb_run *runs;
		if (gate_side_of_host(cur, &hs, g, &side, &runs) != 0)
			break;
		print_reference(out, cfg, &side, hs.label[g]);
		free(runs);
	}
	gate_hosts_free(&hs);
}


/* The row's columns: baseline -> current, p, effect. */
static void fmt_row(const struct gate_check *k, char *bc, size_t bclen, char *pv, size_t pvlen,
		    char *ev, size_t evlen)
{
	char bv[32], cv[32];
	gate_fmt_value(bv, sizeof(bv), k->metric, k->kind == GATE_BUDGET ? NAN : k->baseline);
	gate_fmt_value(cv, sizeof(cv), k->metric, k->current);
	snprintf(bc, bclen, "%s → %s", bv, cv);
	if (isnan(k->p))
		snprintf(pv, pvlen, "-");
	else
		snprintf(pv, pvlen, "%.3f", k->p);
	if (isnan(k->effect))
		snprintf(ev, evlen, "-");
	else if (gate_is_ns_metric(k->metric))
		snprintf(ev, evlen, "%+.1fµs", k->effect / 1e3);
	else
		snprintf(ev, evlen, "%+.3f", k->effect);
}

/* One line on the `reps` rows of an adaptive bench (nothing without one): how many cells
 * were decided before their maximum, ran to it, or were left open, and the runs. */
static void print_reps_summary(FILE *out, const struct gate_result *res)
{
	size_t cells = 0, early = 0, until = 0, open = 0, refs = 0;
	double runs = 0;

	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		if (k->kind != GATE_REPS)
			continue;
		cells++;
		runs += k->current;
		if (k->state == GATE_WARN)
			open++;
		else if (strstr(k->reason, "the reference"))
			refs++;
		else if (strstr(k->reason, "until the maximum"))
			until++;
		else
			early++;
	}
	if (cells)
		fprintf(out, "\nadaptive repetitions: %zu cells (%zu of them `none`), %.0f runs: "
			"%zu decided before their maximum, %zu undecided until it, %zu left "
			"open\n", cells, refs, runs, early, until, open);
}

/* The failed and undecided rows again, one line each, just above the verdict: the table of
 * references can be long, and a CI log is often read from its tail. */
static void print_failed_recap(FILE *out, const struct gate_result *res)
{
	int header = 0;

	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[256];
		if (k->state != GATE_FAIL && k->state != GATE_UNDECIDED)
			continue;
		if (!header++)
			fputs("\nfailed or undecided (as above):\n", out);
		fmt_cell(cell, sizeof(cell), k);
		/* not the table's mark: scripts count the table's rows by it */
		fprintf(out, "  %s %s %s: %s\n", k->state == GATE_FAIL ? "failed" : "undecided",
			cell, k->metric, k->reason);
	}
}

void gate_print(FILE *out, const struct gate_config *cfg, const struct gate_side *cur,
		const struct gate_result *res, int failures_only)
{
	size_t nreg = 0, nbud = 0, fail_reg = 0, fail_bud = 0, missing = 0, shown = 0;
	int wcell = 4, wmetric = 6, wbc = 18;

	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[256], bc[80], pv[16], ev[32];
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
	pad(out, res->nhosts ? "host/cell" : "cell", wcell, 1);
	fputs("  ", out);
	pad(out, "metric", wmetric, 1);
	fputs("  ", out);
	pad(out, "baseline → current", wbc, 0);
	fprintf(out, "  %6s  %9s  %s\n", "p", "effect", "reason");
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		char cell[256], bc[80], pv[16], ev[32];
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
		/* a failed, exempted or undecided budget says which class rule applied and why */
		if ((k->state == GATE_FAIL || k->state == GATE_EXEMPT ||
		     k->state == GATE_UNDECIDED) && k->why[0])
			fprintf(out, "    because: %s\n", k->why);
	}
	if (failures_only)
		fprintf(out, "(%zu passing checks not shown)\n", res->nchecks - shown);
	print_references(out, cfg, cur, res);
	for (int i = 0; i < res->nnotes; i++)
		fprintf(out, "\nnote: %s\n", res->notes[i]);
	for (int i = 0; i < res->nwarnings; i++)
		fprintf(out, "\n!!! WARNING: %s\n", res->warnings[i]);
	print_reps_summary(out, res);
	print_failed_recap(out, res);
	fprintf(out, "\ngate: %s", gate_failed(res) ? "FAIL" : "PASS");
	for (size_t h = 0; h < res->nhosts; h++)
		fprintf(out, "%s%s %s%s", h ? ", " : " (", res->hosts[h].host,
			gate_host_failed(res, &res->hosts[h]) ? "FAIL" : "PASS",
			h + 1 == res->nhosts ? ")" : "");
	fprintf(out, ": %zu checks, %zu failed (%zu of %zu regression tests, %zu of %zu "
		"budgets), %zu undecided (too few runs to judge%s), %zu warnings, %zu not measured "
		"or not applicable, %zu expected, %zu cells missing on one side\n",
		res->nchecks, res->failed, fail_reg, nreg, fail_bud, nbud, res->undecided,
		res->undecided && res->undecided_pass ? "; --undecided=pass" : "", res->warned,
		res->na, res->exempt, missing);
}

/* The length of the UTF-8 sequence at s (1-4), or 0 when it is not one: a text cut to a
 * width may end inside a character ("427.0µs" cut after the first byte of µ). */
static int utf8_seq_len(const unsigned char *s)
{
	int n = s[0] < 0x80 ? 1 : s[0] >= 0xc2 && s[0] < 0xe0 ? 2 :
		s[0] >= 0xe0 && s[0] < 0xf0 ? 3 : s[0] >= 0xf0 && s[0] < 0xf5 ? 4 : 0;
	for (int i = 1; i < n; i++)
		if ((s[i] & 0xc0) != 0x80)
			return 0;
	return n;
}

/* s as XML attribute text; a byte that does not start a whole UTF-8 character becomes
 * U+FFFD, as in json_string. */
static void xml_escape(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	while (*u) {
		int n = utf8_seq_len(u);
		switch (n ? *u : 0) {
		case 0: fputs("&#xfffd;", f); break;
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fwrite(u, 1, (size_t)n, f);
		}
		u += n ? n : 1;
	}
}

/* s as a JSON string; a byte that does not start a whole UTF-8 character becomes U+FFFD,
 * so the file stays valid JSON. */
static void json_string(FILE *f, const char *s)
{
	const unsigned char *u = (const unsigned char *)s;

	fputc('"', f);
	while (*u) {
		int n = utf8_seq_len(u);
		if (n == 0) {
			fputs("\\ufffd", f);
			u++;
		} else if (*u == '"' || *u == '\\') {
			fprintf(f, "\\%c", *u++);
		} else if (*u < 0x20) {
			fprintf(f, "\\u%04x", *u++);
		} else {
			fwrite(u, 1, (size_t)n, f);
			u += n;
		}
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
	return k == GATE_REGRESSION ? "regression" : k == GATE_BUDGET ? "budget"
	       : k == GATE_REPS ? "reps" : "missing";
}

static const char *state_name(enum gate_state s)
{
	static const char *const names[] = { "pass", "fail", "warn", "not_measured", "expected",
					     "undecided" };
	return names[s];
}

/* Opens a temporary file for path; the caller writes and calls finish_tmp(). */
static FILE *open_tmp(struct atomic_file *af, const char *path, char *err, size_t errlen)
{
	FILE *f = atomic_file_open(af, path);
	if (!f)
		snprintf(err, errlen, "cannot create '%s': %s", path, strerror(errno));
	return f;
}

static int finish_tmp(struct atomic_file *af, char *err, size_t errlen)
{
	switch (atomic_file_commit(af)) {
	case 0:
		return 0;
	case ATOMIC_FILE_RENAME_FAILED:
		snprintf(err, errlen, "cannot rename a temporary file to '%s': %s", af->path,
			 strerror(errno));
		return -1;
	default:
		snprintf(err, errlen, "cannot write '%s'", af->path);
		return -1;
	}
}

int gate_write_junit(const char *path, const struct gate_result *res, char *err, size_t errlen)
{
	struct atomic_file af;
	FILE *f = open_tmp(&af, path, err, errlen);

	if (!f)
		return -1;
	fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
	size_t nfail = res->failed + (res->undecided_pass ? 0 : res->undecided);
	fprintf(f, "<testsuites name=\"sampbench gate\" tests=\"%zu\" failures=\"%zu\">\n",
		res->nchecks, nfail);
	fprintf(f, "  <testsuite name=\"gate\" tests=\"%zu\" failures=\"%zu\" skipped=\"%zu\">\n",
		res->nchecks, nfail, res->warned);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i]; /* cell: host/... with several */
		char cell[256], name[384], bv[32], cv[32];
		fmt_cell(cell, sizeof(cell), k);
		snprintf(name, sizeof(name), "%s %s %s", kind_name(k->kind), k->metric, cell);
		gate_fmt_value(bv, sizeof(bv), k->metric, k->baseline);
		gate_fmt_value(cv, sizeof(cv), k->metric, k->current);
		fputs("    <testcase classname=\"", f);
		xml_escape(f, cell);
		fputs("\" name=\"", f);
		xml_escape(f, name);
		fputs("\"", f);
		if (k->state == GATE_PASS) {
			fputs("/>\n", f);
			continue;
		}
		/* an undecided check fails like a failed one unless --undecided=pass */
		const char *tag = k->state == GATE_FAIL || (k->state == GATE_UNDECIDED &&
							    !res->undecided_pass) ? "failure" : "skipped";
		fputs(">\n      <", f);
		fputs(tag, f);
		fputs(" message=\"", f);
		xml_escape(f, k->reason);
		fprintf(f, "\">baseline %s, current %s", bv, cv);
		if (k->why[0]) {
			fputs("; ", f);
			xml_escape(f, k->why);
		}
		fprintf(f, "</%s>\n    </testcase>\n", tag);
	}
	fputs("  </testsuite>\n</testsuites>\n", f);
	return finish_tmp(&af, err, errlen);
}

int gate_write_json(const char *path, const struct gate_side *base, const struct gate_side *cur,
		    const struct gate_result *res, char *err, size_t errlen)
{
	struct atomic_file af;
	FILE *f = open_tmp(&af, path, err, errlen);

	if (!f)
		return -1;
	fprintf(f, "{\n  \"verdict\": \"%s\",\n  \"exit_code\": %d,\n",
		gate_failed(res) ? "fail" : "pass", gate_failed(res));
	fputs("  \"current\": ", f);
	json_string(f, cur->path ? cur->path : "");
	fputs(",\n  \"baseline\": ", f);
	if (base)
		json_string(f, base->path ? base->path : "");
	else
		fputs("null", f);
	fprintf(f, ",\n  \"checks\": %zu,\n  \"failed\": %zu,\n  \"undecided\": %zu,\n  "
		"\"warned\": %zu,\n  \"not_measured\": %zu,\n  \"expected\": %zu,\n  \"warnings\": [",
		res->nchecks, res->failed, res->undecided, res->warned, res->na, res->exempt);
	for (int i = 0; i < res->nwarnings; i++) {
		fputs(i ? ", " : "", f);
		json_string(f, res->warnings[i]);
	}
	fputs("],\n", f);
	if (res->nhosts) {
		/* a merged file of several hosts: the verdict of each */
		fputs("  \"hosts\": [\n", f);
		for (size_t h = 0; h < res->nhosts; h++) {
			const struct gate_host_verdict *v = &res->hosts[h];
			fputs("    {\"host\": ", f);
			json_string(f, v->host);
			fputs(", \"fingerprint\": ", f);
			json_string(f, v->fingerprint);
			fprintf(f, ", \"verdict\": \"%s\", \"checks\": %zu, \"failed\": %zu, "
				"\"undecided\": %zu, \"warned\": %zu, \"not_measured\": %zu, "
				"\"expected\": %zu}%s\n", gate_host_failed(res, v) ? "fail" : "pass",
				v->nchecks, v->failed, v->undecided, v->warned, v->na, v->exempt,
				h + 1 < res->nhosts ? "," : "");
		}
		fputs("  ],\n", f);
	}
	fputs("  \"results\": [\n", f);
	for (size_t i = 0; i < res->nchecks; i++) {
		const struct gate_check *k = &res->checks[i];
		fputs("    {\"kind\": ", f);
		json_string(f, kind_name(k->kind));
		fputs(", \"state\": ", f);
		json_string(f, state_name(k->state));
		if (k->host[0]) {
			fputs(", \"host\": ", f);
			json_string(f, k->host);
		}
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
	return finish_tmp(&af, err, errlen);
}
