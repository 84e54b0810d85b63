/* show_footprint.c - `show`'s footprint table: what each sampler cost the process
 * (docs/metrics.md "What the sampler costs the process"), one row per sampler. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analysis/metrics.h"
#include "harness/show.h"

/* The columns: metric (found by name: a file or build without it prints `-`), header,
 * scale, decimals, and whether the row shows the worst run instead of the median
 * (integrity counts: one violation is a verdict). */
static const struct fp_col {
	const char *metric, *header;
	double scale;
	int decimals, worst;
} fp_cols[] = {
	{ "sampler_cpu_measured_fraction", "cpu_measured_%", 100, 2, 0 },
	{ "sampler_cpu_fraction", "cpu_claimed_%", 100, 2, 0 },
	{ "sampler_cpu_unreported_fraction", "unreported_%", 100, 2, 0 },
	{ "rss_peak_excess_bytes", "rss_excess_KB", 1e-3, 0, 0 },
	{ "rss_growth_bytes_per_s", "rss_growth_KB/s", 1e-3, 1, 0 },
	{ "integrity_violations", "integrity_max", 1, 0, 1 },
	{ "stack_peak_bytes", "stack_peak_KB", 1e-3, 1, 0 },
};
#define FP_NCOLS (sizeof(fp_cols) / sizeof(fp_cols[0]))

/* Median (or maximum) of metric over the scored runs of sampler; NaN when none has it. */
static double fp_value(const struct sb_run *runs, size_t n, const char *sampler, int metric,
		       int worst, double *scratch)
{
	size_t k = 0;

	if (metric < 0)
		return NAN;
	for (size_t i = 0; i < n; i++) {
		double v;
		if (strcmp(runs[i].sampler, sampler) || !run_scored(runs[i].status))
			continue;
		memcpy(&v, (const char *)&runs[i].metrics + sb_metric_infos[metric].offset,
		       sizeof(v));
		scratch[k++] = v;
	}
	return quantile(scratch, k, worst ? 1.0 : 0.5);
}

/* Number of scored runs of sampler. */
static size_t fp_runs(const struct sb_run *runs, size_t n, const char *sampler)
{
	size_t k = 0;

	for (size_t i = 0; i < n; i++)
		k += !strcmp(runs[i].sampler, sampler) && run_scored(runs[i].status);
	return k;
}

void show_footprint(FILE *out, const struct sb_run *runs, size_t n)
{
	double *scratch = malloc((n + 1) * sizeof(*scratch));
	int w = 7;

	if (!scratch)
		return;
	for (size_t i = 0; i < n; i++)
		if ((int)strlen(runs[i].sampler) > w)
			w = (int)strlen(runs[i].sampler);
	fprintf(out, "\nfootprint (medians over each sampler's ok runs; integrity: the worst run):\n");
	fprintf(out, "%-*s %5s", w, "sampler", "runs");
	for (size_t c = 0; c < FP_NCOLS; c++)
		fprintf(out, " %15s", fp_cols[c].header);
	fputc('\n', out);
	for (size_t i = 0; i < n; i++) {
		const char *s = runs[i].sampler;
		int seen = 0;
		for (size_t j = 0; j < i && !seen; j++)
			seen = !strcmp(runs[j].sampler, s);
		if (seen)
			continue;
		fprintf(out, "%-*s %5zu", w, s, fp_runs(runs, n, s));
		for (size_t c = 0; c < FP_NCOLS; c++) {
			char buf[32] = "-";
			double v = fp_value(runs, n, s, metrics_index(fp_cols[c].metric),
					    fp_cols[c].worst, scratch);
			/* + 0.0: a value that rounds to zero prints 0, never -0 */
			if (!isnan(v))
				snprintf(buf, sizeof(buf), "%.*f", fp_cols[c].decimals,
					 round(v * fp_cols[c].scale * pow(10, fp_cols[c].decimals)) /
							 pow(10, fp_cols[c].decimals) + 0.0);
			fprintf(out, " %15s", buf);
		}
		fputc('\n', out);
	}
	free(scratch);
}
