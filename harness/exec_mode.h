/* exec_mode.h - how `sampbench exec` reaches the program for one sampler: a mode is a
 * small vtable (exec_agent.c: in-process samplers through the LD_PRELOAD agent;
 * exec_perf.c: perf from outside), driven by one run (exec_run.c). */
#ifndef SB_EXEC_MODE_H
#define SB_EXEC_MODE_H

#include <stddef.h>
#include <sys/types.h>

#include "core/run.h"
#include "harness/exec_ext.h"
#include "sampler/sampler.h"

#define EXEC_SAMPLE_CAP (1u << 21) /* sink: 2 Mi samples ... */
#define EXEC_FRAME_CAP (1u << 26)  /* ... and 64 Mi frames (agent: sparse memfd, only used pages) */

/* What every run of one exec shares: the program and how to sample it. */
struct exec_target {
	char **argv;       /* the program and its arguments (execvp) */
	const char *agent; /* absolute path of the agent .so (agent mode only) */
	double hz;
};

/* One run of the program under one sampler. */
struct exec_ctx {
	const struct exec_target *t;
	const struct sampler *s;
	const struct exec_mode *mode;
	pid_t pid;
	struct sb_sink *sink;
	void *shm;            /* agent: the memfd mapping */
	size_t shm_len;
	int memfd;
	struct exec_perf *perf;
	struct exec_truth *truth;
	char *maps;           /* the program's last memory map we could read */
	size_t maps_len;
	char err[SB_REASON_LEN];
	struct sb_run *r;
	int failed;           /* the sampler failed: r->reason says why */
	double process_cpu_ns; /* wait4's user + system time of the program (all its threads) */
	double children_cpu_ns; /* the part of it that is the children it waited for */
	int children_exact;   /* children_cpu_ns from the agent's getrusage at exit */
};

struct exec_mode {
	const char *name;
	/* Before fork: create the sink. Returns 0, or -1 with c->err. */
	int (*prepare)(struct exec_ctx *c);
	/* In the child, before execve: environment. Returns 0 or -1. */
	int (*child)(struct exec_ctx *c);
	/* In the parent, the child forked and waiting: attach. Returns 0, or -1 with c->err. */
	int (*attach)(struct exec_ctx *c);
	/* Every poll, and once after the program exited. */
	void (*poll)(struct exec_ctx *c);
	/* After the program exited: status, stats and maps into the run. */
	void (*finish)(struct exec_ctx *c);
	void (*cleanup)(struct exec_ctx *c);
};

extern const struct exec_mode exec_agent_mode;
extern const struct exec_mode exec_perf_mode;

/* The mode that samples another program with s, or NULL when none can (yet). */
const struct exec_mode *exec_mode_of(const struct sampler *s);

/* Marks the run failed with why (the first failure wins). */
void exec_fail(struct exec_ctx *c, const char *why);

/* The agent next to this binary (build/sampbench -> build/libsampbench-agent.so) into
 * buf. Returns 0, or -1 when there is none (or it does not fit). */
int exec_agent_find(char *buf, size_t len);

#endif
