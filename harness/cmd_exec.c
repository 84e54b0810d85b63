/* cmd_exec.c - `sampbench exec`: profile an unmodified program, once per sampler, and
 * print the runs side by side (docs/exec.md). This file is the command: options and
 * orchestration. One run is exec_run.c; how a sampler reaches the program is its mode
 * (exec_agent.c: in-process samplers through the LD_PRELOAD agent, which pushes samples
 * into a memfd sink this process created; exec_perf.c: perf from here); the tables are
 * exec_print.c.
 *
 * The program's stdin, stdout and stderr are its own: everything sampbench prints goes to
 * stderr. sampbench exits with the program's exit status (of the last run; 128+N when a
 * signal N killed it), so it can stand in for the program in scripts. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analysis/metrics.h"
#include "core/command_path.h"
#include "core/exec_shm.h"
#include "harness/cli.h"
#include "harness/exec_ext.h"
#include "harness/exec_mode.h"
#include "harness/exec_print.h"
#include "harness/exec_run.h"
#include "harness/expect_step.h"
#include "harness/host.h"
#include "results/h5io.h"
#include "sampler/plugin.h"

#define EXEC_MAX_HZ 20000.0

static const char exec_usage[] =
	"usage: sampbench exec --sampler S[,S...] [--hz F] [-o FILE.h5] [-f] -- CMD [ARGS...]\n"
	"\n"
	"Runs CMD once per sampler, unmodified: in-process samplers through the preloaded\n"
	"agent (build/libsampbench-agent.so), perf from outside. Truth is each thread's CPU\n"
	"time from /proc. Prints the runs side by side on stderr; CMD's own output is left\n"
	"alone. Exits with CMD's exit status. See docs/exec.md.\n"
	"\n";

static struct env {
	const char *samplers;
	double hz;
	const char *out;
	int force;
	const char *agent;
	int quiet;
	const char *expect;
	char **cmd;
} env;

static const struct env env_defaults = { .hz = 100 };

/* ---- command line ---- */

const struct opt cmd_exec_options[] = {
	OPT_STRING('s', "sampler", &env.samplers, "LIST",
		   "mach, itimer, ctimer, gperftools, gperftools-pt, perf or\n"
		   "./plugin.so, comma separated"),
	OPT_NUMBER('z', "hz", &env.hz, "F", 0, EXEC_MAX_HZ, NULL,
		   "sampling frequency, 0 < F <= 20000 (default 100)"),
	OPT_STRING('o', "output", &env.out, "FILE.h5", "also write the runs to FILE.h5"),
	OPT_BOOLEAN('f', "force", &env.force, "overwrite FILE.h5 if it exists"),
	OPT_STRING(0, "agent", &env.agent, "PATH", "the agent .so (default: next to this binary)"),
	OPT_BOOLEAN('q', "quiet", &env.quiet, "print nothing (exit status and FILE.h5 only)"),
	OPT_STRING('e', "expect", &env.expect, "FILE",
		   "judge the expectations of FILE on the runs (docs/expect.md); a failed\n"
		   "one turns the program's exit status 0 into 1"),
	OPT_HELP(),
	OPT_END(),
};

/* Parses argv into env. Returns 0, 1 for --help, or -1 after one line on stderr. */
static int parse_args(int argc, char **argv)
{
	env = env_defaults;
	/* stop at the first operand, so CMD's own options are never ours */
	int first = opt_parse("exec", cmd_exec_options, argc, argv, OPT_STOP_AT_OPERAND);
	if (first == OPT_PARSE_HELP)
		return 1;
	if (first < 0)
		return -1;
	if (!env.samplers) {
		sb_err("missing --sampler (see 'sampbench exec --help')");
		return -1;
	}
	if (first >= argc) {
		sb_err("missing the command to run after -- (see 'sampbench exec --help')");
		return -1;
	}
	env.cmd = argv + first;
	return env.expect ? expect_step_validate(env.expect) : 0;
}

/* Resolves the comma-separated env.samplers into samplers[0..*ns), and whether one of
 * them needs the agent. Returns SB_EXIT_OK, or the exit code after one error line. */
static int resolve_samplers(const struct sampler **samplers, int *ns, int *need_agent)
{
	char *list = strdup(env.samplers);
	int rc = SB_EXIT_USAGE;

	if (!list) {
		sb_err("out of memory");
		return SB_EXIT_FAIL;
	}
	for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
		if (*ns == EXEC_MAX_SAMPLERS) {
			sb_err("sampler list is longer than %d", EXEC_MAX_SAMPLERS);
			goto cleanup;
		}
		samplers[*ns] = sampler_resolve(tok);
		if (!samplers[*ns])
			goto cleanup;
		*need_agent |= exec_mode_of(samplers[*ns]) == &exec_agent_mode;
		(*ns)++;
	}
	if (*ns == 0) {
		sb_err("sampler list is empty");
		goto cleanup;
	}
	rc = SB_EXIT_OK;
cleanup:
	free(list);
	return rc;
}

/* Sets env.agent to the agent's absolute path (into real, PATH_MAX bytes): --agent, or
 * the one next to sampbench. Returns 0, or -1 after one error line. */
static int resolve_agent(char *real)
{
	char found[PATH_MAX];

	if (!env.agent && exec_agent_find(found, sizeof(found)) != 0) {
		sb_err("agent not found next to sampbench (build it with 'make', or pass "
		       "--agent PATH)");
		return -1;
	}
	/* ld.so wants an absolute path when the program changes directory */
	if (!realpath(env.agent ? env.agent : found, real)) {
		sb_err("agent '%s' not found", env.agent ? env.agent : found);
		return -1;
	}
	env.agent = real;
	return 0;
}

