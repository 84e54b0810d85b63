/* cmd_history.c - `sampbench history`: chosen metrics per cell over the commits of several
 * bench files, as a table and an SVG plot, marking the gate's failed checks. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "core/atomic_file.h"
#include "core/util.h"
#include "harness/cli.h"
#include "results/h5io.h"

#define HIST_MAX_METRICS 8
#define HIST_MAX_CELLS 256

static const char history_usage[] =
	"usage: sampbench history [--metric M[,M...]] [--sampler S[,S...]] [--plot OUT.svg]\n"
	"                         FILE.h5...\n"
	"\n"
	"Prints each chosen metric per cell (sampler, workload, threads, hz: the median of its\n"
	"ok runs) over the files, oldest first by their `created` time, one column per file\n"
	"headed by its git revision. A value the gate failed is marked with '!': the gate's\n"
	"JSON next to the file (FILE.gate.json, as `make bench` writes it) is read when there;\n"
	"the verdict row shows PASS, FAIL or '-' (no gate file). A/B files contribute their A\n"
	"runs (B is another revision).\n"
	"\n";

static struct env {
	const char *metrics;
	const char *samplers;
	char metric_list[256]; /* the two lists, cut into names in place */
	char sampler_list[256];
	const char *plot;
	char **files;
	int nfiles;
} env;

static const struct env env_defaults = {
	.metrics = "suspend_window_p50_ns,suspend_window_p99_ns",
};

struct hfile {
	const char *path;
	char created[40];
	char rev[16];
	int gated;    /* a gate JSON was found */
	int gate_ok;  /* its verdict */
	char *gate;   /* its text, NULL when absent */
	struct sb_run *runs;
	size_t n;
};

struct cell {
	char sampler[SB_NAME_LEN], workload[SB_NAME_LEN];
	int threads;
	double hz;
};

