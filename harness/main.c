/* main.c - sampbench: the command table. */
#include <stdio.h>
#include <string.h>

#include "core/util.h"
#include "harness/cli.h"
#include "version.h"

static const struct sb_cmd commands[] = {
	{ "list", cmd_list, "list samplers and workloads" },
	{ "run", cmd_run, "run samplers on a workload and write an HDF5 file" },
	{ "bench", cmd_bench, "run the benchmark matrix" },
	{ "gate", cmd_gate, "check a run file against a baseline and budgets" },
	{ "baseline", cmd_baseline, "make a run file the gate's baseline" },
	{ "merge", cmd_merge, "join bench shards or repeated benches into one file" },
	{ "history", cmd_history, "metrics per cell over the commits of several bench files" },
	{ "show", cmd_show, "print the runs of an HDF5 file" },
	{ "export", cmd_export, "write a run's stacks in another profiler's format" },
	{ "import", cmd_import, "read another profiler's profile, print its folded stacks" },
	{ "report", cmd_report, "HTML accuracy report of HDF5 files (plots, findings)" },
	{ "top", cmd_top, "flat profile of the leaf frames of a run" },
	{ "expect", cmd_expect, "judge an expectation file (shares, rates) on the runs of a file" },
	{ "margins", cmd_margins, "margins for an expectation file from a file's repetitions" },
	{ "calibrate", cmd_calibrate, "measure and print this host's timing floors" },
	{ "target", cmd_target, "run one workload alone for any profiler; write its truth at exit" },
	{ "exec", cmd_exec, "profile any program with samplers side by side (LD_PRELOAD agent, perf)" },
};

static void usage(FILE *out)
{
	fprintf(out, "usage: sampbench <command> [options]\n\ncommands:\n");
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		fprintf(out, "  %-9s %s\n", commands[i].name, commands[i].summary);
	fprintf(out, "\n'sampbench <command> --help' for a command's options\n");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return SB_EXIT_USAGE;
	}
	if (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") || !strcmp(argv[1], "help")) {
		usage(stdout);
		return SB_EXIT_OK;
	}
	if (!strcmp(argv[1], "--version")) {
		printf("sampbench %s (%s)\n", SB_VERSION, SB_GIT_REV);
		return SB_EXIT_OK;
	}
	for (size_t i = 0; i < ARRAY_SIZE(commands); i++)
		if (!strcmp(argv[1], commands[i].name))
			return commands[i].fn(argc - 1, argv + 1);
	sb_err("unknown command '%s' (see 'sampbench --help')", argv[1]);
	return SB_EXIT_USAGE;
}