/* Runs the command under each sampler in turn into runs[], each appended to h5 (when not
 * NULL) as it ends, the program's Ctrl-C its own; stops after a run the user interrupted.
 * *last_status: the program's last wait status (-1 when it never ran); *rc turns
 * SB_EXIT_FAIL when a run could not be written. Returns how many runs it made. */
static int run_samplers(const struct sampler **samplers, int ns, const char *cmdline,
			struct sb_run *runs, struct sb_h5 *h5, int *last_status, int *rc)
{
	struct sigaction ign, old_int, old_quit;
	const struct exec_target target = { env.cmd, env.agent, env.hz };
	int done = 0;

	/* Ctrl-C is the program's to handle, as with time(1); we record how it ended. */
	memset(&ign, 0, sizeof(ign));
	ign.sa_handler = SIG_IGN;
	sigaction(SIGINT, &ign, &old_int);
	sigaction(SIGQUIT, &ign, &old_quit);
	for (int i = 0; i < ns; i++) {
		int st = exec_run(&target, samplers[i], i, cmdline, &runs[i]);
		done++;
		if (st >= 0)
			*last_status = st;
		if (h5 && h5_append_run(h5, &runs[i]) != 0) {
			sb_err("cannot write %s: %s", env.out, h5_strerror(h5));
			*rc = SB_EXIT_FAIL;
		}
		if (st >= 0 && WIFSIGNALED(st) && WTERMSIG(st) == SIGINT)
			break; /* the user interrupted the program: do not start it again */
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGQUIT, &old_quit, NULL);
	return done;
}

/* The exit code of exec: the program's status wins, except that a file we failed to write
 * (rc) turns its 0 into 1; a program that never ran is a failure. */
static int exec_exit_code(int last_status, int rc)
{
	if (last_status < 0)
		return SB_EXIT_FAIL;
	int prog = WIFEXITED(last_status) ? WEXITSTATUS(last_status) : 128 + WTERMSIG(last_status);
	return prog == 0 && rc != SB_EXIT_OK ? rc : prog;
}

int cmd_exec(int argc, char **argv)
{
	const struct sampler *samplers[EXEC_MAX_SAMPLERS];
	char agentreal[PATH_MAX], cmdline[SB_NAME_LEN];
	struct sb_run *runs = NULL;
	struct sb_h5 *h5 = NULL;
	struct sb_host host;
	int ns = 0, rc, last_status = -1, need_agent = 0;
	char tmp_out[] = "/tmp/sbexec.XXXXXX.h5";

	int p = parse_args(argc, argv);
	if (p > 0) {
		fputs(exec_usage, stdout);
		opt_help(stdout, cmd_exec_options);
		return SB_EXIT_OK;
	}
	if (p < 0)
		return SB_EXIT_USAGE;
	rc = resolve_samplers(samplers, &ns, &need_agent);
	if (rc != SB_EXIT_OK)
		return rc;
	rc = SB_EXIT_USAGE;
	if (!command_runnable(env.cmd[0])) {
		sb_err("command not found: '%s'", env.cmd[0]);
		return rc;
	}
	if (need_agent && resolve_agent(agentreal) != 0)
		return rc;
	host_probe_calibrated(&host);
	if (env.expect && !env.out) { /* the expectations read the runs from a file */
		int fd = mkstemps(tmp_out, 3);
		if (fd < 0) {
			sb_err("cannot create '%s': %s", tmp_out, strerror(errno));
			return rc;
		}
		close(fd);
		env.out = tmp_out;
		env.force = 1;
	}
	if (env.out) {
		char err[256];
		h5 = h5_create(env.out, &host, env.force, err, sizeof(err));
		if (!h5) {
			sb_err("%s", err);
			if (env.out == tmp_out)
				unlink(tmp_out);
			return rc;
		}
	}
	/* workload = the command line, cut to fit */
	size_t off = 0;
	cmdline[0] = 0;
	for (char **a = env.cmd; *a && off + 1 < sizeof(cmdline); a++)
		off += (size_t)snprintf(cmdline + off, sizeof(cmdline) - off, "%s%s",
					a == env.cmd ? "" : " ", *a);
	runs = calloc((size_t)ns, sizeof(*runs));
	if (!runs) {
		sb_err("out of memory");
		if (h5)
			h5_abort(h5);
		if (env.out == tmp_out)
			unlink(tmp_out);
		return SB_EXIT_FAIL;
	}
	rc = SB_EXIT_OK;
	int done = run_samplers(samplers, ns, cmdline, runs, h5, &last_status, &rc);
	if (!env.quiet) {
		fprintf(stderr, "\nsampbench exec: %s, %g Hz\n", cmdline, env.hz);
		exec_print_runs(stderr, runs, (size_t)done);
		exec_print_top(stderr, runs, (size_t)done);
		exec_print_threads(stderr, runs, (size_t)done);
		if (env.out && env.out != tmp_out)
			fprintf(stderr, "\nwritten: %s\n", env.out);
	}
	if (h5) {
		h5_set_complete(h5, done == ns);
		if (h5_close(h5) != 0)
			rc = SB_EXIT_FAIL;
	}
	rc = exec_exit_code(last_status, rc);
	/* the expectations judge a program that succeeded: its own failure comes first */
	if (env.expect && rc == SB_EXIT_OK)
		rc = expect_step_run(env.expect, env.out);
	for (int i = 0; i < done; i++)
		run_free(&runs[i]);
	if (env.out == tmp_out)
		unlink(tmp_out);
	free(runs);
	return rc;
}
