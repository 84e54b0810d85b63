/* exec_shm.h - the shared memory between `sampbench exec` and the LD_PRELOAD agent.
 *
 * `sampbench exec` creates a memfd of this layout, fills the header, and passes the fd
 * to the program as SAMPBENCH_OUT=fd:N (docs/exec.md). The agent maps it MAP_SHARED in
 * its constructor and closes the fd, so the program never sees it. Samples are pushed
 * straight into the sink: whatever the program does (crash, _exit, SIGKILL) the parent
 * keeps every sample taken; only what the agent writes at exit (stats, maps) can be lost.
 *
 *   [struct sb_exec_shm][struct sb_sink][samples: sample_cap][frames: frame_cap]
 *
 * The sink header holds pointers, which are only valid in the process that set them: the
 * agent points them into its own mapping, the parent recomputes them from its own. */
#ifndef SB_EXEC_SHM_H
#define SB_EXEC_SHM_H

#include <stdatomic.h>
#include <stdint.h>

#include "core/sample.h"

#define SB_EXEC_MAGIC 0x3130434558454253ull /* "SBEXEC01" */
#define SB_EXEC_VERSION 1
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
