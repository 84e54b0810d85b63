/* cmd_show.c - `sampbench show`: the runs of an HDF5 file as a table, and the table code
 * `run` and `bench` reuse (show.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/util.h"
#include "harness/cli.h"
#include "harness/show.h"
#include "harness/tool.h"
#include "results/h5io.h"

#define CELL_LEN 48
#define ID_COLS 8 /* id sampler workload threads hz rep status samples */

/* One metric column: which metric, its header, and the scale to print it with. */
struct column {
	int metric;
	char header[CELL_LEN];
	double scale;
};

static const char *const default_metrics[] = {
	"rate_accuracy", "magnitude_error", "thread_tvd", "suspend_window_p99_ns",
	"stop_latency_p50_ns", "integrity_violations",
};

static const char *const default_headers[] = {
	"rate_accuracy", "magnitude_error", "thread_tvd", "window_p99_µs", "stop_p50_µs",
	"integrity",
};

/* Index of metric name in sb_metric_infos, or -1. */
static double metric_value(const struct sb_run *r, int metric)
{
	double v;

	memcpy(&v, (const char *)&r->metrics + sb_metric_infos[metric].offset, sizeof(v));
	return v;
}

/* Column for metric: ns metrics print in µs with a _µs header. */
static void make_column(struct column *c, int metric, const char *header)
{
	const char *name = sb_metric_infos[metric].name;
	size_t len = strlen(name);

	c->metric = metric;
	c->scale = 1;
	if (strcmp(sb_metric_infos[metric].unit, "ns") == 0) {
		c->scale = 1e-3;
		if (!header && len > 3 && strcmp(name + len - 3, "_ns") == 0) {
			snprintf(c->header, sizeof(c->header), "%.*s_µs", (int)(len - 3), name);
			return;
		}
	}
	snprintf(c->header, sizeof(c->header), "%s", header ? header : name);
}

static void format_value(char *buf, size_t len, double v, const char *unit, double scale)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (strcmp(unit, "count") == 0)
		snprintf(buf, len, "%.0f", v * scale);
	else if (strcmp(unit, "ratio") == 0)
		snprintf(buf, len, "%.4f", v * scale);
	else if (strcmp(unit, "ns") == 0 && scale != 1)
		snprintf(buf, len, "%.1f", v * scale);
	else
		snprintf(buf, len, "%.6g", v * scale);
}

/* Display width of UTF-8 text (one column per code point). */
static size_t text_width(const char *s)
{
	size_t w = 0;

	for (; *s; s++)
		if (((unsigned char)*s & 0xc0) != 0x80)
			w++;
	return w;
}

static void print_cell(FILE *out, const char *s, size_t width, int right, int last)
{
	size_t pad = width - text_width(s);

	if (right)
		fprintf(out, "%*s%s", (int)pad, "", s);
	else
		fprintf(out, "%s%*s", s, last ? 0 : (int)pad, "");
}

/* Prints s on one line: control characters become spaces. */
static void print_line_text(FILE *out, const char *s)
{
	for (; *s; s++)
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, out);
}

static void fill_row(char (*cells)[CELL_LEN], const struct sb_run *r, const struct column *cols,
		     size_t ncols)
{
	double nsamples = r->metrics.nsamples;

	if (isnan(nsamples) && r->samples)
		nsamples = (double)r->nsamples;
	snprintf(cells[0], CELL_LEN, "%lld", (long long)r->run_id);
	snprintf(cells[1], CELL_LEN, "%s", r->sampler);
	snprintf(cells[2], CELL_LEN, "%s", r->workload);
	snprintf(cells[3], CELL_LEN, "%d", r->threads);
	snprintf(cells[4], CELL_LEN, "%g", r->hz);
	snprintf(cells[5], CELL_LEN, "%d", r->repetition);
	snprintf(cells[6], CELL_LEN, "%s", run_status_name(r->status));
	format_value(cells[7], CELL_LEN, nsamples, "count", 1);
	for (size_t c = 0; c < ncols; c++)
		format_value(cells[ID_COLS + c], CELL_LEN, metric_value(r, cols[c].metric),
			     sb_metric_infos[cols[c].metric].unit, cols[c].scale);
}

