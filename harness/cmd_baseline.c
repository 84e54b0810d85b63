/* cmd_baseline.c - `sampbench baseline`: promotes a run file to the gate's baseline. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../results/h5io.h"
#include "cli.h"
#include "show.h"

static const char baseline_usage[] =
	"usage: sampbench baseline [--to FILE] [--force] CURRENT.h5\n"
	"\n"
	"Copies CURRENT.h5 to the baseline (default results/baseline.h5) after checking that it\n"
	"reads; the previous baseline is kept as results/baseline.prev.h5 (FILE with .prev\n"
	"before .h5). The baseline keeps the host facts of the machine it was made on: the\n"
	"gate warns when it is compared with a run from another one.\n"
	"\n"
	"  -t, --to FILE   baseline path (default: results/baseline.h5)\n"
	"  -f, --force     accept a file with failed runs\n"
	"  -h, --help      this help\n";

static struct env {
	const char *to;
	const char *current;
	int force;
} env;

static const struct env env_defaults = {
	.to = "results/baseline.h5",
};

static int parse_args(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "to", required_argument, NULL, 't' },
		{ "force", no_argument, NULL, 'f' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	env = env_defaults;
	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, ":t:fh", opts, NULL)) != -1) {
		switch (c) {
		case 't': env.to = optarg; break;
		case 'f': env.force = 1; break;
		case 'h': return 1;
		default: /* ':' missing value, '?' unknown option */
			sb_getopt_error(c, argv, "baseline");
			return -1;
		}
	}
	if (optind + 1 != argc) {
		sb_err(optind == argc ? "missing CURRENT.h5 (see 'sampbench baseline --help')"
				      : "unexpected argument (see 'sampbench baseline --help')");
		return -1;
	}
	env.current = argv[optind];
	return 0;
}

/* Copies src to dst through dst.tmp, so dst is never half written. */
static int copy_file(const char *src, const char *dst)
{
	char tmp[4096], buf[65536];
	FILE *in = fopen(src, "rb"), *out = NULL;
	size_t n;
	int rc = -1;

	snprintf(tmp, sizeof(tmp), "%s.tmp", dst);
	if (!in) {
		sb_err("cannot read '%s': %s", src, strerror(errno));
		return -1;
	}
	out = fopen(tmp, "wb");
	if (!out) {
		sb_err("cannot create '%s': %s", tmp, strerror(errno));
		goto cleanup;
	}
	while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
		if (fwrite(buf, 1, n, out) != n)
			break;
	if (ferror(in) || ferror(out)) {
		sb_err("cannot copy '%s' to '%s'", src, tmp);
		goto cleanup;
	}
	if (fclose(out) != 0) {
		out = NULL;
		sb_err("cannot write '%s': %s", tmp, strerror(errno));
		goto cleanup;
	}
	out = NULL;
	if (rename(tmp, dst) != 0) {
		sb_err("cannot rename '%s' to '%s': %s", tmp, dst, strerror(errno));
		goto cleanup;
	}
	rc = 0;
cleanup:
	if (out)
		fclose(out);
	if (rc != 0)
		unlink(tmp);
	fclose(in);
	return rc;
}

int cmd_baseline(int argc, char **argv)
{
	struct sb_host host;
	struct sb_run *runs = NULL;
	size_t n = 0;
	char err[512], prev[4096];
	int rc = SB_EXIT_USAGE;

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(baseline_usage, stdout);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	size_t len = strlen(env.to);
	if (len < 4 || strcmp(env.to + len - 3, ".h5")) {
		sb_err("baseline path '%s' must end in .h5", env.to);
		return SB_EXIT_USAGE;
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
		failed += runs[i].status == SB_RUN_FAILED;
	if (failed && !env.force) {
		sb_err("'%s' has %zu failed runs: fix them or use --force", env.current, failed);
		goto cleanup;
	}
	snprintf(prev, sizeof(prev), "%.*s.prev.h5", (int)(len - 3), env.to);
	if (access(env.to, F_OK) == 0 && rename(env.to, prev) != 0) {
		sb_err("cannot keep the previous baseline as '%s': %s", prev, strerror(errno));
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	if (copy_file(env.current, env.to) != 0) {
		rc = SB_EXIT_FAIL;
		goto cleanup;
	}
	printf("baseline %s <- %s (%zu runs, previous kept as %s)\n", env.to, env.current, n, prev);
	show_host(stdout, &host);
	rc = SB_EXIT_OK;
cleanup:
	for (size_t i = 0; i < n; i++)
		run_free(&runs[i]);
	free(runs);
	return rc;
}
