/* exec_shm.h - the shared memory between `sampbench exec` and the LD_PRELOAD agent.
 *
 * `sampbench exec` creates a memfd of this layout, fills the header, and passes the fd
 * to the program as SAMPBENCH_OUT=fd:N (docs/exec.md). The agent maps it MAP_SHARED in
 * its constructor and closes the fd, so the program never sees it. Samples are pushed
 * straight into the sink: whatever the program does (crash, _exit, SIGKILL) the parent
 * keeps every sample taken; only what the agent writes at exit (stats, maps) can be lost.
 *
 *   [struct sb_exec_shm][struct sb_sink][samples: sample_cap][frames: frame_cap]
 *   [thread rows, from threads_offset: grown by the agent, see below]
 *
 * Thread rows: every thread the agent follows (the main thread is row 0, each thread
 * made with pthread_create one more) writes its own CPU time (CLOCK_THREAD_CPUTIME_ID)
 * and CLOCK_MONOTONIC when its start routine begins and when it ends, and its name then. A row index is
 * claimed with one atomic add on threads_claimed; the rows live past total_size, in
 * chunks of SB_EXEC_ROWS_BASE << k rows laid end to end (row i at threads_offset +
 * i * sizeof(struct sb_exec_thread) whatever its chunk), which the agent adds with
 * ftruncate when a claimed index is past the file's end. There is no limit but the
 * memfd's size: the parent reads the rows claimed (those the file holds) with pread
 * after the program is gone.
 *
 * The sink header holds pointers, which are only valid in the process that set them: the
 * agent points them into its own mapping, the parent recomputes them from its own. */
#ifndef SB_EXEC_SHM_H
#define SB_EXEC_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/run.h"
#include "core/sample.h"

#define SB_EXEC_MAGIC 0x3130434558454253ull /* "SBEXEC01" */
#define SB_EXEC_VERSION 3
#define SB_EXEC_MAX_HELPERS 16   /* sampler threads the agent started in the target */
#define SB_EXEC_MAX_STATS 32
#define SB_EXEC_MAPS_MAX (512u << 10) /* /proc/self/maps copied at exit */
#define SB_EXEC_REASON_LEN 192

enum sb_exec_state {
	SB_EXEC_INIT = 0,     /* created by the parent, agent not seen yet */
	SB_EXEC_STARTED = 1,  /* sampler started */
	SB_EXEC_STOPPED = 2,  /* sampler stopped, stats and maps written */
	SB_EXEC_FAILED = -1,  /* the agent could not start the sampler: see reason */
};

enum sb_exec_row_state {
	SB_EXEC_ROW_CLAIMED = 0, /* index taken, nothing written (or the chunk could not grow) */
	SB_EXEC_ROW_STARTED = 1, /* start_* written: the thread runs the program's code */
	SB_EXEC_ROW_ENDED = 2,   /* end_* written: the start routine returned, pthread_exit
				  * or cancellation */
};

#define SB_EXEC_ROWS_BASE 1024u       /* rows of chunk 0; chunk k holds BASE << k */
#define SB_EXEC_ROW_SIGBLOCKED 1u     /* flags: the sampler's signal was blocked at its end */

/* One thread's own clocks and name (128 bytes). Times in ns; 0 = not read. */
struct sb_exec_thread {
	_Atomic uint32_t state;      /* enum sb_exec_row_state, written last (release) */
	int32_t tid;
	uint64_t start_cpu_ns, start_ns; /* CLOCK_THREAD_CPUTIME_ID, CLOCK_MONOTONIC */
	uint64_t end_cpu_ns, end_ns;
	uint64_t exit_cpu_ns;        /* read by exit() from another thread: still running then */
	uint32_t flags;              /* SB_EXEC_ROW_* */
	uint32_t pad;
	/* the thread's name (PR_GET_NAME) at its end, or at exit() (/proc) for a thread still
	 * running then; "" when not read */
	char name[SB_THREAD_NAME_LEN];
	uint8_t pad2[128 - 56 - SB_THREAD_NAME_LEN];
};
_Static_assert(sizeof(struct sb_exec_thread) == 128, "one row, two cache lines");

struct sb_exec_stat {
	char name[48];
	double value;
};

struct sb_exec_shm {
	uint64_t magic;
	uint32_t version;
	uint32_t header_size;        /* sizeof(struct sb_exec_shm) */
	uint64_t total_size;
	uint64_t sink_offset, samples_offset, frames_offset;
	uint64_t sample_cap, frame_cap;
	int32_t target_pid;          /* the agent samples only in this process */
	_Atomic int32_t state;       /* enum sb_exec_state */
	char reason[SB_EXEC_REASON_LEN];
	_Atomic int32_t nhelpers;    /* tids of the sampler's own threads, not the program's */
	int32_t helper_tids[SB_EXEC_MAX_HELPERS];
	uint64_t start_ns, stop_ns;  /* CLOCK_MONOTONIC */
	int32_t signal_conflict;     /* the program took the sampler's signal */
	int32_t nstats;
	struct sb_exec_stat stats[SB_EXEC_MAX_STATS];
	uint64_t threads_offset;     /* page aligned, >= total_size: row 0 */
	_Atomic uint64_t threads_claimed; /* rows handed out (the parent sets 1: main's) */
	_Atomic uint64_t threads_lost; /* threads without a row (the memfd could not grow) */
	/* getrusage(RUSAGE_CHILDREN) at exit(): the CPU of the children the program waited
	 * for, which wait4's total includes and the thread rows do not */
	uint64_t children_cpu_ns;
	_Atomic int32_t children_valid;
	_Atomic int32_t sigblocked_threads; /* rows with SB_EXEC_ROW_SIGBLOCKED */
	/* threads whose signal mask at the end of their start routine differed from the one
	 * they were created with, where the program itself never set it (integrity_sigmask) */
	_Atomic int32_t mask_changed_threads;
	int32_t sampler_signo;       /* the signal the sampler needs, 0: none */
	_Atomic uint32_t maps_len;   /* bytes of maps, written last */
	char maps[SB_EXEC_MAPS_MAX];
};

/* The sink inside a mapping of this layout at base, with its pointers set for this
 * process. */
static inline struct sb_sink *sb_exec_sink(void *base)
{
	struct sb_exec_shm *h = base;
	struct sb_sink *s = (struct sb_sink *)((char *)base + h->sink_offset);
	s->samples = (struct sb_sample *)((char *)base + h->samples_offset);
	s->frames = (uint64_t *)((char *)base + h->frames_offset);
	return s;
}

#endif
