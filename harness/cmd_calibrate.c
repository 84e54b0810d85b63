/* cmd_calibrate.c - `sampbench calibrate`: this host's floors, printed. */
#include <stdio.h>

#include "harness/cli.h"
#include "harness/host.h"
#include "harness/show.h"
#include "sampler/thread_ctl.h"

static const char calibrate_usage[] =
	"usage: sampbench calibrate\n"
	"\n"
	"Measures this host's floor for every mechanism sampbench times (system call,\n"
	"thread CPU clock, futex wake round trips, signal delivery, the mach\n"
	"rendezvous, ptrace interrupt) and prints p50/p99/max in µs with the machine\n"
	"fingerprint. Every run, bench and exec stores the same table in its file.\n"
	"\n";

const struct opt cmd_calibrate_options[] = {
	OPT_HELP(),
	OPT_END(),
};

/* Measures and prints the floors every run/bench/exec records (calibrate.h), so a
 * profiler author can see what a suspend window can cost on this machine before
 * running anything. */
int cmd_calibrate(int argc, char **argv)
{
	struct sb_host host;

	int first = opt_parse("calibrate", cmd_calibrate_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP) {
		fputs(calibrate_usage, stdout);
		opt_help(stdout, cmd_calibrate_options);
		return SB_EXIT_OK;
	}
	if (first < 0)
		return SB_EXIT_USAGE;
	if (opt_operands("calibrate", argv, first, argc, 0, 0, "") != 0)
		return SB_EXIT_USAGE;
	host_probe_calibrated(&host);
	show_host(stdout, &host);
	show_calibration(stdout, &host);
	printf("rendezvous spin budget: %.1f µs (from this calibration: %.1f µs; SB_MACH_SPIN_NS overrides it)\n",
	       (double)tc_spin_ns() / 1e3, host_fact(&host, "spin_budget_ns") / 1e3);
	return SB_EXIT_OK;
}