/* Prints the table of runs with the given metric columns. */
static void print_table(FILE *out, const struct sb_run *runs, size_t n, const struct column *cols,
			size_t ncols)
{
	static const char *const id_headers[ID_COLS] = {
		"id", "sampler", "workload", "threads", "hz", "rep", "status", "samples",
	};
	static const int left[ID_COLS] = { 0, 1, 1, 0, 0, 0, 1, 0 };
	size_t w = ID_COLS + ncols, *width = NULL;
	char (*cells)[CELL_LEN] = NULL;

	cells = calloc((n + 1) * w, sizeof(*cells));
	width = calloc(w, sizeof(*width));
	if (!cells || !width) {
		fprintf(out, "(out of memory)\n");
		goto cleanup;
	}
	for (size_t c = 0; c < w; c++)
		snprintf(cells[c], CELL_LEN, "%s",
			 c < ID_COLS ? id_headers[c] : cols[c - ID_COLS].header);
	for (size_t i = 0; i < n; i++)
		fill_row(cells + (i + 1) * w, &runs[i], cols, ncols);
	for (size_t i = 0; i <= n; i++) {
		/* a run that did not finish prints its reason over the metric columns; a lossy
		 * one, scored, after them */
		int reason = i && !run_scored(runs[i - 1].status) && runs[i - 1].reason[0];
		size_t upto = reason ? ID_COLS : w;

		for (size_t c = 0; c < upto; c++)
			if (text_width(cells[i * w + c]) > width[c])
				width[c] = text_width(cells[i * w + c]);
	}
	for (size_t i = 0; i <= n; i++) {
		int reason = i && runs[i - 1].status != SB_RUN_OK && runs[i - 1].reason[0];
		size_t upto = reason && !run_scored(runs[i - 1].status) ? ID_COLS : w;

		for (size_t c = 0; c < upto; c++) {
			if (c)
				fputs("  ", out);
			print_cell(out, cells[i * w + c], width[c], c < ID_COLS ? !left[c] : 1,
				   c + 1 == upto);
		}
		if (reason) {
			fputs("  ", out);
			print_line_text(out, runs[i - 1].reason);
		}
		fputc('\n', out);
	}
cleanup:
	free(width);
	free(cells);
}

/* The run table with the named metric columns; unknown names are left out. */
void show_table_metrics(FILE *out, const struct sb_run *runs, size_t n,
			const char *const *metrics, size_t nmetrics)
{
	struct column *cols = calloc(nmetrics ? nmetrics : 1, sizeof(*cols));
	size_t ncols = 0;

	if (!cols) {
		fprintf(out, "(out of memory)\n");
		return;
	}
	for (size_t i = 0; i < nmetrics; i++) {
		int m = metrics_index(metrics[i]);

		if (m >= 0)
			make_column(&cols[ncols++], m, NULL);
	}
	print_table(out, runs, n, cols, ncols);
	free(cols);
}

/* The run table with the default metric columns. */
void show_table(FILE *out, const struct sb_run *runs, size_t n)
{
	struct column cols[ARRAY_SIZE(default_metrics)];
	size_t ncols = 0;

	for (size_t i = 0; i < ARRAY_SIZE(default_metrics); i++) {
		int m = metrics_index(default_metrics[i]);

		if (m >= 0)
			make_column(&cols[ncols++], m, default_headers[i]);
	}
	print_table(out, runs, n, cols, ncols);
}

