/* cli.h - subcommand plumbing shared by the cmd_*.c files. */
#ifndef SB_CLI_H
#define SB_CLI_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

#include "harness/opt.h"

/* Exit codes: 0 ok, 1 failure (a failed gate, a failed run), 2 bad input / usage. */
enum { SB_EXIT_OK = 0, SB_EXIT_FAIL = 1, SB_EXIT_USAGE = 2 };

/* Prints "sampbench: <message>\n" to stderr. Lowercase, problem first, no trailing period. */
void sb_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Parses a whole decimal/float argument. Returns 0, or -1 (and prints an error naming opt). */
int sb_parse_double(const char *opt, const char *s, double *out);
int sb_parse_int(const char *opt, const char *s, long min, long max, long *out);

/* Reports what getopt_long (optstring starting with ':', opterr = 0) returned for a bad
 * option: c == ':' is a missing value, anything else an unknown option. cmd names the
 * subcommand for the --help hint. */
void sb_getopt_error(int c, char **argv, const char *cmd);

/* One subcommand: argv[0] is the subcommand name. Returns the process exit code. */
struct sb_cmd {
	const char *name;
	int (*fn)(int argc, char **argv);
	const char *summary;
};

int cmd_list(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_show(int argc, char **argv);
int cmd_top(int argc, char **argv);
int cmd_bench(int argc, char **argv);
int cmd_gate(int argc, char **argv);
int cmd_baseline(int argc, char **argv);
int cmd_export(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_target(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_exec(int argc, char **argv);
int cmd_merge(int argc, char **argv);
int cmd_history(int argc, char **argv);
int cmd_expect(int argc, char **argv);
int cmd_margins(int argc, char **argv);

/* Each command's option table (opt.h): its --help lines come from it. */
extern const struct opt cmd_list_options[];
extern const struct opt cmd_run_options[];
extern const struct opt cmd_show_options[];
extern const struct opt cmd_top_options[];
extern const struct opt cmd_expect_options[];
extern const struct opt cmd_bench_options[];
extern const struct opt cmd_gate_options[];
extern const struct opt cmd_baseline_options[];
extern const struct opt cmd_export_options[];
extern const struct opt cmd_import_options[];
extern const struct opt cmd_target_options[];
extern const struct opt cmd_report_options[];
extern const struct opt cmd_calibrate_options[];
extern const struct opt cmd_exec_options[];
extern const struct opt cmd_merge_options[];
extern const struct opt cmd_history_options[];

#endif
