/* cmd_bench.c - `sampbench bench`: the default matrix. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "session.h"

static const char bench_usage[] =
	"usage: sampbench bench -o FILE.h5 [--force]\n"
	"\n"
	"Runs the default matrix (itimer, ctimer x balanced, skewed x 2, 8 threads x 100 Hz x\n"
	"3 repetitions, 2 s each), writes FILE.h5 and prints the table.\n";

int cmd_bench(int argc, char **argv)
{
	static const char *const samplers[] = { "itimer", "ctimer" };
	static const char *const workloads[] = { "balanced", "skewed" };
	static const int threads[] = { 2, 8 };
	const char *out = NULL;
	int force = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(bench_usage, stdout);
			return SB_EXIT_OK;
		} else if ((!strcmp(argv[i], "-o") || !strcmp(argv[i], "--output")) && i + 1 < argc) {
			out = argv[++i];
		} else if (!strcmp(argv[i], "-f") || !strcmp(argv[i], "--force")) {
			force = 1;
		} else {
			sb_err("unknown option '%s' (see 'sampbench bench --help')", argv[i]);
			return SB_EXIT_USAGE;
		}
	}
	if (!out) {
		sb_err("missing -o FILE.h5 (see 'sampbench bench --help')");
		return SB_EXIT_USAGE;
	}
	enum { NS = 2, NW = 2, NT = 2, REPS = 3 };
	struct run_spec specs[NS * NW * NT * REPS];
	size_t n = 0;
	for (int t = 0; t < NT; t++)
		for (int w = 0; w < NW; w++)
			for (int rep = 0; rep < REPS; rep++)
				for (int s = 0; s < NS; s++)
					specs[n++] = (struct run_spec){
						.sampler = sampler_find(samplers[s]),
						.workload = workload_find(workloads[w]),
						.threads = threads[t],
						.hz = 100,
						.duration_s = 2,
						.repetition = rep,
						.seed = (uint64_t)rep + 1,
						.rt_priority = true,
					};
	struct session_opts so = { .out_path = out, .force = force, .progress = 1 };
	return session_run(&so, specs, n, NULL, NULL);
}