/* Every (or every named) metric of each run, one per line. */
void show_vertical(FILE *out, const struct sb_run *runs, size_t n, const char *const *metrics,
		   size_t nmetrics)
{
	size_t count = metrics ? nmetrics : sb_metric_count, namew = 0;

	for (size_t j = 0; j < sb_metric_count; j++)
		if (strlen(sb_metric_infos[j].name) > namew)
			namew = strlen(sb_metric_infos[j].name);
	for (size_t i = 0; i < n; i++) {
		const struct sb_run *r = &runs[i];

		fprintf(out, "%srun %lld: %s on %s, %d thread%s, %g Hz, %g s, rep %d, ",
			i ? "\n" : "", (long long)r->run_id, r->sampler, r->workload, r->threads,
			r->threads == 1 ? "" : "s", r->hz, r->duration_s, r->repetition);
		fprintf(out, "%s clock: %s\n", r->clock ? "wall" : "cpu",
			run_status_name(r->status));
		int tool = !isnan(run_stat(r, "class_recipe"));
		unsigned caps = tool ? (unsigned)run_stat(r, "class_caps") & 0xffffu : 0;
		if (r->reason[0]) {
			fputs("  reason: ", out);
			print_line_text(out, r->reason);
			fputc('\n', out);
		}
		for (size_t j = 0; j < count; j++) {
			int m = metrics ? metrics_index(metrics[j]) : (int)j;
			char val[CELL_LEN];

			if (m < 0)
				continue;
			double v = metric_value(r, m);
			format_value(val, sizeof(val), v, sb_metric_infos[m].unit, 1);
			fprintf(out, "  %-*s  %14s  %s", (int)namew, sb_metric_infos[m].name, val,
				sb_metric_infos[m].unit);
			/* a tool's NaN: what its recipe's class rules out */
			const char *why = isnan(v) && tool && run_scored(r->status)
				? tool_metric_nan_reason(sb_metric_infos[m].name, caps,
							 r->clock == SB_CLOCK_WALL)
				: NULL;
			if (why)
				fprintf(out, "%*s  (%s)", 5 - (int)strlen(sb_metric_infos[m].unit), "",
					why);
			fputc('\n', out);
		}
	}
}

/* The host facts on one line. */
void show_host(FILE *out, const struct sb_host *h)
{
	fprintf(out, "host %s, kernel %s, %d cpus, ", h->host, h->kernel, h->nproc);
	if (h->tick_hz > 0)
		fprintf(out, "tick %d Hz (%s), ", h->tick_hz, h->tick_source);
	else
		fprintf(out, "tick unknown, ");
	fprintf(out, "%s, sampbench %s (%s)\n", h->compiler, h->version, h->git_rev);
}

/* The row of mechanism name at phase, or NULL. */
static const struct sb_calib_row *calib_row(const struct sb_host *h, const char *name,
					    const char *phase)
{
	for (int32_t i = 0; i < h->ncalib && i < SB_CALIB_MAX; i++)
		if (!strcmp(h->calib[i].name, name) && !strcmp(h->calib[i].phase, phase))
			return &h->calib[i];
	return NULL;
}

static void print_phase(FILE *out, const struct sb_calib_row *c)
{
	if (!c)
		fprintf(out, " %8s %8s %8s", "-", "-", "-");
	else if (c->n <= 0)
		fprintf(out, " %-26s", "not measured");
	else
		fprintf(out, " %8.2f %8.2f %8.2f", c->p50_ns / 1e3, c->p99_ns / 1e3, c->max_ns / 1e3);
}

void show_calibration(FILE *out, const struct sb_host *h)
{
	if (h->fingerprint[0])
		fprintf(out, "machine %s\n", h->fingerprint);
	if (h->ncalib == 0) {
		fprintf(out, "calibration: none in this file (timings have no host floor)\n");
		return;
	}
	fprintf(out, "calibration, this host's floors in µs (docs/metrics.md):\n");
	fprintf(out, "  %-24s %8s %8s %8s   %8s %8s %8s\n", "mechanism", "start p50", "p99", "max",
		"end p50", "p99", "max");
	for (int32_t i = 0; i < h->ncalib && i < SB_CALIB_MAX; i++) {
		const struct sb_calib_row *c = &h->calib[i];
		if (strcmp(c->phase, "start") && calib_row(h, c->name, "start"))
			continue; /* printed with its start row */
		fprintf(out, "  %-24s", c->name);
		print_phase(out, calib_row(h, c->name, "start"));
		fprintf(out, "  ");
		print_phase(out, calib_row(h, c->name, "end"));
		const struct sb_calib_row *why = c->n <= 0 ? c : NULL;
		if (why && why->reason[0])
			fprintf(out, "  (%s)", why->reason);
		fputc('\n', out);
	}
}