const struct opt cmd_history_options[] = {
	OPT_STRING('m', "metric", &env.metrics, "LIST",
		   "metrics (default: suspend_window_p50_ns,suspend_window_p99_ns)"),
	OPT_STRING('s', "sampler", &env.samplers, "LIST",
		   "only these samplers (default: every sampler with a value)"),
	OPT_STRING('p', "plot", &env.plot, "FILE",
		   "also draw the table as an SVG plot, one panel per metric"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("history", cmd_history_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (opt_operands("history", argv, first, argc, 1, -1, "FILE.h5") != 0)
		return -1;
	env.files = argv + first;
	env.nfiles = argc - first;
	snprintf(env.metric_list, sizeof(env.metric_list), "%s", env.metrics);
	snprintf(env.sampler_list, sizeof(env.sampler_list), "%s",
		 env.samplers ? env.samplers : "");
	return 0;
}

/* Resolves the comma list of metric names. Returns the count, or -1 after one line. */
static int parse_metrics(const struct sb_metric_info **out)
{
	int n = 0;
	char *save = NULL;

	for (char *t = strtok_r(env.metric_list, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		const struct sb_metric_info *mi = NULL;
		for (size_t i = 0; i < sb_metric_count && !mi; i++)
			if (!strcmp(sb_metric_infos[i].name, t))
				mi = &sb_metric_infos[i];
		if (!mi) {
			sb_err("unknown metric '%s' (see docs/metrics.md)", t);
			return -1;
		}
		if (n == HIST_MAX_METRICS) {
			sb_err("too many metrics (at most %d)", HIST_MAX_METRICS);
			return -1;
		}
		out[n++] = mi;
	}
	if (n == 0) {
		sb_err("--metric names no metric");
		return -1;
	}
	return n;
}

static int sampler_wanted(const char *name)
{
	if (!env.sampler_list[0])
		return 1;
	size_t len = strlen(name);
	for (const char *p = env.sampler_list; *p;) {
		size_t k = strcspn(p, ",");
		if (k == len && !strncmp(p, name, len))
			return 1;
		p += k + (p[k] == ',');
	}
	return 0;
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return NULL;
	size_t cap = 65536, n = 0;
	char *buf = malloc(cap);
	size_t k;
	while (buf && (k = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += k;
		if (n + 1 == cap) {
			char *p = realloc(buf, cap *= 2);
			if (!p) {
				free(buf);
				buf = NULL;
			}
			buf = p;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	return buf;
}

/* The gate JSON `make bench` wrote next to the file, if any: FILE.gate.json for FILE.h5. */
static void load_gate(struct hfile *h)
{
	char path[4096];
	size_t len = strlen(h->path);

	if (len > 3 && !strcmp(h->path + len - 3, ".h5"))
		len -= 3;
	snprintf(path, sizeof(path), "%.*s.gate.json", (int)len, h->path);
	h->gate = slurp(path);
	h->gated = h->gate != NULL;
	h->gate_ok = h->gated && strstr(h->gate, "\"verdict\": \"pass\"") != NULL;
}

/* Did the file's gate fail `metric` of cell c? One JSON object per check per line (gate.c). */
static int gate_failed(const struct hfile *h, const struct cell *c, const char *metric)
{
	char want[512], th[32];

	if (!h->gate)
		return 0;
	snprintf(want, sizeof(want), "\"sampler\": \"%s\", \"workload\": \"%s\"", c->sampler,
		 c->workload);
	snprintf(th, sizeof(th), "\"threads\": %d,", c->threads);
	for (const char *line = h->gate; line && *line;) {
		const char *end = strchr(line, '\n');
		size_t len = end ? (size_t)(end - line) : strlen(line);
		char buf[2048];
		snprintf(buf, sizeof(buf), "%.*s", (int)(len < sizeof(buf) ? len : sizeof(buf) - 1),
			 line);
		char m[160];
		snprintf(m, sizeof(m), "\"metric\": \"%s\"", metric);
		if (strstr(buf, "\"state\": \"fail\"") && strstr(buf, want) && strstr(buf, th) &&
		    strstr(buf, m))
			return 1;
		line = end ? end + 1 : NULL;
	}
	return 0;
}

static int by_created(const void *a, const void *b)
{
	return strcmp(((const struct hfile *)a)->created, ((const struct hfile *)b)->created);
}

/* Median of metric mi over the ok, non-B runs of cell c in h; NaN when none. */
static double cell_value(const struct hfile *h, const struct cell *c,
			 const struct sb_metric_info *mi)
{
	double v[1024];
	size_t k = 0;

	for (size_t i = 0; i < h->n && k < 1024; i++) {
		const struct sb_run *r = &h->runs[i];
		if (!run_scored(r->status) || !strcmp(r->variant, "B") || strcmp(r->sampler, c->sampler) ||
		    strcmp(r->workload, c->workload) || r->threads != c->threads || r->hz != c->hz)
			continue;
		memcpy(&v[k++], (const char *)&r->metrics + mi->offset, sizeof(double));
	}
	return quantile(v, k, 0.5);
}

static void fmt_value(char *buf, size_t len, double v, const struct sb_metric_info *mi)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (!strcmp(mi->unit, "ns"))
		snprintf(buf, len, "%.1fus", v / 1e3);
	else
		snprintf(buf, len, "%.4g", v);
}

static const char *palette[] = { "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
				 "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf" };

/* Writes the SVG: one panel per metric, x the files in order, a line per cell, a red ring
 * on each value the gate failed. Through a temporary file. Returns 0, or -1 after one line. */
static int write_plot(const char *path, struct hfile *files, int nf, const struct cell *cells,
		      int nc, double *vals, const struct sb_metric_info **mis, int nm)
{
	struct atomic_file af;
	const int W = 760, PH = 300, L = 70, R = 220, T = 30, B = 50;
	FILE *f = atomic_file_open(&af, path);
	if (!f) {
		sb_err("cannot create '%s': %s", path, strerror(errno));
		return -1;
	}
	fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\">\n<rect width=\"100%%\" height=\"100%%\" "
		"fill=\"white\"/>\n", W, nm * (PH + T + B));
	for (int m = 0; m < nm; m++) {
		int y0 = m * (PH + T + B) + T, pw = W - L - R;
		double max = 0;
		int ns = !strcmp(mis[m]->unit, "ns");
		for (int c = 0; c < nc; c++)
			for (int i = 0; i < nf; i++) {
				double v = vals[((size_t)m * nc + c) * nf + i];
				if (!isnan(v) && v > max)
					max = v;
			}
		if (max <= 0)
			max = 1;
		fprintf(f, "<text x=\"%d\" y=\"%d\" font-size=\"13\">%s%s per commit</text>\n", L,
			y0 - 10, mis[m]->name, ns ? " (us)" : "");
		fprintf(f, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"none\" "
			"stroke=\"#999\"/>\n", L, y0, pw, PH);
		for (int t = 0; t <= 4; t++) {
			double v = max * t / 4;
			int y = y0 + PH - (int)(PH * t / 4);
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%.4g</text>\n", L - 4,
				y + 4, ns ? v / 1e3 : v);
		}
		for (int i = 0; i < nf; i++) {
			int x = L + (nf > 1 ? pw * i / (nf - 1) : pw / 2);
			fprintf(f, "<text x=\"%d\" y=\"%d\" text-anchor=\"middle\">%s%s</text>\n", x,
				y0 + PH + 16, files[i].rev,
				files[i].gated ? (files[i].gate_ok ? " PASS" : " FAIL") : "");
		}
		for (int c = 0; c < nc; c++) {
			const char *col = palette[c % (int)ARRAY_SIZE(palette)];
			int pen = 0;
			fprintf(f, "<path fill=\"none\" stroke=\"%s\" stroke-width=\"2\" d=\"", col);
			for (int i = 0; i < nf; i++) {
				double v = vals[((size_t)m * nc + c) * nf + i];
				if (isnan(v)) {
					pen = 0;
					continue;
				}
				int x = L + (nf > 1 ? pw * i / (nf - 1) : pw / 2);
				int y = y0 + PH - (int)(PH * v / max);
				fprintf(f, "%c%d %d ", pen ? 'L' : 'M', x, y);
				pen = 1;
			}
			fputs("\"/>\n", f);
			for (int i = 0; i < nf; i++) {
				double v = vals[((size_t)m * nc + c) * nf + i];
				if (isnan(v))
					continue;
				int x = L + (nf > 1 ? pw * i / (nf - 1) : pw / 2);
				int y = y0 + PH - (int)(PH * v / max);
				int bad = gate_failed(&files[i], &cells[c], mis[m]->name);
				fprintf(f, "<circle cx=\"%d\" cy=\"%d\" r=\"%d\" fill=\"%s\" stroke=\"%s\" "
					"stroke-width=\"2\"/>\n", x, y, bad ? 6 : 3, bad ? "white" : col,
					bad ? "red" : col);
			}
			fprintf(f, "<text x=\"%d\" y=\"%d\" fill=\"%s\">%s %s %dt %gHz</text>\n",
				L + pw + 10, y0 + 12 + 14 * c, col, cells[c].sampler, cells[c].workload,
				cells[c].threads, cells[c].hz);
		}
	}
	fputs("</svg>\n", f);
	if (atomic_file_commit(&af) != 0) {
		sb_err("cannot write '%s': %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Reads each file of env.files into files[] (its runs, creation time, revision and gate
 * verdict). Returns 0, or -1 after one error line. */
static int read_files(struct hfile *files)
{
	char err[512];

	for (int i = 0; i < env.nfiles; i++) {
		struct hfile *h = &files[i];
		struct sb_host host;
		h->path = env.files[i];
		if (h5_read(h->path, &host, &h->runs, &h->n, 0, err, sizeof(err)) != 0) {
			sb_err("%s", err);
			return -1;
		}
		h5_read_attr(h->path, "created", h->created, sizeof(h->created), err, sizeof(err));
		snprintf(h->rev, sizeof(h->rev), "%.8s%s", host.git_rev,
			 strstr(host.git_rev, "-dirty") ? "+" : "");
		load_gate(h);
	}
	return 0;
}

/* The cells (sampler, workload, threads, hz) of the wanted samplers' runs in files, in
 * order of first appearance, into cells (at most HIST_MAX_CELLS). Returns how many. */
static int collect_cells(const struct hfile *files, struct cell *cells)
{
	int nc = 0;

	for (int i = 0; i < env.nfiles; i++)
		for (size_t j = 0; j < files[i].n; j++) {
			const struct sb_run *r = &files[i].runs[j];
			int found = 0;
			if (!sampler_wanted(r->sampler) || !strcmp(r->sampler, "none"))
				continue;
			for (int c = 0; c < nc && !found; c++)
				found = !strcmp(cells[c].sampler, r->sampler) &&
					!strcmp(cells[c].workload, r->workload) &&
					cells[c].threads == r->threads && cells[c].hz == r->hz;
			if (found || nc == HIST_MAX_CELLS)
				continue;
			snprintf(cells[nc].sampler, SB_NAME_LEN, "%s", r->sampler);
			snprintf(cells[nc].workload, SB_NAME_LEN, "%s", r->workload);
			cells[nc].threads = r->threads;
			cells[nc++].hz = r->hz;
		}
	return nc;
}

/* Prints one table per metric: a row per cell, a column per file (its revision, creation
 * and gate verdict on top, '!' by a value the file's gate failed), and keeps every value
 * in vals[(m * nc + c) * nfiles + i] for the plot. */
static void print_tables(struct hfile *files, const struct cell *cells, int nc,
			 const struct sb_metric_info **mis, int nm, double *vals)
{
	/* the cell column fits the longest cell name (a tool's may be 21 characters) */
	int cw = 34;
	for (int c = 0; c < nc; c++) {
		char name[160];
		int w = snprintf(name, sizeof(name), "%s/%s/%dt/%gHz", cells[c].sampler,
				 cells[c].workload, cells[c].threads, cells[c].hz);
		if (w + 1 > cw)
			cw = w + 1;
	}
	for (int m = 0; m < nm; m++) {
		printf("%s\n%-*s", mis[m]->name, cw, "cell");
		for (int i = 0; i < env.nfiles; i++)
			printf(" %12s", files[i].rev);
		printf("\n%-*s", cw, "created");
		for (int i = 0; i < env.nfiles; i++)
			printf(" %12.10s", files[i].created);
		printf("\n%-*s", cw, "gate");
		for (int i = 0; i < env.nfiles; i++)
			printf(" %12s", files[i].gated ? (files[i].gate_ok ? "PASS" : "FAIL") : "-");
		putchar('\n');
		for (int c = 0; c < nc; c++) {
			char name[160], v[32];
			snprintf(name, sizeof(name), "%s/%s/%dt/%gHz", cells[c].sampler,
				 cells[c].workload, cells[c].threads, cells[c].hz);
			printf("%-*s", cw, name);
			for (int i = 0; i < env.nfiles; i++) {
				double x = cell_value(&files[i], &cells[c], mis[m]);
				vals[((size_t)m * nc + c) * env.nfiles + i] = x;
				fmt_value(v, sizeof(v), x, mis[m]);
				printf(" %11s%c", v, gate_failed(&files[i], &cells[c], mis[m]->name) ? '!' : ' ');
			}
			putchar('\n');
		}
		if (m + 1 < nm)
			putchar('\n');
	}
}

int cmd_history(int argc, char **argv)
{
	const struct sb_metric_info *mis[HIST_MAX_METRICS];
	struct hfile *files = NULL;
	struct cell *cells = NULL;
	double *vals = NULL;
	int nc = 0, rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(history_usage, stdout);
		opt_help(stdout, cmd_history_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	int nm = parse_metrics(mis);
	if (nm < 0)
		return SB_EXIT_USAGE;
	files = calloc((size_t)env.nfiles, sizeof(*files));
	cells = calloc(HIST_MAX_CELLS, sizeof(*cells));
	if (!files || !cells) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	if (read_files(files) != 0)
		goto cleanup;
	qsort(files, (size_t)env.nfiles, sizeof(*files), by_created);
	nc = collect_cells(files, cells);
	if (nc == 0) {
		sb_err("no runs of %s in the files", env.sampler_list[0] ? env.sampler_list :
					 "any sampler");
		goto cleanup;
	}
	vals = malloc(sizeof(*vals) * (size_t)nm * (size_t)nc * (size_t)env.nfiles);
	if (!vals) {
		sb_err("out of memory");
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	print_tables(files, cells, nc, mis, nm, vals);
	rc = SB_EXIT_OK;
	if (env.plot) {
		if (write_plot(env.plot, files, env.nfiles, cells, nc, vals, mis, nm) != 0)
			rc = SB_EXIT_FAIL;
		else
			printf("plot: %s\n", env.plot);
	}
cleanup:
	for (int i = 0; files && i < env.nfiles; i++) {
		for (size_t j = 0; j < files[i].n; j++)
			run_free(&files[i].runs[j]);
		free(files[i].runs);
		free(files[i].gate);
	}
	free(files);
	free(cells);
	free(vals);
	return rc;
}
