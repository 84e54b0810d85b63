/* sbrun.h - tests run the sampbench binary the way a user does: a command line in, exit
 * status and output out. */
#ifndef SB_TEST_SBRUN_H
#define SB_TEST_SBRUN_H

#include <stddef.h>
#include <sys/types.h>

/* A NULL-terminated argument list: ARGS("run", "-s", "none"). */
#define ARGS(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* Runs `bin args...` and waits for it. Its stdout goes into out and its stderr into err,
 * each NUL-terminated and cut to its length (NULL: discarded); err == out puts both into
 * out, interleaved as written. Output goes through unlinked temporary files, so a chatty
 * program never blocks on a full pipe. Returns the exit status, 128 + signal, or -1 when
 * the program could not be started. */
int sbrun(const char *bin, const char *const *args, char *out, size_t outlen, char *err,
	  size_t errlen);

/* Starts `bin args...` with stdout and stderr discarded. Returns its pid, or -1. */
pid_t sbrun_start(const char *bin, const char *const *args);

/* Waits for pid. Returns its exit status, 128 + signal, or -1. */
int sbrun_wait(pid_t pid);

/* A test group's fixture (cmocka group setup and teardown): sbrun_binary is the
 * sampbench binary under $BUILD (default build/), sbrun_dir a fresh scratch directory,
 * removed with what it holds at teardown. Return 0 or -1. */
extern char sbrun_binary[512];
extern char sbrun_dir[64];
int sbrun_group_setup(void **state);
int sbrun_group_teardown(void **state);

struct sb_run;
/* Runs `bin args...` (a command writing the results file h5) and reads h5's runs into
 * *runs and *n (free them with sbrun_free_runs). Returns 0, or -1 after one line on
 * stderr. */
int sbrun_runs(const char *bin, const char *const *args, const char *h5,
	       struct sb_run **runs, size_t *n);
void sbrun_free_runs(struct sb_run *runs, size_t n);

#endif