static struct env {
	const char *metrics; /* --metrics LIST */
	int all;
} env;

static const struct env env_defaults = { 0 };

const struct opt cmd_show_options[] = {
	OPT_STRING('m', "metrics", &env.metrics, "LIST",
		   "comma-separated metric columns instead of the default"),
	OPT_BOOLEAN('a', "all", &env.all, "every metric (or the --metrics ones) per run, one per line"),
	OPT_HELP(),
	OPT_END(),
};

static void usage(FILE *out)
{
	size_t col = 2;

	fprintf(out,
		"usage: sampbench show [--metrics LIST] [--all] FILE.h5\n"
		"\n"
		"Prints the host and one row per run of FILE.h5: id, sampler, workload, threads,\n"
		"hz, repetition, status, samples and metrics (ns metrics in µs). `-` is a metric\n"
		"the mechanism cannot measure; failed and skipped runs show why. Without\n"
		"--metrics or --all, then the footprint table: per sampler, the medians over its\n"
		"ok runs of the CPU measured from the process against the CPU it claims, its\n"
		"private memory's peak above `none` and growth, and the integrity counts\n"
		"(docs/metrics.md \"What the sampler costs the process\").\n"
		"\n");
	opt_help(out, cmd_show_options);
	fputs("\nmetrics:\n ", out);
	for (size_t i = 0; i < sb_metric_count; i++) {
		size_t len = strlen(sb_metric_infos[i].name) + 1;

		if (col + len > 88) {
			fputs("\n ", out);
			col = 2;
		}
		fprintf(out, " %s", sb_metric_infos[i].name);
		col += len;
	}
	fputc('\n', out);
}

/* Splits list at commas into *names (pointers into list). Returns the count, or -1 after
 * printing an error for an unknown or empty name. */
static int parse_metrics(char *list, const char ***names)
{
	size_t max = 1, n = 0;
	char *save = NULL, *tok;

	for (const char *p = list; *p; p++)
		max += *p == ',';
	*names = calloc(max, sizeof(**names));
	if (!*names) {
		sb_err("out of memory");
		return -1;
	}
	for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (metrics_index(tok) < 0) {
			sb_err("unknown metric '%s' (see 'sampbench show --help')", tok);
			return -1;
		}
		(*names)[n++] = tok;
	}
	if (!n) {
		sb_err("--metrics needs at least one metric name");
		return -1;
	}
	return (int)n;
}

/* `sampbench show [--metrics LIST] [--all] FILE.h5`. Returns the exit code. */
int cmd_show(int argc, char **argv)
{
	const char **names = NULL;
	struct sb_run *runs = NULL;
	char *list = NULL, err[512];
	int rc = SB_EXIT_USAGE, nnames = 0;
	struct sb_host host;
	size_t nruns = 0;

	env = env_defaults;
	int first = opt_parse("show", cmd_show_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (first < 0)
		return SB_EXIT_USAGE;
	if (opt_operands("show", argv, first, argc, 1, 1, "FILE.h5") != 0)
		return SB_EXIT_USAGE;
	if (env.metrics) {
		list = strdup(env.metrics);
		if (!list) {
			sb_err("out of memory");
			return SB_EXIT_USAGE;
		}
		nnames = parse_metrics(list, &names);
		if (nnames < 0)
			goto cleanup;
	}
	if (h5_read(argv[first], &host, &runs, &nruns, 0, err, sizeof(err)) < 0) {
		sb_err("%s", err);
		goto cleanup;
	}
	show_host(stdout, &host);
	show_calibration(stdout, &host);
	if (env.all)
		show_vertical(stdout, runs, nruns, names, (size_t)nnames);
	else if (names)
		show_table_metrics(stdout, runs, nruns, names, (size_t)nnames);
	else
		show_table(stdout, runs, nruns);
	if (!env.all && !names)
		show_footprint(stdout, runs, nruns);
	rc = SB_EXIT_OK;
cleanup:
	for (size_t i = 0; i < nruns; i++)
		run_free(&runs[i]);
	free(runs);
	free(names);
	free(list);
	return rc;
}
