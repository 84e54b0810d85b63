/* cmd_baseline.c - `sampbench baseline`: promotes a run file to the gate's baseline of its
 * machine class, results/baselines/<fingerprint>.h5. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/atomic_file.h"
#include "harness/baselines.h"
#include "harness/cli.h"
#include "harness/host.h"
#include "harness/show.h"
#include "results/h5io.h"

static const char baseline_usage[] =
	"usage: sampbench baseline [--to FILE] [--force] CURRENT.h5\n"
	"       sampbench baseline --path\n"
	"\n"
	"Copies CURRENT.h5 to the baseline of the machine class it was recorded on,\n"
	"results/baselines/<fingerprint>.h5, after checking that it reads; the previous one is\n"
	"kept with .prev before .h5. Timing metrics are compared only with a baseline of the\n"
	"same fingerprint (docs/bench.md). A file without a fingerprint (recorded before they\n"
	"existed) is refused: name its baseline with --to.\n"
	"\n";

static struct env {
	const char *to;
	const char *current;
	int force;
	int path_only;
} env;

static const struct env env_defaults = { 0 };

const struct opt cmd_baseline_options[] = {
	OPT_STRING('t', "to", &env.to, "FILE", "baseline path (default: by the file's fingerprint)"),
	OPT_BOOLEAN('f', "force", &env.force, "accept a file with failed runs"),
	OPT_BOOLEAN(0, "path", &env.path_only,
		    "print this machine's baseline path (it may not exist) and exit"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	int first = opt_parse("baseline", cmd_baseline_options, argc, argv, 0);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	int n = env.path_only ? 0 : 1; /* --path takes no file */
	if (opt_operands("baseline", argv, first, argc, n, n, "CURRENT.h5") != 0)
		return -1;
	if (env.path_only)
		return 0;
	env.current = argv[first];
	return 0;
}

/* Copies src to dst through a temporary file beside it, so dst is never half written. */
static int copy_file(const char *src, const char *dst)
{
	char buf[65536];
	struct atomic_file af;
	FILE *in = fopen(src, "rb"), *out;
	size_t n;
	int rc = -1;

	if (!in) {
		sb_err("cannot read '%s': %s", src, strerror(errno));
		return -1;
	}
	out = atomic_file_open(&af, dst);
	if (!out) {
		sb_err("cannot create '%s': %s", dst, strerror(errno));
		goto cleanup;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out)) {
		sb_err("cannot copy '%s' to '%s'", src, af.tmp);
		goto cleanup;
	}
	switch (atomic_file_commit(&af)) {
	case 0:
		rc = 0;
		break;
	case ATOMIC_FILE_RENAME_FAILED:
		sb_err("cannot rename a temporary file to '%s': %s", dst, strerror(errno));
		break;
	default:
		sb_err("cannot write '%s': %s", dst, strerror(errno));
		break;
	}
cleanup:
	atomic_file_abort(&af); /* a no-op after the commit */
	fclose(in);
	return rc;
}

/* The baseline path of the machine class that recorded file_host, into buf. A file
 * without a fingerprint cannot say which class that was: refused. Returns 0, or -1 after
 * one line on stderr. */
static int default_target(const char *file, const struct sb_host *file_host, char *buf,
			  size_t len)
{
	if (!file_host->fingerprint[0]) {
		sb_err("'%s' records no host fingerprint: name its baseline with --to "
		       "('sampbench baseline --path' prints this machine's)", file);
		return -1;
	}
	if (baseline_path(file_host, buf, len) != 0) {
		sb_err("baseline path of '%s' is too long", file);
		return -1;
	}
	return 0;
}

static int mkdir_baselines(void)
{
	if ((mkdir("results", 0777) != 0 && errno != EEXIST) ||
	    (mkdir(SB_BASELINES_DIR, 0777) != 0 && errno != EEXIST)) {
		sb_err("cannot create %s: %s", SB_BASELINES_DIR, strerror(errno));
		return -1;
	}
	return 0;
}

int cmd_baseline(int argc, char **argv)
{
	char target[4096];
	struct sb_host host;
	struct sb_run *runs = NULL;
	size_t n = 0;
	char err[512], prev[4096];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(baseline_usage, stdout);
		opt_help(stdout, cmd_baseline_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	if (env.path_only) {
		host_probe(&host);
		if (baseline_path(&host, target, sizeof(target)) != 0) {
			sb_err("baseline path of this machine is too long");
			return SB_EXIT_FAIL;
		}
		printf("%s\n", target);
		return SB_EXIT_OK;
	}
	if (env.to) {
		size_t len = strlen(env.to);
		if (len < 4 || strcmp(env.to + len - 3, ".h5")) {
			sb_err("baseline path '%s' must end in .h5", env.to);
			return SB_EXIT_USAGE;
		}
	}
	if (h5_read(env.current, &host, &runs, &n, 0, err, sizeof(err)) != 0) {
		sb_err("%s", err);
		return SB_EXIT_USAGE;
	}
	if (n == 0) {
		sb_err("'%s' has no runs", env.current);
		goto cleanup;
	}
	size_t failed = 0;
	for (size_t i = 0; i < n; i++)
		failed += runs[i].status == SB_RUN_FAILED || runs[i].status == SB_RUN_INCOMPLETE;
	if (failed && !env.force) {
		sb_err("'%s' has %zu failed runs: fix them or use --force", env.current, failed);
		goto cleanup;
	}
	if (env.to) {
		snprintf(target, sizeof(target), "%s", env.to);
	} else if (default_target(env.current, &host, target, sizeof(target)) != 0 ||
		   mkdir_baselines() != 0) {
		goto cleanup;
	}
	snprintf(prev, sizeof(prev), "%.*s.prev.h5", (int)(strlen(target) - 3), target);
	if (access(target, F_OK) == 0 && rename(target, prev) != 0) {
		sb_err("cannot keep the previous baseline as '%s': %s", prev, strerror(errno));
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	if (copy_file(env.current, target) != 0) {
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	printf("baseline %s <- %s (%zu runs, previous kept as %s)\n", target, env.current, n, prev);
	show_host(stdout, &host);
	rc = SB_EXIT_OK;
cleanup:
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
	return rc;
}
