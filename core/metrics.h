/* metrics.h - the list of numbers sampbench computes for every run, and the struct that
 * holds one run's values (embedded in struct sb_run). Computing them is analysis/metrics.c.
 *
 * SB_METRICS is the one list: struct fields, HDF5 columns, `show` and docs come from it.
 * Add a metric with one line here and its computation in analysis/metrics.c. NaN means
 * "the mechanism does not allow this metric" (see docs/metrics.md). */
#ifndef SB_CORE_METRICS_H
#define SB_CORE_METRICS_H

#include <stddef.h>

/* X(name, unit, description) */
#define SB_METRICS(X)                                                                      \
	X(nsamples, "count", "samples recorded")                                          \
	X(expected_samples, "count", "true CPU s x Hz (CPU view) or alive s x Hz (wall view)") \
	X(rate_accuracy, "ratio", "samples / expected_samples")                           \
	X(magnitude_error, "ratio", "|sum weights - sum true CPU| / max of the two")       \
	X(thread_tvd, "ratio", "1/2 sum |sample share - true CPU share| over threads")     \
	X(misattributed_fraction, "ratio", "samples whose leaf slot is another thread's") \
	X(wall_rate_accuracy, "ratio", "wall view: samples / (alive s x Hz)")              \
	X(wall_thread_tvd, "ratio", "wall view: thread_tvd of samples against alive time") \
	X(busy_rate_accuracy, "ratio", "rate_accuracy on the threads that did work (ops)") \
	X(stop_latency_p50_ns, "ns", "stop latency median")                               \
	X(stop_latency_p99_ns, "ns", "stop latency 99th percentile")                      \
	X(stop_latency_max_ns, "ns", "stop latency maximum")                              \
	X(suspend_window_p50_ns, "ns", "suspend window median")                           \
	X(suspend_window_p99_ns, "ns", "suspend window 99th percentile")                  \
	X(suspend_window_max_ns, "ns", "suspend window maximum")                          \
	X(interval_jitter_ns, "ns", "stddev of per-thread inter-sample intervals")        \
	X(interval_mean_ns, "ns", "mean per-thread inter-sample interval")                \
	X(truncated_fraction, "ratio", "samples flagged truncated")                       \
	X(stack_correct_fraction, "ratio", "walkable samples whose stack holds the expected chain") \
	X(stack_unwalkable_fraction, "ratio", "samples whose leaf is in code without frame pointers (not judged for the chain)") \
	X(function_tvd, "ratio", "1/2 sum |sample share - true share| over functions")   \
	X(function_misfit, "ratio", "function_tvd when a G-test rejects the declared shares (p < 0.001), else 0") \
	X(offcpu_sample_fraction, "ratio", "samples whose leaf is a sleep/block function") \
	X(offcpu_true_fraction, "ratio", "true off-CPU time / alive time (mixed)")         \
	X(kernel_sample_fraction, "ratio", "samples whose leaf frame is the kernel's; NaN when no sample has one") \
	X(kernel_true_fraction, "ratio", "workload threads' system time / their user + system time (getrusage)") \
	X(eintr_per_1k_samples, "ratio", "EINTRs the workload saw per 1000 samples")      \
	X(short_io_per_1k_samples, "ratio", "short reads/writes per 1000 samples")        \
	X(overhead, "ratio", "ops/s under the sampler / ops/s under `none`")              \
	X(sampler_cpu_fraction, "ratio", "sampler's own CPU time / run wall time")       \
	X(sampler_cpu_per_tick_ns, "ns", "sampler's own CPU time / ticks it ran")          \
	X(stop_latency_p99_floor_ratio, "ratio", "stop_latency_p99_ns / host floor p99 (calibration)") \
	X(suspend_window_p50_floor_ratio, "ratio", "suspend_window_p50_ns / host floor p50 (calibration)") \
	X(suspend_window_p99_floor_ratio, "ratio", "suspend_window_p99_ns / host floor p99 (calibration)") \
	X(sampler_cpu_per_tick_floor_ratio, "ratio", "sampler_cpu_per_tick_ns / host floor (calibration)") \
	X(checksum_errors, "count", "work units with a wrong result (corruption)")          \
	X(integrity_errno, "count", "checks where a thread's errno was not what its code left") \
	X(integrity_sigmask, "count", "threads (and main-thread snapshots) whose signal mask changed") \
	X(integrity_sigaction, "count", "signal dispositions changed in the run, left after stop or taken over") \
	X(integrity_signal, "count", "threads whose signal to themselves did not arrive")  \
	X(integrity_fd, "count", "descriptors opened by the run, open after stop, without close-on-exec") \
	X(integrity_violations, "count", "sum of the integrity_* counts")                   \
	X(stack_peak_bytes, "bytes", "deepest stack use of a workload thread (painted stack)") \
	X(pause_p50_ns, "ns", "observed pause median (progress clock)")                   \
	X(pause_p99_ns, "ns", "observed pause 99th percentile")                           \
	X(pause_p999_ns, "ns", "observed pause 99.9th percentile")                        \
	X(pause_max_ns, "ns", "longest observed pause")                                   \
	X(pause_fraction, "ratio", "sum of observed pauses / compute-phase time")         \
	X(pause_excess_p99_ns, "ns", "pause_p99_ns - that of `none` (same cell, same file)") \
	X(pause_excess_fraction, "ratio", "pause_fraction - that of `none` (same cell, same file)") \
	X(window_observed_p50_ns, "ns", "median observed pause covering a sample with a suspend window") \
	X(window_observed_p99_ns, "ns", "99th percentile of those observed pauses")       \
	X(window_observed_max_ns, "ns", "longest of those observed pauses")               \
	X(window_report_ratio, "ratio", "window_observed_p50_ns / median reported window, same samples") \
	X(window_unreported_p50_ns, "ns", "median of (observed - reported window) over the same samples") \
	X(sampler_cpu_measured_ns, "ns", "run child's CPU (wait4) - workload threads' truth - harness's own") \
	X(sampler_cpu_measured_fraction, "ratio", "sampler_cpu_measured_ns / run wall time (cores)") \
	X(sampler_cpu_unreported_fraction, "ratio", "(measured - claimed sampler_cpu_ns) / wall; NaN without a claim") \
	X(tool_cpu_per_sample_ns, "ns", "a tool's run: CPU of the processes its command started, less the target's, / samples") \
	X(rss_peak_bytes, "bytes", "peak private RSS of the run child above that at its start") \
	X(rss_peak_excess_bytes, "bytes", "rss_peak_bytes - that of `none` (same cell, same file)") \
	X(rss_growth_bytes_per_s, "bytes/s", "slope of private RSS over the work's last 3/4")

struct sb_metrics {
#define X(n, u, d) double n;
	SB_METRICS(X)
#undef X
};

struct sb_metric_info {
	const char *name, *unit, *description;
	size_t offset; /* offsetof(struct sb_metrics, name) */
};

extern const struct sb_metric_info sb_metric_infos[];
extern const size_t sb_metric_count;

/* Index of metric `name` in sb_metric_infos, or -1 when no metric has that name. */
int metrics_index(const char *name);

/* Sets every metric of m to NaN ("not computed"). */
void metrics_clear(struct sb_metrics *m);

#endif
