/* mach.c - the `mach` sampler: a sampler thread that stops every registered thread each
 * tick, reads its registers, walks its frame pointers and lets it go (samply, spprof's
 * Darwin sampler). Wall clock: every registered thread is sampled every tick, running or
 * not; weight_ns says how much CPU the thread used since its previous sample.
 *
 * Portable: "mach" names the mechanism (Mach thread suspend), not the system. The same
 * code runs on Darwin over thread_ctl_darwin.c (thread_suspend) and on Linux over
 * thread_ctl_linux.c, which emulates the suspend with a signal rendezvous. Darwin-only
 * files end in _darwin.c, whatever their name says (mach_task_darwin.c: `mach-task`).
 *
 * One tick, in two passes. Pass 1, nothing stopped yet: snapshot the registry, read each
 * thread's CPU clock, and take the threads that need no stop: idle skip (did not run:
 * its previous stack again) and peeks (blocked in a system call: its stack read from
 * outside, Linux). Pass 2: publish the tick's release policy and request a stop of every
 * remaining target at once; then, as each one parks, read its state and walk it; early
 * policy: resume it at once; batch policy: resume all together with one wake-up.
 * Requesting all first matters with more busy threads than cores: a target must run to
 * park (Linux) and each one that parks frees a CPU for the next, instead of the sampler
 * waiting for the scheduler once per target. Between ticks the entries of the threads
 * that exited are freed for reuse: those the change log named, not a scan of them all.
 *
 * A target that has not parked when the sampler stops waiting (its deadline, or a batch
 * that stalled) is not on a CPU: with more busy threads than cores most of them wait
 * tens of milliseconds for one. Its request is deferred (tc_defer), not given up: when
 * it next runs, its handler takes the sample itself before any of its own code runs,
 * stamped with the tick, and the sampler collects it at a later tick. Each tick that
 * passes before the thread runs again gets that same stack (it cannot have changed), so
 * no tick is lost to the scheduler. Darwin never defers: a suspend does not wait. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "core/pausehist.h"
#include "core/util.h"
#include "sampler/registry.h"
#include "sampler/sampler.h"
#include "sampler/thread_ctl.h"
#include "sampler/threads.h"

#define MACH_RT_PRIORITY 10 /* SCHED_FIFO priority tried for the sampler thread */
#define MACH_BATCH_STALL_NS 200000ull /* release the parked batch after 200 us without a park */
/* A tick with more busy targets than CPUs waits for parks at most this long after its
 * requests: then those still on their way are deferred (they take their own sample when
 * they run), and in a batch tick the parked threads are released. Without it a cascade through many threads that sleep and wake kept the first
 * ones parked until the last parked: `syscall` and `mixed` at 32 threads, window p99
 * 256-586 us against 170-219 us with it
 * (docs/validation.md, "How long the batch is held open"). */
#define MACH_BATCH_OPEN_NS 100000ull
/* When parked threads are resumed. Early: right after each one's walk, so each is stopped
 * only for its own stop and walk; a target that has not parked 2 ms after its request is
 * deferred. Batch: once every target of the tick parked or the batch closed, so that a
 * resumed thread does not take a CPU that a target still has to run on to park. Auto (the
 * default): early, and when the threads that ran since their previous sample outnumber
 * the CPUs, the targets not parked MACH_BATCH_OPEN_NS after the requests are deferred.
 * Batch ticks kept the resumed threads' wake-ups together, and the scheduler then starved
 * some threads for tens of milliseconds (8 busy threads on 2 CPUs: longest gap 29-54 ms
 * against 20-24 ms without a sampler, CPU shares 1.10-1.20 apart against 1.03); auto
 * leaves both as without a sampler, with window p99 65-69 us against 143-148 us
 * (docs/mach.md, "Stopping many threads"). Tick: the former default, early when the busy
 * threads fit the CPUs and batch when not (SB_MACH_RELEASE=tick, for A/B). */
enum { MACH_RELEASE_AUTO, MACH_RELEASE_EARLY, MACH_RELEASE_BATCH, MACH_RELEASE_TICK };
#define MACH_SLEEP_SLICE_NS 50000000ull /* stop() waits at most this for a sleeping sampler */
/* Peeks (Linux) are tried only on a thread that its previous sample found in a system
 * call (blocked in it, or stopped at its syscall instruction): a thread that shares the
 * CPUs with other busy threads uses little CPU but is runnable, and a peek at it would
 * only read "running" (a pread each, measured at a sixth of the sampler's CPU with 8
 * busy threads). A thread peeked while running (or that ran while we read its stack) is
 * peeked again up to MACH_PEEK_TRIES - 1 times, MACH_PEEK_GAP_NS apart, before it is
 * signalled: on a thread that alternates short bursts with sleeps (the syscall workload)
 * the signal would land in its next sleep and make it fail with EINTR. The sampler sleeps
 * between tries so that a burst sharing its CPU can finish. */
#define MACH_PEEK_TRIES 3
#define MACH_PEEK_GAP_NS 15000ull
/* A thread whose CPU clock moved by more than this since its previous sample competes for
 * a CPU (release policy). Serving our previous rendezvous costs a blocked thread a few
 * microseconds (TC_IDLE_SLACK_NS at most): that alone does not make it busy. */
#define MACH_BUSY_CPU_NS (2 * TC_IDLE_SLACK_NS)
/* A deferred sample stands only if the thread ran no code of its own between the tick and
 * its handler: its CPU clock at the handler may exceed the clock read in pass 1 by the
 * wall time from that read to the request (it may still have been running then) plus
 * this much (switching back in and delivering the signal: a few microseconds). More
 * means it ran with the signal blocked, and its registers are not the tick's. */
#define MACH_DEFER_SLACK_NS 50000ull
/* Ticks a deferred sample may stand for while its thread has not run: with 256 busy
 * threads on 2 CPUs one waits ~400 ms for a CPU (40 ticks at 100 Hz). Past this the
 * request is withdrawn and those ticks are lost (a thread that blocks the signal while
 * it sleeps). The times of the latest MACH_TICK_RING ticks are kept for the owed ones. */
#define MACH_TICK_RING 1024
#define MACH_OWED_MAX (MACH_TICK_RING - 1)
/* Idle threads go cold (idle skip only, docs/mach.md "Thousands of threads"): a thread
 * found idle MACH_COLD_TICKS ticks in a row is no longer read each tick, and its ticks
 * are recorded as one reused sample when it runs again, exits or the sampler stops (the
 * sample's `ticks`). Whether any cold thread ran is told by the process's CPU clock: the
 * CPU it gained beyond what the threads read this tick (and the sampler itself) used.
 * Past MACH_WAKE_NS, plus the pass's own duration on every CPU, cold threads are read,
 * MACH_WAKE_READS a tick at most, in turn, until the CPU they gained explains the
 * process's: those that ran are sampled as usual. The pass's duration covers the CPU
 * that the other CPUs fold into the process total between a busy thread's read and the
 * total's (at most one thread per CPU runs meanwhile); MACH_WAKE_NS the sampler's own
 * reads. The bound keeps a tick's work bounded when thousands wake at once (a server's
 * shutdown); the price is latency: a cold thread that runs may be found only after
 * cold / MACH_WAKE_READS ticks, which its span then claims as idle. The count leaks a
 * MACH_WAKE_LEAK-th of the period each tick (0.2 % of a CPU): a slow trickle that no
 * thread the sampler knows accounts for (18 us every 50 ms in a 10,000-thread run here)
 * would otherwise send it reading every cold thread over and over; a cold thread that
 * uses less stays cold, and its CPU goes to its next sample's weight. */
/* The exception to MACH_COLD_TICKS: a thread whose first sample is a peek goes cold at
 * once. It used under 1 ms and under half its life as CPU (MACH_FIRST_PEEK_NS), was found
 * blocked in a system call and did not run while we read it, which says "idle" better
 * than two ticks without CPU; beside 10,000 threads of a server's pool those two ticks
 * cost each thread two more clock reads and two pushes. */
#define MACH_COLD_TICKS 2
#define MACH_WAKE_NS 200000
#define MACH_WAKE_READS 256
#define MACH_WAKE_LEAK 500
/* First samples (a thread not sampled yet: a peek, or a stop) are taken while the tick
 * has used less than a MACH_FIRSTS_SHARE-th of the period; the others wait for the next
 * ticks, which they miss. A sampler started beside 10,000 threads spent 250 ms on their
 * first samples in one tick (a /proc read each) and every thread, the busy ones too, lost
 * 27 ticks of 200; so bounded, the busy threads keep their ticks and the new ones are
 * seen within a few hundred ticks. */
#define MACH_FIRSTS_SHARE 4
/* A first sample is a peek only for a thread that used less CPU than this since its
 * start (peek_sample): a pool thread that went to wait uses a fraction of a ms. */
#define MACH_FIRST_PEEK_NS 1000000ull
/* Each thread's previous stack is kept for idle skip and cold spans: in a short buffer
 * of this many frames, and only once a stack is deeper in a max_depth one (stack_room).
 * A whole max_depth buffer (2 KiB) each put 10,000 threads' few frames on 5,000 pages:
 * 20 MB of memory and a page fault every other first sample. */
#define MACH_SHORT_FRAMES 32

struct mach_stats {
	uint64_t targets;      /* registered threads the ticks took on (never the sampler) */
	uint64_t samples_captured;
	uint64_t threads_skipped;
	uint64_t walk_errors;
	uint64_t suspend_time_ns;
	uint64_t max_suspend_ns;
	uint64_t ticks_planned;
	uint64_t ticks_done;
	uint64_t suspends_saved;
	uint64_t eintr_caused;
	uint64_t timeouts;
	uint64_t sched_fifo_priority;
	uint64_t sampler_cpu_ns;
	uint64_t dropped;
	uint64_t spin_releases;
	uint64_t spin_wakes;
	uint64_t peeks;        /* threads sampled blocked in a system call, without a signal */
	uint64_t peeks_void;   /* peeks discarded: the thread ran while we read its stack */
	uint64_t peeks_running;  /* peeked, but it was running: signalled */
	uint64_t peeks_no_chain; /* blocked, but no frame chain found above sp: signalled */
	uint64_t peeks_retried;  /* peeks that stood only on a second or third try */
	uint64_t peeks_not_tried; /* not peeked: its previous sample found it running user code */
	uint64_t rearms;       /* requests served by a signal still undelivered (tc_rearm) */
	uint64_t peeks_reused; /* peeks whose stack was pushed again: no CPU since the last one */
	uint64_t peeks_no_fd;  /* peeks not tried: the process was out of descriptors */
	uint64_t deferred;      /* samples a target took itself when it next ran (tc_defer) */
	uint64_t deferred_owed; /* ticks that reused a deferred sample: no CPU since its tick */
	uint64_t deferred_void; /* deferred samples discarded: the thread ran before its handler */
	uint64_t deferred_lost; /* ticks of withdrawn deferrals (blocked signal, thread exited) */
	uint64_t deferred_peeked; /* deferrals withdrawn for a peek: the signal was held */
	uint64_t snapshots;     /* registry snapshots taken: one per change of its epoch */
	uint64_t cold_spans;    /* reused samples that stand for the ticks a thread was cold */
	uint64_t cold_ticks;    /* thread-ticks those stand for: no read, no stop, no push */
	uint64_t wake_scans;    /* ticks that read the cold threads: unexplained process CPU */
	uint64_t firsts_waited; /* thread-ticks without a first sample: MACH_FIRSTS_SHARE */
	uint64_t threads_read;  /* thread clocks read in pass 1 (the per-tick work) */
	/* the sampler thread's CPU per tick (pausehist.h buckets): its median and p99 say
	 * what a tick costs apart from the threads starting and exiting */
	uint32_t tick_cpu_hist[SB_PAUSE_BUCKETS];
	/* Steady ticks: no first sample, no cold thread read, no whole snapshot. Their CPU
	 * is the cost of a tick once every thread is known; the others add what is paid once
	 * per thread (its first samples, as it goes cold, as it wakes for good). */
	uint64_t ticks_steady, tick_cpu_steady_sum_ns;
	uint64_t tick_cpu_p50_ns, tick_cpu_p99_ns;
};

/* What the sampler remembers about one registry entry (index), valid for generation gen. */
struct mach_tstate {
	uint32_t gen;
	uint32_t depth;     /* frames of the previous sample, in stack_buf(idx) */
	int deep;           /* its stacks go in M.stacks, not M.short_stacks (stack_room) */
	uint32_t flags;     /* its TRUNCATED / WALK_ERROR flags */
	int have_stack;
	uint32_t last_req;  /* request number of the previous stop */
	uint64_t last_cpu;  /* CPU ns at the previous sample (or the baseline) */
	uint64_t last_ns;   /* when the previous sample was taken */
	int peek_fd;        /* tc_peek_open() of this thread, -1 none, -2 not opened yet */
	int in_syscall;     /* its previous sample found it in a system call: worth a peek */
	uint64_t signal_cpu; /* its CPU clock when its latest signal was sent */
	int rearmed;        /* that signal, undelivered, was already re-armed once */
	int last_peeked;    /* its previous sample is a peek (it was blocked then) */
	uint32_t defer_req; /* an outstanding deferred request, 0 none */
	uint64_t defer_req_ns;  /* its tick: when it was requested */
	uint64_t defer_cpu;     /* the thread's CPU clock read in that tick's pass 1 */
	uint64_t defer_bound;   /* the most its clock may have moved by its handler */
	uint32_t nowed;         /* later ticks that passed before it ran: they reuse its stack */
	uint64_t owed_from;     /* ... from this tick on (M.tick_seq numbering) */
	struct tc_park *defer_park; /* the thread's, kept: it may exit before it is collected */
	pid_t defer_tid;
	int defer_index;        /* its workload slot, -1 none */
	uint64_t seen_tick;     /* the latest tick whose snapshot held it */
	uint64_t read_cpu;      /* its clock at its latest read in pass 1, for the wake check */
	uint64_t settle_mark;   /* the settle_departed() call that last kept it listed */
	uint32_t idle_ticks;    /* ticks in a row it was found idle */
	int cold;               /* idle long enough: not read each tick (MACH_COLD_TICKS) */
	uint64_t cold_from;     /* the first tick its cold span stands for (M.tick_seq) */
	uint64_t cold_from_ns;  /* ... and about when that tick was */
	uint64_t cold_cpu;      /* its clock when it went cold */
	pid_t cold_tid;
	int cold_index;         /* its workload slot, -1 none */
};

struct mach_target {
	struct tc_target t;
	const struct reg_snap *e;
	uint64_t cpu_ns;     /* read just before the request */
	uint64_t parked_ns;  /* when it parked (its own clock reading) */
	uint64_t resumed_ns; /* after tc_resume() returned */
	uint32_t depth;
	enum sb_walk_end end;
	int ok;              /* state read and walked */
	int peek_again;      /* pass 1 found it running: peek it again before the requests */
};

static struct {
	struct sb_config cfg;
	struct sb_sink *sink;
	uint64_t interval_ns;
	int jitter;                 /* SB_MACH_JITTER: each interval drawn from [0.5, 1.5) x */
	uint64_t rng;               /* xorshift64 state of the jitter, from the run's seed */
	uint32_t max_depth;
	uint64_t start_ns;
	uint64_t tick_ns;           /* when the current tick began (before its pass 1) */
	uint64_t tick_seq;          /* ticks begun */
	uint64_t tick_times[MACH_TICK_RING]; /* tick_ns of tick q at q % MACH_TICK_RING */
	_Atomic int running;
	int started;
	pthread_t thread;
	pid_t tid;
	/* The registry as the sampler knows it: M.snap[0..nsnap) (order does not matter),
	 * kept current by the registry's change log from snap_cursor on: O(changes) a tick.
	 * pos[idx]: where entry idx is in snap, -1 nowhere. */
	struct reg_snap *snap;      /* REG_CAP */
	int nsnap;
	int *pos;                   /* REG_CAP */
	uint64_t snap_cursor;       /* registry_epoch() up to which snap is current */
	int have_snap;
	/* The entries pass 1 reads: every one in snap but the cold ones (in_hot[idx] says
	 * which are listed; entries gone or gone cold leave at the end of pass 1). */
	uint32_t *hot;              /* REG_CAP */
	int nhot;
	uint8_t *in_hot;            /* REG_CAP */
	uint32_t *changed;          /* REG_CAP: registry_changes() */
	uint32_t *exited;           /* REG_CAP: entries the log said exited, freed after the tick */
	int nexited;                /* REG_CAP + 1: more, every dead entry is freed by a scan */
	int cold_on;                /* idle skip with a readable process CPU clock */
	uint32_t *scratch;          /* REG_CAP: the cold threads a wake scan reads */
	uint32_t *cold;             /* REG_CAP: the cold entries, in no order */
	int *cold_pos;              /* REG_CAP: where entry idx is in cold, -1 nowhere */
	int ncold;
	int wake_next;              /* where the next wake scan starts in cold */
	int wake_read;              /* cold threads read since the count was last explained */
	/* Entries with a deferred request outstanding, or settled since the list was last
	 * pruned (settle_departed keeps only the outstanding ones). */
	uint32_t *deferred;         /* REG_CAP */
	int ndeferred;
	uint64_t settle_seq;        /* settle_departed() calls */
	int firsts;                 /* first samples this tick (MACH_FIRSTS_SHARE) */
	uint32_t ts_high;           /* entries of ts tracked at least once are below */
	uint32_t ts_populated;      /* entries of ts below are on pages made writable */
	uint64_t setup_cpu_ns;      /* CPU of start() and stop() in the caller's thread */
	uint64_t proc_cpu_last, self_cpu_last; /* the process's and the sampler's clocks */
	int64_t unexplained_ns;     /* process CPU no thread read since the last full read */
	struct mach_target *tg;     /* REG_CAP: requested, not parked yet */
	struct mach_target *done;   /* REG_CAP: parked and walked, in batch mode not resumed */
	int release_mode;           /* MACH_RELEASE_*: when parked threads are resumed */
	int peek;                   /* sample threads blocked in a system call without a signal */
	int defer;                  /* defer targets that do not park in time (tc_defer) */
	uint64_t batch_open_ns;     /* MACH_BATCH_OPEN_NS, or SB_MACH_BATCH_OPEN_US; 0: no limit */
	int ncpu;                   /* online CPUs, for MACH_RELEASE_AUTO */
	struct mach_tstate *ts;     /* REG_CAP */
	uint64_t *short_stacks;     /* REG_CAP * MACH_SHORT_FRAMES: each thread's, at first */
	uint64_t *stacks;           /* REG_CAP * max_depth: a thread's once one is deeper */
	uint64_t *peek_stack;       /* max_depth: a peek's walk, kept only if the peek stands */
	struct mach_stats st;
} M;

static int mach_available(char *why, size_t len)
{
	(void)why;
	(void)len;
	return 0;
}

/* Entry idx's stack buffer (its thread's previous stack, ts->depth frames). */
static uint64_t *stack_buf(uint32_t idx)
{
	return M.ts[idx].deep ? M.stacks + (size_t)idx * M.max_depth
			      : M.short_stacks + (size_t)idx * MACH_SHORT_FRAMES;
}

/* How many frames stack_buf(idx) holds. */
static uint32_t stack_cap(uint32_t idx)
{
	return M.ts[idx].deep || M.max_depth < MACH_SHORT_FRAMES ? M.max_depth : MACH_SHORT_FRAMES;
}

/* Entry idx's stack buffer with room for depth frames (<= max_depth): past its short one
 * the thread moves to its deep one for good. Its previous stack is not kept. */
static uint64_t *stack_room(uint32_t idx, uint32_t depth)
{
	if (depth > stack_cap(idx))
		M.ts[idx].deep = 1;
	return stack_buf(idx);
}

/* Reads the state of parked target g and walks its stack into its stack buffer. Runs
 * while g is stopped: no allocation, lock or stdio. A parked thread that is not the one
 * we asked for (tid reused) is marked and will only be resumed. */
static void walk_parked(struct mach_target *g)
{
	const struct reg_snap *e = g->e;
	struct sb_regs regs;

	g->ok = tc_get_state(&g->t, &regs, &g->parked_ns) == 0;
	if (!g->ok)
		return;
	uint32_t cap = stack_cap(e->idx);
	g->end = fp_walk(&regs, &e->bounds, stack_buf(e->idx), cap, &g->depth, NULL, NULL);
	if (g->end == SB_WALK_TRUNCATED && cap < M.max_depth) { /* once a thread: deeper */
		stack_room(e->idx, M.max_depth);
		g->end = fp_walk(&regs, &e->bounds, stack_buf(e->idx), M.max_depth, &g->depth,
				 NULL, NULL);
	}
}

/* Resumes walked target g and notes when; push_sample() records it afterwards. */
static void resume_parked(struct mach_target *g)
{
	tc_resume(&g->t);
	g->resumed_ns = sb_now_ns();
}

/* Resumes the parked batch M.done[from, to) with one wake-up for all of them. */
static void release_batch(int from, int to)
{
	if (from >= to)
		return;
	for (int i = from; i < to; i++)
		tc_release(&M.done[i].t);
	tc_release_flush();
	uint64_t now = sb_now_ns();
	for (int i = from; i < to; i++)
		M.done[i].resumed_ns = now;
}

static void push_sample(struct mach_target *g)
{
	const struct reg_snap *e = g->e;
	struct mach_tstate *ts = &M.ts[e->idx];

	if (!g->ok) {
		M.st.threads_skipped++;
		return;
	}
	uint64_t window = g->resumed_ns - g->t.req_ns;
	M.st.suspend_time_ns += window;
	if (window > M.st.max_suspend_ns)
		M.st.max_suspend_ns = window;

	struct sb_sample s = sample_unknown();
	s.time_ns = g->parked_ns;
	s.tid = e->tid;
	s.thread_index = e->slot >= 0 ? e->slot : sb_index_of_tid(e->tid);
	s.weight_ns = (double)(g->cpu_ns - ts->last_cpu);
	s.stop_latency_ns = g->parked_ns > g->t.req_ns ? (double)(g->parked_ns - g->t.req_ns) : 0;
	s.suspend_window_ns = (double)window;
	s.flags = g->cpu_ns > ts->last_cpu ? SB_SAMPLE_RAN : 0;
	if (g->end == SB_WALK_TRUNCATED) {
		s.flags |= SB_SAMPLE_TRUNCATED;
	} else if (g->end != SB_WALK_OK) {
		s.flags |= SB_SAMPLE_WALK_ERROR;
		M.st.walk_errors++;
	}
	ts->last_cpu = g->cpu_ns;
	ts->last_ns = g->parked_ns;
	ts->last_req = g->t.req;
	ts->in_syscall = g->depth > 0 &&
			 tc_pc_at_syscall((uintptr_t)stack_buf(e->idx)[0]);
	ts->depth = g->depth;
	ts->flags = s.flags & (SB_SAMPLE_TRUNCATED | SB_SAMPLE_WALK_ERROR);
	ts->have_stack = 1;
	ts->last_peeked = 0;
	if (sink_push(M.sink, &s, stack_buf(e->idx), g->depth) == 0)
		M.st.samples_captured++;
	else
		M.st.dropped++;
}

/* Idle skip (samply): the thread did not run since its previous sample, so its stack is
 * the same. Push that stack again without stopping it. */
static void reuse_sample(const struct reg_snap *e)
{
	struct mach_tstate *ts = &M.ts[e->idx];
	struct sb_sample s = sample_unknown();

	s.time_ns = sb_now_ns();
	s.tid = e->tid;
	s.thread_index = e->slot >= 0 ? e->slot : sb_index_of_tid(e->tid);
	/* The few us of slack stay on the clock and go to the next real sample's weight.
	 * Stopped nobody: no stop latency and no suspend window (NaN, not 0, so the window
	 * quantiles describe the stops that happened). */
	s.weight_ns = 0;
	s.flags = ts->flags | SB_SAMPLE_REUSED;
	M.st.suspends_saved++;
	if (sink_push(M.sink, &s, stack_buf(e->idx), ts->depth) == 0)
		M.st.samples_captured++;
	else
		M.st.dropped++;
}

/* Idle skip, thread e found idle MACH_COLD_TICKS ticks in a row: from the next tick on
 * it is not read each tick; its stack stands for those ticks (end_cold). */
static void go_cold(const struct reg_snap *e, uint64_t cpu)
{
	struct mach_tstate *ts = &M.ts[e->idx];

	M.cold_pos[e->idx] = M.ncold;
	M.cold[M.ncold++] = e->idx;
	ts->cold = 1;
	ts->cold_from = M.tick_seq + 1;
	ts->cold_from_ns = M.tick_ns + M.interval_ns;
	ts->cold_cpu = cpu;
	ts->cold_tid = e->tid;
	ts->cold_index = e->slot >= 0 ? e->slot : sb_index_of_tid(e->tid);
	/* Not peeked while cold: its descriptor goes, so the process holds one per thread
	 * still read each tick, not one per thread (10,000 would pass a 1024 limit). */
	if (ts->peek_fd >= 0) {
		close(ts->peek_fd);
		ts->peek_fd = -2;
	}
}

/* Ends entry idx's cold span before tick `upto` (that tick not included: the thread ran,
 * exited or the sampler stopped): its previous stack is pushed once, standing for every
 * tick of the span (the sample's `ticks`), weight 0. */
static void end_cold(uint32_t idx, uint64_t upto)
{
	struct mach_tstate *ts = &M.ts[idx];
	struct sb_sample s = sample_unknown();

	if (!ts->cold)
		return;
	int p = M.cold_pos[idx];
	M.cold[p] = M.cold[--M.ncold];
	M.cold_pos[M.cold[p]] = p;
	M.cold_pos[idx] = -1;
	ts->cold = 0;
	ts->idle_ticks = 0;
	if (upto <= ts->cold_from)
		return;
	uint64_t k = upto - ts->cold_from;
	s.time_ns = ts->cold_from_ns;
	s.tid = ts->cold_tid;
	s.thread_index = ts->cold_index;
	s.weight_ns = 0;
	s.flags = ts->flags | SB_SAMPLE_REUSED;
	s.ticks = k > UINT32_MAX ? UINT32_MAX : (uint32_t)k;
	M.st.suspends_saved += k;
	M.st.cold_spans++;
	M.st.cold_ticks += k;
	if (sink_push(M.sink, &s, stack_buf(idx), ts->depth) == 0)
		M.st.samples_captured++;
	else
		M.st.dropped++;
}

/* The sample e's thread took itself for deferred request ts->defer_req (its handler, as it
 * next ran), then one sample for each later tick that passed before it ran: the same
 * stack, since it had not run. The first carries the CPU since its previous sample and,
 * as its window, only the handler's own run: the thread was not going to run before it
 * (it waited for a CPU), so the sampler kept it from nothing else. Its stop latency is 0:
 * the thread was off the CPU at the request, and its registers are the request's. */
static void push_deferred(int idx, struct mach_tstate *ts, const struct tc_self_sample *ss,
			  int peeked)
{
	uint32_t depth = ss->depth < M.max_depth ? ss->depth : M.max_depth;
	uint64_t *stack = stack_room(idx, depth);
	enum sb_walk_end end = ss->depth > M.max_depth ? SB_WALK_TRUNCATED : ss->end;
	uint64_t window = ss->exit_ns > ss->entry_ns ? ss->exit_ns - ss->entry_ns : 0;
	struct sb_sample s = sample_unknown();

	memcpy(stack, ss->pcs, depth * sizeof(*stack));
	s.time_ns = ts->defer_req_ns;
	s.tid = ts->defer_tid;
	s.thread_index = ts->defer_index;
	s.weight_ns = ts->defer_cpu > ts->last_cpu ? (double)(ts->defer_cpu - ts->last_cpu) : 0;
	s.flags = SB_SAMPLE_DEFERRED | (ts->defer_cpu > ts->last_cpu ? SB_SAMPLE_RAN : 0);
	if (end == SB_WALK_TRUNCATED) {
		s.flags |= SB_SAMPLE_TRUNCATED;
	} else if (end != SB_WALK_OK) {
		s.flags |= SB_SAMPLE_WALK_ERROR;
		M.st.walk_errors++;
	}
	if (peeked) { /* stopped nobody: no stop latency, no window (NaN, not 0) */
		s.flags |= SB_SAMPLE_PEEKED;
	} else {
		s.stop_latency_ns = 0;
		s.suspend_window_ns = (double)window;
		M.st.suspend_time_ns += window;
		if (window > M.st.max_suspend_ns)
			M.st.max_suspend_ns = window;
	}
	ts->last_cpu = ts->defer_cpu;
	ts->last_ns = ts->defer_req_ns;
	ts->depth = depth;
	ts->flags = s.flags & (SB_SAMPLE_TRUNCATED | SB_SAMPLE_WALK_ERROR);
	ts->have_stack = 1;
	ts->in_syscall = peeked || (depth > 0 && tc_pc_at_syscall((uintptr_t)stack[0]));
	ts->last_peeked = peeked;
	M.st.deferred++;
	if (sink_push(M.sink, &s, stack, depth) == 0)
		M.st.samples_captured++;
	else
		M.st.dropped++;
	for (uint32_t k = 0; k < ts->nowed; k++) {
		struct sb_sample o = sample_unknown();
		o.time_ns = M.tick_times[(ts->owed_from + k) % MACH_TICK_RING];
		o.tid = ts->defer_tid;
		o.thread_index = s.thread_index;
		o.weight_ns = 0;
		o.flags = ts->flags | SB_SAMPLE_DEFERRED | SB_SAMPLE_REUSED;
		ts->last_ns = o.time_ns;
		M.st.deferred_owed++;
		if (sink_push(M.sink, &o, stack, depth) == 0)
			M.st.samples_captured++;
		else
			M.st.dropped++;
	}
	ts->nowed = 0;
}

/* Ends e's outstanding deferral without its sample: its ticks are lost. */
static void drop_deferred(struct tc_park *park, struct mach_tstate *ts)
{
	tc_deferred_end(park, ts->defer_req);
	M.st.deferred_lost += 1 + ts->nowed;
	ts->defer_req = 0;
	ts->nowed = 0;
}

/* Settles a deferred request whose sample the thread has taken (ss): pushes it with its
 * owed ticks if it stands, and frees the control block for the next request. */
static void take_deferred(int idx, struct mach_tstate *ts, const struct tc_self_sample *ss)
{
	if (ss->cpu_ns <= ts->defer_cpu + ts->defer_bound) {
		push_deferred(idx, ts, ss, 0);
		tc_deferred_end(ts->defer_park, ts->defer_req);
		ts->defer_req = 0;
	} else {
		M.st.deferred_void++; /* it ran with the signal blocked first */
		drop_deferred(ts->defer_park, ts);
	}
}

enum { PEEK_NO, PEEK_DONE, PEEK_RUNNING };

/* Reads blocked thread e's stack without stopping it (tc_peek) into M.peek_stack, its
 * frames in *depth, how the walk ended in *end. cpu: its clock as read before. Returns
 * PEEK_DONE when the stack stands (its clock did not move meanwhile), PEEK_RUNNING when it
 * was running or ran meanwhile, PEEK_NO when it cannot be peeked. */
static int peek_read(const struct reg_snap *e, uint64_t cpu, uint32_t *depth,
		     enum sb_walk_end *end)
{
	struct mach_tstate *ts = &M.ts[e->idx];
	struct sb_regs regs;
	uint64_t after;

	if (ts->peek_fd == -2) {
		errno = 0;
		ts->peek_fd = tc_peek_open(e->tid);
		if (ts->peek_fd < 0 && (errno == EMFILE || errno == ENFILE)) {
			ts->peek_fd = -2; /* out of descriptors for now: tried again later */
			M.st.peeks_no_fd++;
		}
	}
	if (ts->peek_fd < 0)
		return PEEK_NO;
	int r = tc_peek(ts->peek_fd, &e->bounds, e->outer_fp, &regs);
	if (r == 0)
		return PEEK_RUNNING;
	if (r != 1) {
		if (r == 2)
			M.st.peeks_no_chain++; /* blocked all the same: stays worth a peek */
		return PEEK_NO;
	}
	*end = fp_walk(&regs, &e->bounds, M.peek_stack, M.max_depth, depth, NULL, NULL);
	if (tc_cpu_ns(e->park, e->tid, &after) != 0 || after != cpu) {
		M.st.peeks_void++; /* it ran while we read */
		return PEEK_RUNNING;
	}
	return PEEK_DONE;
}

/* A deferral whose thread did not run for a whole tick: its signal is held (blocked with
 * sigprocmask, or queued by a runtime until its system call returns, as ThreadSanitizer
 * does), so its handler may never run while it blocks, and every tick it owes would be
 * lost when the deferral is withdrawn. If it is blocked in a system call, its stack is
 * read without the signal instead: the deferral is withdrawn and that stack stands for
 * the request's tick and every tick owed since (it has not run: its stack is the same).
 * Returns 1 when the deferral is settled so (or its handler runs right now), else 0. */
static int peek_deferred(const struct reg_snap *e, uint64_t cpu)
{
	struct mach_tstate *ts = &M.ts[e->idx];
	struct tc_self_sample ss = { 0 };
	enum sb_walk_end end;
	uint32_t depth;

	if (!M.peek || peek_read(e, cpu, &depth, &end) != PEEK_DONE)
		return 0;
	switch (tc_deferred_end(ts->defer_park, ts->defer_req)) {
	case TC_TIMEOUT: /* withdrawn: a handler that runs later returns at once */
		break;
	case TC_BUSY: /* its handler takes it right now: collected next tick */
		return 1;
	default: /* taken just now, and given up by the withdrawal */
		M.st.deferred_lost += 1 + ts->nowed;
		ts->defer_req = 0;
		ts->nowed = 0;
		return 0;
	}
	ss.pcs = M.peek_stack;
	ss.depth = depth;
	ss.end = end;
	ss.cpu_ns = cpu;
	push_deferred(e->idx, ts, &ss, 1);
	ts->defer_req = 0;
	M.st.deferred_peeked++;
	return 1;
}

/* Pass 1 for a thread with a deferred request outstanding. Returns 1 when this tick is
 * settled for it (it still has not run: the tick reuses the deferred stack; or its
 * handler is taking the sample right now), 0 when it must be sampled afresh (it ran:
 * its deferred sample, if it stands, is pushed first). cpu: its clock now. */
static int deferred_step(const struct reg_snap *e, uint64_t cpu)
{
	struct mach_tstate *ts = &M.ts[e->idx];
	struct tc_self_sample ss;

	switch (tc_deferred_poll(ts->defer_park, ts->defer_req, &ss)) {
	case TC_SELF_DONE:
		take_deferred(e->idx, ts, &ss);
		return 0;
	case TC_DEFERRED:
		if (cpu <= ts->defer_cpu + ts->defer_bound && ts->nowed < MACH_OWED_MAX &&
		    (ts->nowed == 0 || ts->owed_from + ts->nowed == M.tick_seq)) {
			if (ts->nowed++ == 0)
				ts->owed_from = M.tick_seq;
			if (ts->nowed > 1) /* not run for a whole tick: its signal may be held */
				peek_deferred(e, cpu); /* this tick is among those it stands for */
			return 1;
		}
		if (cpu > ts->defer_cpu + ts->defer_bound)
			M.st.deferred_void++; /* runs without taking the signal: blocked */
		drop_deferred(ts->defer_park, ts);
		return 0;
	case TC_BUSY:
		M.st.threads_skipped++; /* its handler runs now: collected next tick */
		return 1;
	default:
		drop_deferred(ts->defer_park, ts);
		return 0;
	}
}

/* Deferrals of threads this tick's snapshot did not hold (they exited: a thread waiting
 * for a CPU takes its deferred sample as it runs towards its end), or of every thread
 * when final (the sampler stops): taken samples are pushed, the rest withdrawn, except a
 * handler taking one right now, which the next tick collects (never when final). */
static void settle_departed(int final)
{
	int k = 0;
	uint64_t mark = ++M.settle_seq;

	for (int j = 0; j < M.ndeferred; j++) { /* the list loses the settled ones */
		uint32_t i = M.deferred[j];
		struct mach_tstate *ts = &M.ts[i];
		struct tc_self_sample ss;

		if (!ts->defer_req || ts->settle_mark == mark)
			continue; /* settled, or listed twice */
		ts->settle_mark = mark;
		if (!final && ts->seen_tick == M.tick_seq) {
			M.deferred[k++] = i;
			continue;
		}
		int r = tc_deferred_poll(ts->defer_park, ts->defer_req, &ss);
		if (r == TC_SELF_DONE)
			take_deferred(i, ts, &ss);
		else if (r != TC_BUSY || final)
			drop_deferred(ts->defer_park, ts);
		if (ts->defer_req)
			M.deferred[k++] = i;
	}
	M.ndeferred = k;
}

/* Pending target g did not park in time: defer it (tc_defer) or, where there is no
 * deferral, give it up. Returns what tc_defer() returned. */
static int defer_target(struct mach_target *g)
{
	int r = M.defer ? tc_defer(&g->t, &g->e->bounds) : tc_cancel(&g->t);

	if (r == TC_DEFERRED) {
		struct mach_tstate *ts = &M.ts[g->e->idx];
		if (!ts->defer_req)
			M.deferred[M.ndeferred++] = g->e->idx;
		ts->defer_req = g->t.req;
		ts->defer_req_ns = g->t.req_ns;
		ts->defer_cpu = g->cpu_ns;
		ts->defer_bound = (g->t.req_ns - M.tick_ns) + MACH_DEFER_SLACK_NS;
		ts->nowed = 0;
		ts->defer_park = g->t.park;
		ts->defer_tid = g->e->tid;
		ts->defer_index = g->e->slot >= 0 ? g->e->slot : sb_index_of_tid(g->e->tid);
	} else if (r == TC_TIMEOUT) {
		M.st.timeouts++;
	}
	return r;
}

/* Makes M.ts writable on fresh pages up to entry idx and a chunk beyond (plat_populate_write)
 * before track() reads it: the first read of a zero page and the copy at its first write
 * flush the TLB of every CPU running the process, the busy threads' among them, and 10,000
 * new threads fill some 600 pages. Each page is written, not madvise'd, which would wait
 * on the mmap lock behind the thread creating threads. The registry hands out entries
 * from the bottom up. */
#define MACH_TS_POPULATE 256
static void ts_populate(uint32_t idx)
{
	uint32_t end = idx + MACH_TS_POPULATE < REG_CAP ? idx + MACH_TS_POPULATE : REG_CAP;

	if (idx < M.ts_populated)
		return;
	plat_populate_write(M.ts + M.ts_populated, (end - M.ts_populated) * sizeof(*M.ts));
	M.ts_populated = end;
}

/* Per-entry state for a thread seen for the first time. Threads registered after start
 * are charged from their birth (their CPU clock starts at 0, like the workload's truth);
 * older ones (the main thread) from the first reading. */
static void track(const struct reg_snap *e, uint64_t cpu_now)
{
	struct mach_tstate *ts = &M.ts[e->idx];

	ts_populate(e->idx);
	if (ts->gen == e->gen)
		return;
	end_cold(e->idx, M.tick_seq); /* its entry's previous thread exited */
	if (ts->defer_req) { /* its entry's previous thread exited */
		struct tc_self_sample ss;
		if (tc_deferred_poll(ts->defer_park, ts->defer_req, &ss) == TC_SELF_DONE)
			take_deferred(e->idx, ts, &ss);
		else
			drop_deferred(ts->defer_park, ts);
	}
	if (ts->gen && ts->peek_fd >= 0) /* gen 0: never tracked, all zero (fd 0 is not ours) */
		close(ts->peek_fd);
	memset(ts, 0, sizeof(*ts));
	if (e->idx >= M.ts_high)
		M.ts_high = e->idx + 1;
	ts->gen = e->gen;
	ts->peek_fd = -2;
	ts->last_cpu = e->reg_ns >= M.start_ns ? 0 : cpu_now;
}

/* Did thread e not run since its previous sample? Stopping it (Linux) costs it some CPU
 * of its own, so compare with its clock as it left that rendezvous, with some slack. */
static int is_idle(const struct reg_snap *e, uint64_t cpu)
{
	const struct mach_tstate *ts = &M.ts[e->idx];
	uint64_t base = ts->last_cpu, after;

	if (!ts->have_stack)
		return 0;
	if (tc_cpu_after(e->park, ts->last_req, &after) == 0 && after > base)
		return cpu <= after + TC_IDLE_SLACK_NS;
	return cpu == base;
}

/* A thread blocked in a system call is sampled without a signal (tc_peek): the signal
 * would make the call fail with EINTR (nanosleep, poll) or wake the thread for nothing.
 * Tried (first try: again == 0) only for threads that used less than half of the time
 * since their previous sample (or their start) as CPU: a thread that ran all along is
 * running now. The
 * sample stands only if the thread's CPU clock did not move while we read its stack.
 * *cpu is its clock as read before this try. Returns PEEK_DONE when pushed, PEEK_RUNNING
 * when it was running (or ran meanwhile: worth another try), PEEK_NO otherwise. */
static int peek_sample(const struct reg_snap *e, uint64_t cpu, int again)
{
	struct mach_tstate *ts = &M.ts[e->idx];
	uint64_t now = sb_now_ns();
	uint64_t *stack = stack_buf(e->idx);
	enum sb_walk_end end;
	uint32_t depth;

	if (!again) {
		/* A thread's first sample is tried too when it used less than half of its life
		 * and under MACH_FIRST_PEEK_NS as CPU: thousands of threads that start and block
		 * (a server's pool) are then read without a signal that would fail their call
		 * with EINTR. A thread that has been at work since its start (the syscall
		 * workload's bursts between waits) is stopped first, as any other, and its
		 * later samples peeked when it blocks. */
		uint64_t used = ts->have_stack ? cpu - ts->last_cpu : cpu;
		uint64_t since = now - (ts->have_stack ? ts->last_ns : e->reg_ns);
		if (!M.peek || used >= since / 2 || (!ts->have_stack && used >= MACH_FIRST_PEEK_NS))
			return PEEK_NO;
		if (ts->have_stack && !ts->in_syscall) {
			M.st.peeks_not_tried++;
			return PEEK_NO;
		}
		if (ts->last_peeked && cpu == ts->last_cpu) {
			/* Blocked at its previous sample and no CPU since: it is still blocked
			 * there (a thread cannot move its pc or stack without running), so its
			 * stack is the one we have. Push it again instead of reading /proc:
			 * the read and its parse were a tenth of the sampler's CPU with 8
			 * threads, all of it for the harness's sleeping main thread. */
			struct sb_sample s = sample_unknown();
			s.time_ns = now;
			s.tid = e->tid;
			s.thread_index = e->slot >= 0 ? e->slot : sb_index_of_tid(e->tid);
			s.weight_ns = 0;
			s.flags = ts->flags | SB_SAMPLE_PEEKED | SB_SAMPLE_REUSED;
			ts->last_ns = now;
			M.st.peeks_reused++;
			if (sink_push(M.sink, &s, stack, ts->depth) == 0)
				M.st.samples_captured++;
			else
				M.st.dropped++;
			return PEEK_DONE;
		}
	}
	int r = peek_read(e, cpu, &depth, &end);
	if (r != PEEK_DONE)
		return r;
	stack = stack_room(e->idx, depth);
	memcpy(stack, M.peek_stack, depth * sizeof(*stack));
	struct sb_sample s = sample_unknown();
	s.time_ns = now;
	s.tid = e->tid;
	s.thread_index = e->slot >= 0 ? e->slot : sb_index_of_tid(e->tid);
	s.weight_ns = (double)(cpu - ts->last_cpu);
	/* Stopped nobody: no stop latency, no suspend window (NaN, not 0). */
	s.flags = SB_SAMPLE_PEEKED | (cpu > ts->last_cpu ? SB_SAMPLE_RAN : 0);
	if (end == SB_WALK_TRUNCATED)
		s.flags |= SB_SAMPLE_TRUNCATED;
	else if (end != SB_WALK_OK)
		s.flags |= SB_SAMPLE_WALK_ERROR;
	ts->last_cpu = cpu;
	ts->last_ns = now;
	ts->depth = depth;
	ts->flags = s.flags & (SB_SAMPLE_TRUNCATED | SB_SAMPLE_WALK_ERROR);
	ts->have_stack = 1;
	ts->in_syscall = 1;
	ts->last_peeked = 1;
	M.st.peeks++;
	M.st.peeks_retried += again != 0;
	if (sink_push(M.sink, &s, stack, depth) == 0)
		M.st.samples_captured++;
	else
		M.st.dropped++;
	return PEEK_DONE;
}

/* Peeks again, up to MACH_PEEK_TRIES - 1 times, the targets M.tg[0..nwant) that pass 1
 * found running, all in one round each, and drops those sampled. Returns the new count. */
static int peek_retry(int nwant, int nagain)
{
	for (int round = 1; round < MACH_PEEK_TRIES && nagain > 0; round++) {
		plat_sleep_until_ns(sb_now_ns() + MACH_PEEK_GAP_NS);
		for (int i = 0; i < nwant;) {
			struct mach_target *g = &M.tg[i];
			int r = PEEK_NO;

			if (g->peek_again && tc_cpu_ns(g->e->park, g->e->tid, &g->cpu_ns) == 0)
				r = peek_sample(g->e, g->cpu_ns, 1);
			if (g->peek_again && r != PEEK_RUNNING) {
				g->peek_again = 0;
				nagain--;
			}
			if (r == PEEK_DONE) {
				M.tg[i] = M.tg[--nwant];
				continue;
			}
			i++;
		}
	}
	for (int i = 0; i < nwant; i++) {
		struct mach_tstate *ts = &M.ts[M.tg[i].e->idx];
		if (!M.tg[i].peek_again)
			continue;
		M.st.peeks_running++;
		ts->in_syscall = 0;
	}
	return nwant;
}

/* Pass 1 of a tick, nothing stopped yet: reads the CPU clock of the registered threads
 * list[0..nlist) (entry indices; a system call each on Linux, kept out of the suspend
 * windows), settles those a deferral, an idle skip or a peek samples, and puts the others
 * in M.tg from nwant on. Cold threads that did not run stay cold and untouched. *read_ns
 * gains the CPU the threads read used since their previous read (all of it at a first
 * read: they registered as they started). Returns the new nwant; *nagain counts those to
 * peek again. */
static int choose_targets(const uint32_t *list, int nlist, int nwant, int *nagain,
			  uint64_t *read_ns)
{
	for (int i = 0; i < nlist; i++) {
		if (M.pos[list[i]] < 0)
			continue; /* exited */
		const struct reg_snap *e = &M.snap[M.pos[list[i]]];
		struct mach_tstate *ts = &M.ts[e->idx];
		struct mach_target *g;
		uint64_t cpu;

		if (e->tid == M.tid)
			continue; /* never ourselves */
		if ((ts->gen != e->gen || !ts->have_stack) && M.firsts > 0 &&
		    sb_now_ns() - M.tick_ns > M.interval_ns / MACH_FIRSTS_SHARE) {
			M.st.firsts_waited++; /* its first sample waits for a later tick */
			continue;
		}
		M.st.targets++;
		M.st.threads_read++;
		if (tc_cpu_ns(e->park, e->tid, &cpu) != 0) {
			M.st.threads_skipped++; /* exited since the snapshot */
			continue;
		}
		track(e, cpu);
		ts->seen_tick = M.tick_seq;
		*read_ns += cpu > ts->read_cpu ? cpu - ts->read_cpu : 0;
		ts->read_cpu = cpu;
		if (ts->cold) {
			if (cpu <= ts->cold_cpu + TC_IDLE_SLACK_NS)
				continue; /* still idle: its span goes on */
			end_cold(e->idx, M.tick_seq);
		}
		if (ts->defer_req && deferred_step(e, cpu))
			continue;
		if (M.cfg.idle_skip && is_idle(e, cpu)) {
			reuse_sample(e);
			if (M.cold_on && ++ts->idle_ticks >= MACH_COLD_TICKS)
				go_cold(e, cpu);
			continue;
		}
		ts->idle_ticks = 0;
		int first = !ts->have_stack;
		M.firsts += first;
		int r = peek_sample(e, cpu, 0);
		if (r == PEEK_DONE) {
			if (first && M.cold_on)
				go_cold(e, cpu); /* MACH_COLD_TICKS: blocked from its start */
			continue;
		}
		g = &M.tg[nwant++];
		g->e = e;
		g->cpu_ns = cpu;
		g->t.park = e->park;
		g->t.tid = e->tid;
		g->t.ident = e->gen;
		g->peek_again = r == PEEK_RUNNING;
		*nagain += g->peek_again;
	}
	return nwant;
}

/* Lists entry idx for pass 1 (once). */
static void add_hot(uint32_t idx)
{
	if (!M.in_hot[idx]) {
		M.in_hot[idx] = 1;
		M.hot[M.nhot++] = idx;
	}
}

/* Drops entry idx from the sampler's view of the registry (its thread exited): a cold
 * span ends. */
static void snap_remove(uint32_t idx)
{
	int p = M.pos[idx];

	if (p < 0)
		return;
	if (M.ts[idx].gen == M.snap[p].gen)
		end_cold(idx, M.tick_seq);
	M.snap[p] = M.snap[--M.nsnap];
	M.pos[M.snap[p].idx] = p;
	M.pos[idx] = -1;
}

/* Puts the current state of entry idx into the sampler's view: LIVE, it is added or
 * updated (a new thread in a reused entry ends the old one's cold span) and read in
 * pass 1; else removed. */
static void snap_update(uint32_t idx)
{
	struct reg_snap e;

	ts_populate(idx);
	if (!registry_read(idx, &e)) {
		if (M.nexited < REG_CAP) /* also one that came and went between two ticks */
			M.exited[M.nexited++] = idx;
		else
			M.nexited = REG_CAP + 1;
		snap_remove(idx);
		return;
	}
	if (M.pos[idx] < 0) {
		M.pos[idx] = M.nsnap++;
	} else if (M.snap[M.pos[idx]].gen != e.gen) {
		if (M.ts[idx].gen == M.snap[M.pos[idx]].gen)
			end_cold(idx, M.tick_seq);
	}
	M.snap[M.pos[idx]] = e;
	if (!M.ts[idx].cold || M.ts[idx].gen != e.gen)
		add_hot(idx);
}

/* Frees the registry entries of the threads that exited, for threads yet to start:
 * those the change log named this tick (O(exits): a scan of every entry each tick was 11
 * ms of the sampler's 200 in a 2 s run where 10,000 threads end), or after a whole
 * snapshot, which names none, every dead entry by a scan. */
static void free_exited(int snapshot)
{
	if (snapshot || M.nexited > REG_CAP) {
		registry_compact();
	} else {
		for (int i = 0; i < M.nexited; i++)
			registry_free(M.exited[i]);
	}
	M.nexited = 0;
}

/* Brings the sampler's view of the registry up to date: the entries changed since the
 * previous tick (threads started, exited or named their slot), or a whole snapshot the
 * first time and when the change log overflowed. Returns 1 after a whole snapshot: then
 * every thread is read this tick. */
static int refresh_snapshot(void)
{
	int n;

	if (M.have_snap) {
		while ((n = registry_changes(&M.snap_cursor, M.changed, REG_CAP)) > 0)
			for (int k = 0; k < n; k++)
				snap_update(M.changed[k]);
		if (n == 0)
			return 0;
	}
	/* whole: every entry gone or changed ends its cold span first */
	for (int i = M.nsnap - 1; i >= 0; i--)
		snap_remove(M.snap[i].idx);
	M.snap_cursor = registry_epoch();
	n = registry_snapshot(M.snap, REG_CAP);
	M.nsnap = n;
	M.nhot = 0;
	memset(M.in_hot, 0, REG_CAP);
	for (int i = 0; i < n; i++) {
		M.pos[M.snap[i].idx] = i;
		add_hot(M.snap[i].idx);
	}
	M.have_snap = 1;
	M.st.snapshots++;
	return 1;
}

/* The cold threads' part of the tick (idle skip): the CPU the process gained since the
 * previous tick, less what the threads read in pass 1 (read_ns) and the sampler used, is
 * what the threads not read used. A full tick (every thread read) starts the count over;
 * past MACH_WAKE_NS + ncpu x pass_ns (pass 1's duration) MACH_WAKE_READS cold threads are
 * read, in turn: those that ran go to M.tg from nwant on and are read every tick again,
 * and their CPU comes off the count; once every cold thread was read it starts over (the
 * rest was threads that exited). Returns the new nwant. */
static int wake_check(int full, uint64_t read_ns, uint64_t pass_ns, int nwant, int *nagain)
{
	uint64_t proc, self = sb_thread_cpu_ns(), found = 0;
	int n = 0;

	if (sb_process_cpu_ns(&proc) != 0)
		proc = M.proc_cpu_last + MACH_WAKE_NS + 1; /* unknown: read them */
	int64_t gained = (int64_t)(proc - M.proc_cpu_last) - (int64_t)(self - M.self_cpu_last) -
			 (int64_t)read_ns;
	M.proc_cpu_last = proc;
	M.self_cpu_last = self;
	M.unexplained_ns = full ? 0 : M.unexplained_ns + gained - (int64_t)(M.interval_ns / MACH_WAKE_LEAK);
	if (M.unexplained_ns < 0)
		M.unexplained_ns = 0;
	if (full)
		M.wake_read = 0;
	if (M.ncold == 0)
		M.unexplained_ns = 0; /* no thread it could be */
	if (M.unexplained_ns <= (int64_t)(MACH_WAKE_NS + (uint64_t)M.ncpu * pass_ns))
		return nwant;
	M.st.wake_scans++;
	for (; n < MACH_WAKE_READS && n < M.ncold; n++)
		M.scratch[n] = M.cold[(M.wake_next + n) % M.ncold];
	M.wake_next = (M.wake_next + n) % M.ncold;
	nwant = choose_targets(M.scratch, n, nwant, nagain, &found);
	for (int k = 0; k < n; k++)
		if (!M.ts[M.scratch[k]].cold)
			add_hot(M.scratch[k]);
	M.unexplained_ns -= (int64_t)found;
	M.wake_read += n;
	if (M.wake_read >= M.ncold) { /* every one read: the rest is not theirs */
		M.unexplained_ns = 0;
		M.wake_read = 0;
	}
	return nwant;
}

/* Drops from M.hot the threads that exited or went cold in pass 1. */
static void keep_hot(void)
{
	int k = 0;

	for (int i = 0; i < M.nhot; i++) {
		uint32_t idx = M.hot[i];
		if (M.pos[idx] >= 0 && !(M.ts[idx].cold && M.ts[idx].gen == M.snap[M.pos[idx]].gen))
			M.hot[k++] = idx;
		else
			M.in_hot[idx] = 0;
	}
	M.nhot = k;
}

/* Pass 2: requests the stop of every target M.tg[0..nwant) at once, and keeps in M.tg
 * those whose request is pending, each with its deadline. Returns how many. */
static int request_stops(int nwant)
{
	int npend = 0;

	for (int i = 0; i < nwant; i++) {
		struct mach_target *g = &M.tg[i];

		struct mach_tstate *ts = &M.ts[g->e->idx];
		int r = tc_request(&g->t);

		if (r == TC_PENDING) {
			ts->signal_cpu = g->cpu_ns;
			ts->rearmed = 0;
		} else if (r == TC_BUSY && !ts->rearmed && g->cpu_ns == ts->signal_cpu) {
			/* Its signal is still undelivered and it has not run since: it waits
			 * for a CPU (8 threads on 2 CPUs). Skipping it let it take the CPU,
			 * serve the stale signal with no request and run a whole slice while
			 * the next targets queued behind it timed out: with 8 threads a run
			 * could settle with 3 threads timing out every tick (rate 0.63 in
			 * one run of 8 before d6cc39b). Once only: one that still does not come may block the signal
			 * while it sleeps, and would cost a timeout every tick. */
			r = tc_rearm(&g->t);
			ts->rearmed = 1;
			M.st.rearms++;
		}
		switch (r) {
		case TC_PENDING:
			g->t.deadline_ns = g->t.req_ns + TC_TIMEOUT_NS;
			M.tg[npend++] = *g;
			break;
		case TC_GONE:
			M.st.threads_skipped++;
			break;
		default: /* TC_BUSY, TC_ERROR: an earlier stop is still undelivered */
			M.st.timeouts++;
			break;
		}
	}
	return npend;
}

/* One tick's collection: the targets pending in M.tg[0..npend), the walked ones held
 * parked in M.done[nresumed..ndone) (batch policy), and the clocks that close the batch. */
struct collect {
	int npend;
	int release_early; /* resume each target right after its walk */
	int my_cpu;        /* the sampler's CPU, or -1 */
	int ndone, nresumed;
	uint64_t progress_ns; /* the latest park */
	uint64_t close_ns;    /* the batch closes (UINT64_MAX: never) */
};

/* Polls every pending target once: walks those parked (resuming each at once in an
 * early tick, else holding it in M.done), defers those past their deadline, and drops
 * both and the gone from M.tg. Lowers *next_deadline to the nearest pending deadline, and
 * clears *may_spin when a pending target was last seen on the sampler's CPU. */
static void poll_pending(struct collect *c, uint64_t now, uint64_t *next_deadline,
			 int *may_spin)
{
	for (int i = 0; i < c->npend;) {
		struct mach_target *g = &M.tg[i];
		int r = tc_poll(&g->t);

		if (r == TC_PENDING && now >= g->t.deadline_ns)
			r = defer_target(g);
		if (r == TC_PARKED) {
			walk_parked(g);
			/* Progress is when it parked, not when we walked it: in a batch
			 * tick the sampler sleeps through the parks, and timing the
			 * stall from its own wake-up held every straggler tick's
			 * batch for a second stall period (windows ~500 us instead of
			 * ~300 us in those ticks before c6eaf57). */
			uint64_t parked = g->ok && g->parked_ns <= now ? g->parked_ns : now;
			if (parked > c->progress_ns)
				c->progress_ns = parked;
			if (c->release_early) {
				resume_parked(g);
				push_sample(g);
			} else {
				M.done[c->ndone++] = *g;
			}
		} else if (r == TC_GONE || r == TC_ERROR) {
			M.st.threads_skipped++;
		}
		if (r != TC_PENDING) {
			M.tg[i] = M.tg[--c->npend];
			continue;
		}
		int cpu = tc_park_cpu(g->t.park);
		if (cpu < 0 || cpu == c->my_cpu)
			*may_spin = 0;
		if (g->t.deadline_ns < *next_deadline)
			*next_deadline = g->t.deadline_ns;
		i++;
	}
}

/* Batch policy: only the last park wakes the sampler in a batch tick, so look at when the
 * latest park happened every MACH_BATCH_STALL_NS, walked threads or not. When nothing
 * parked for that long (or the batch closes), the walked ones are resumed. Lowers
 * *next_deadline to the next look. Returns 1 when the rest are deferred at once (their
 * deadlines set to now: poll again), else 0. */
static int batch_stall(struct collect *c, uint64_t now, uint64_t *next_deadline)
{
	uint64_t last = tc_last_park_ns();
	if (last > c->progress_ns)
		c->progress_ns = last;
	uint64_t check = c->progress_ns + MACH_BATCH_STALL_NS;
	if (check > c->close_ns)
		check = c->close_ns;
	if (now >= check) {
		/* The rest wait for a CPU: defer them all (next pass) rather
		 * than keep this tick open for them. */
		release_batch(c->nresumed, c->ndone);
		c->nresumed = c->ndone;
		if (M.defer) {
			for (int i = 0; i < c->npend; i++)
				M.tg[i].t.deadline_ns = now;
			return 1;
		}
		c->progress_ns = now;
		check = now + MACH_BATCH_STALL_NS;
	}
	if (check < *next_deadline)
		*next_deadline = check;
	return 0;
}

/* Collect: walk each target as soon as it parks. Early policy: resume it right after
 * its walk; with more busy targets than CPUs, the ones not parked when the batch
 * would close are deferred (their deadline is the close). Batch policy: the walked
 * ones stay parked until every target has parked or the batch closes. When nothing parked for MACH_BATCH_STALL_NS the batch is released
 * anyway, so one straggler (signal blocked, CPU taken by another process) does not
 * keep everyone stopped for 2 ms. The sampler spins for a park instead of sleeping
 * only in early ticks and while no pending target was last seen on its own CPU:
 * spinning there would keep that target from running to park. */
static void collect_parks(struct collect *c)
{
	while (c->npend > 0) {
		uint32_t bell = tc_doorbell();
		uint64_t now = sb_now_ns();
		uint64_t next_deadline = UINT64_MAX;
		int may_spin = c->release_early && c->my_cpu >= 0;

		poll_pending(c, now, &next_deadline, &may_spin);
		if (c->npend == 0)
			break;
		if (!c->release_early && batch_stall(c, now, &next_deadline))
			continue;
		tc_wait_spin(bell, next_deadline, may_spin);
	}
}

/* One tick: choose the targets (pass 1), peek again those running, pick the release
 * policy from the busy ones, request every stop (pass 2), collect the parks, and resume
 * every parked thread before the samples are pushed. Returns 1 for a steady tick (no
 * first sample, no cold thread read, no whole snapshot), else 0. */
static int tick(void)
{
	M.tick_ns = sb_now_ns();
	M.tick_seq++;
	M.tick_times[M.tick_seq % MACH_TICK_RING] = M.tick_ns;
	int busy = 0, nagain = 0, snapshot = refresh_snapshot();
	int full = snapshot || !M.cold_on;
	uint64_t scans = M.st.wake_scans;
	M.firsts = 0;
	uint64_t read_ns = 0;

	/* pass 1 counts the threads that ran, which picks the release policy before the
	 * first request */
	int nwant = choose_targets(M.hot, M.nhot, 0, &nagain, &read_ns);
	keep_hot();
	if (M.cold_on)
		nwant = wake_check(full, read_ns, sb_now_ns() - M.tick_ns, nwant, &nagain);
	settle_departed(0);
	if (nagain > 0)
		nwant = peek_retry(nwant, nagain);
	for (int i = 0; i < nwant; i++)
		if (M.tg[i].cpu_ns - M.ts[M.tg[i].e->idx].last_cpu > MACH_BUSY_CPU_NS)
			busy++;
	int release_early = M.release_mode == MACH_RELEASE_EARLY ||
			    M.release_mode == MACH_RELEASE_AUTO ||
			    (M.release_mode == MACH_RELEASE_TICK && busy <= M.ncpu);
	/* an early tick with more busy targets than CPUs defers its stragglers when the
	 * batch would have closed */
	int close_early = M.release_mode == MACH_RELEASE_AUTO && busy > M.ncpu;
	struct collect c = { .release_early = release_early };
	c.my_cpu = tc_begin_tick(!release_early, M.cfg.idle_skip);

	c.npend = request_stops(nwant);
	c.progress_ns = sb_now_ns();
	c.close_ns = M.defer && M.batch_open_ns ? c.progress_ns + M.batch_open_ns : UINT64_MAX;
	if (close_early)
		for (int i = 0; i < c.npend; i++)
			if (M.tg[i].t.deadline_ns > c.close_ns)
				M.tg[i].t.deadline_ns = c.close_ns;
	collect_parks(&c);
	/* Every parked thread is resumed here, before anything else (pushes) happens. */
	release_batch(c.nresumed, c.ndone);
	for (int i = 0; i < c.ndone; i++)
		push_sample(&M.done[i]);
	free_exited(snapshot);
	return !snapshot && M.firsts == 0 && M.st.wake_scans == scans;
}

static void sleep_until(uint64_t deadline)
{
	while (atomic_load_explicit(&M.running, memory_order_relaxed)) {
		uint64_t now = sb_now_ns();
		if (now >= deadline)
			return;
		uint64_t until = deadline - now > MACH_SLEEP_SLICE_NS ? now + MACH_SLEEP_SLICE_NS
								      : deadline;
		plat_sleep_until_ns(until);
	}
}

/* The time to the next tick: the period, or with jitter a draw uniform in [0.5, 1.5) x the
 * period (mean: the period), so that no sample instant keeps a fixed phase against work
 * that repeats in step with the clock (workloads/alias.c). */
static uint64_t next_interval(void)
{
	if (!M.jitter)
		return M.interval_ns;
	M.rng ^= M.rng << 13;
	M.rng ^= M.rng >> 7;
	M.rng ^= M.rng << 17;
	double u = (double)(M.rng >> 11) / 9007199254740992.0; /* [0, 1) */
	return (uint64_t)((double)M.interval_ns * (0.5 + u));
}

static void *sampler_main(void *arg)
{
	(void)arg;
	M.tid = sb_gettid();
	if (M.cfg.rt_priority) {
		struct sched_param sp = { .sched_priority = MACH_RT_PRIORITY };
		if (pthread_setschedparam(pthread_self(), SCHED_FIFO, &sp) == 0)
			M.st.sched_fifo_priority = MACH_RT_PRIORITY;
	}

	uint64_t next = M.start_ns + next_interval();
	while (atomic_load_explicit(&M.running, memory_order_relaxed)) {
		sleep_until(next);
		if (!atomic_load_explicit(&M.running, memory_order_relaxed))
			break;
		uint64_t c0 = sb_thread_cpu_ns();
		int steady = tick();
		uint64_t used = sb_thread_cpu_ns() - c0;
		M.st.tick_cpu_hist[sb_pause_bucket(used)]++;
		M.st.ticks_steady += steady;
		M.st.tick_cpu_steady_sum_ns += steady ? used : 0;
		M.st.ticks_done++;
		/* Behind (a tick took longer than the interval, or we were not scheduled):
		 * skip the ticks already missed instead of firing them back to back. */
		next += next_interval();
		uint64_t now = sb_now_ns();
		if (next < now)
			next = now + next_interval();
	}
	M.st.sampler_cpu_ns = sb_thread_cpu_ns();
	return NULL;
}

/* The q-quantile of the ticks' CPU (the low end of its bucket), 0 with no tick. */
static uint64_t tick_cpu_quantile(double q)
{
	uint64_t seen = 0, want = (uint64_t)(q * (double)M.st.ticks_done);

	for (unsigned i = 0; i < SB_PAUSE_BUCKETS && M.st.ticks_done; i++) {
		seen += M.st.tick_cpu_hist[i];
		if (seen > want)
			return sb_pause_bucket_lo(i);
	}
	return 0;
}

static void free_state(void)
{
	/* entries never tracked are zero: gen 0 names no thread (generations start at 1) */
	for (uint32_t i = 0; M.ts && i < M.ts_high; i++)
		if (M.ts[i].gen && M.ts[i].peek_fd >= 0)
			close(M.ts[i].peek_fd);
	M.ts_high = 0;
	M.ts_populated = 0;
	free(M.snap);
	free(M.hot);
	free(M.pos);
	free(M.in_hot);
	free(M.changed);
	free(M.exited);
	free(M.scratch);
	free(M.cold);
	free(M.deferred);
	M.deferred = NULL;
	free(M.cold_pos);
	M.cold_pos = NULL;
	M.ncold = M.wake_next = M.wake_read = 0;
	M.hot = M.scratch = M.changed = M.exited = M.cold = NULL;
	M.pos = NULL;
	M.in_hot = NULL;
	M.nsnap = M.nhot = M.nexited = 0;
	M.have_snap = 0;
	free(M.tg);
	free(M.done);
	free(M.ts);
	free(M.stacks);
	free(M.short_stacks);
	free(M.peek_stack);
	M.peek_stack = NULL;
	M.snap = NULL;
	M.tg = NULL;
	M.done = NULL;
	M.ts = NULL;
	M.stacks = M.short_stacks = NULL;
}

/* Starts the sampler thread on the calling process. Registers the calling (main) thread;
 * every other thread registers itself at creation. All memory the ticks use is allocated
 * here. Returns 0 or -1 with errno. */
static int mach_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	int err;

	if (M.started) {
		errno = EBUSY;
		return -1;
	}
	if (!cfg || !sink || !(cfg->hz > 0) || cfg->hz > 1e6) {
		errno = EINVAL;
		return -1;
	}
	uint64_t cpu0 = sb_thread_cpu_ns();
	memset(&M.st, 0, sizeof(M.st));
	M.cfg = *cfg;
	M.sink = sink;
	/* SB_MACH_RELEASE=early|batch|tick forces one policy (for measurements); default auto. */
	const char *rel = getenv("SB_MACH_RELEASE");
	M.release_mode = rel && !strcmp(rel, "early")   ? MACH_RELEASE_EARLY
			 : rel && !strcmp(rel, "batch") ? MACH_RELEASE_BATCH
			 : rel && !strcmp(rel, "tick")  ? MACH_RELEASE_TICK
							: MACH_RELEASE_AUTO;
	/* SB_MACH_PEEK=0 signals blocked threads too (for A/B measurements); default on. */
	const char *peek = getenv("SB_MACH_PEEK");
	M.peek = !(peek && !strcmp(peek, "0"));
	/* SB_MACH_DEFER=0 gives up on a target at its deadline instead of deferring it, and a
	 * stalled batch keeps waiting for its stragglers (A/B measurements); default on. */
	const char *defer = getenv("SB_MACH_DEFER");
	M.defer = !(defer && !strcmp(defer, "0"));
	/* SB_MACH_BATCH_OPEN_US=N holds a batch tick open at most N us (0: until the last
	 * park or a stall, for A/B measurements); default MACH_BATCH_OPEN_NS. */
	const char *open_us = getenv("SB_MACH_BATCH_OPEN_US");
	M.batch_open_ns = open_us && *open_us ? strtoull(open_us, NULL, 10) * 1000 : MACH_BATCH_OPEN_NS;
	/* SB_MACH_JITTER=1 draws every interval from [0.5, 1.5) x the period instead of keeping
	 * it fixed (A/B measurements against work in step with the clock); default off. */
	const char *jitter = getenv("SB_MACH_JITTER");
	M.jitter = jitter && !strcmp(jitter, "1");
	M.rng = (cfg->seed + 1) * 0x9E3779B97F4A7C15ull | 1;
	/* SB_MACH_SPIN_NS=N overrides the spin budget (0: never spin; for A/B measurements). */
	const char *spin = getenv("SB_MACH_SPIN_NS");
	if (spin && *spin)
		tc_set_spin_ns(strtoull(spin, NULL, 10));
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	M.ncpu = ncpu > 0 ? (int)ncpu : 1;
	M.interval_ns = (uint64_t)(1e9 / cfg->hz);
	M.max_depth = cfg->max_depth == 0 || cfg->max_depth > SB_MAX_FRAMES ? SB_MAX_FRAMES
									 : cfg->max_depth;
	M.snap = calloc(REG_CAP, sizeof(*M.snap));
	M.hot = calloc(REG_CAP, sizeof(*M.hot));
	M.pos = malloc(REG_CAP * sizeof(*M.pos));
	M.in_hot = calloc(REG_CAP, sizeof(*M.in_hot));
	M.changed = calloc(REG_CAP, sizeof(*M.changed));
	M.exited = calloc(REG_CAP, sizeof(*M.exited));
	M.scratch = calloc(REG_CAP, sizeof(*M.scratch));
	M.cold = calloc(REG_CAP, sizeof(*M.cold));
	M.deferred = calloc(REG_CAP, sizeof(*M.deferred));
	M.cold_pos = malloc(REG_CAP * sizeof(*M.cold_pos));
	M.tg = calloc(REG_CAP, sizeof(*M.tg));
	M.done = calloc(REG_CAP, sizeof(*M.done));
	M.ts = calloc(REG_CAP, sizeof(*M.ts));
	M.short_stacks = calloc((size_t)REG_CAP * MACH_SHORT_FRAMES, sizeof(*M.short_stacks));
	M.stacks = calloc((size_t)REG_CAP * M.max_depth, sizeof(*M.stacks));
	M.peek_stack = calloc(M.max_depth, sizeof(*M.peek_stack));
	if (!M.snap || !M.hot || !M.pos || !M.in_hot || !M.changed || !M.exited || !M.scratch || !M.cold ||
	    !M.cold_pos || !M.deferred || !M.tg ||
	    !M.done || !M.ts || !M.short_stacks || !M.stacks || !M.peek_stack) {
		err = ENOMEM;
		goto cleanup;
	}
	/* M.ts stays untouched (calloc'd zero pages) until track() takes an entry: 16,384
	 * entries of 250 bytes written here cost the run's start 1-2 ms of CPU */
	for (int i = 0; i < REG_CAP; i++)
		M.pos[i] = M.cold_pos[i] = -1;
	if (registry_add_self() != 0) {
		err = ENOSPC;
		goto cleanup;
	}
	if (tc_init() != 0) {
		err = errno;
		goto cleanup;
	}
	/* SB_MACH_COLD=0 reads every idle thread every tick (A/B measurements); default on. */
	const char *cold = getenv("SB_MACH_COLD");
	M.ndeferred = 0;
	M.unexplained_ns = 0;
	M.cold_on = cfg->idle_skip && !(cold && !strcmp(cold, "0")) &&
		    tc_process_clock_open() == 0;
	M.start_ns = sb_now_ns();
	atomic_store(&M.running, 1);
	err = registry_pthread_create_raw(&M.thread, NULL, sampler_main, NULL);
	if (err != 0) {
		atomic_store(&M.running, 0);
		tc_process_clock_close();
		tc_fini();
		goto cleanup;
	}
	M.setup_cpu_ns = sb_thread_cpu_ns() - cpu0;
	M.started = 1;
	return 0;

cleanup:
	free_state();
	errno = err;
	return -1;
}

/* Stops and joins the sampler thread. Every request is resolved inside a tick, so when
 * the join returns no thread is parked and none will park. Returns 0 or -1. */
static int mach_stop(void)
{
	if (!M.started) {
		errno = EINVAL;
		return -1;
	}
	uint64_t stop_ns = sb_now_ns(), cpu0 = sb_thread_cpu_ns();
	atomic_store(&M.running, 0);
	pthread_join(M.thread, NULL);
	/* Deferrals still outstanding: push the samples already taken, withdraw the rest. */
	settle_departed(1);
	/* Cold threads: their spans end with the last tick. */
	for (int i = 0; i < M.nsnap; i++)
		if (M.ts[M.snap[i].idx].gen == M.snap[i].gen)
			end_cold(M.snap[i].idx, M.tick_seq + 1);
	if (M.cold_on)
		tc_process_clock_close();
	M.st.ticks_planned = (stop_ns - M.start_ns) / M.interval_ns;
	M.st.tick_cpu_p50_ns = tick_cpu_quantile(0.5);
	M.st.tick_cpu_p99_ns = tick_cpu_quantile(0.99);
	M.st.eintr_caused = tc_eintr_caused();
	M.st.spin_releases = tc_spin_releases();
	M.st.spin_wakes = tc_spin_wakes();
	tc_fini();
	free_state();
	/* the sampler's claim: its thread, and what start() and stop() cost their caller */
	M.st.sampler_cpu_ns += M.setup_cpu_ns + (sb_thread_cpu_ns() - cpu0);
	M.started = 0;
	return 0;
}

static int mach_stats(struct sb_stat *out, int max)
{
	const struct sb_stat all[] = {
		{ "samples_captured", (double)M.st.samples_captured },
		{ "threads_skipped", (double)M.st.threads_skipped },
		{ "walk_errors", (double)M.st.walk_errors },
		{ "suspend_time_ns", (double)M.st.suspend_time_ns },
		{ "max_suspend_ns", (double)M.st.max_suspend_ns },
		{ "ticks_planned", (double)M.st.ticks_planned },
		{ "ticks_done", (double)M.st.ticks_done },
		{ "suspends_saved", (double)M.st.suspends_saved },
		{ "eintr_caused", (double)M.st.eintr_caused },
		{ "timeouts", (double)M.st.timeouts },
		{ "sched_fifo_priority", (double)M.st.sched_fifo_priority },
		{ "sampler_cpu_ns", (double)M.st.sampler_cpu_ns },
		{ "samples_dropped", (double)M.st.dropped },
		{ "spin_ns", (double)tc_spin_ns() },
		{ "spin_releases", (double)M.st.spin_releases },
		{ "spin_wakes", (double)M.st.spin_wakes },
		{ "peeks", (double)M.st.peeks },
		{ "peeks_void", (double)M.st.peeks_void },
		{ "peeks_running", (double)M.st.peeks_running },
		{ "peeks_no_chain", (double)M.st.peeks_no_chain },
		{ "peeks_retried", (double)M.st.peeks_retried },
		{ "peeks_not_tried", (double)M.st.peeks_not_tried },
		{ "rearms", (double)M.st.rearms },
		{ "peeks_reused", (double)M.st.peeks_reused },
		{ "peeks_no_fd", (double)M.st.peeks_no_fd },
		{ "deferred", (double)M.st.deferred },
		{ "deferred_owed", (double)M.st.deferred_owed },
		{ "deferred_void", (double)M.st.deferred_void },
		{ "deferred_lost", (double)M.st.deferred_lost },
		{ "deferred_peeked", (double)M.st.deferred_peeked },
		{ "targets", (double)M.st.targets },
		{ "snapshots", (double)M.st.snapshots },
		{ "cold_spans", (double)M.st.cold_spans },
		{ "cold_ticks", (double)M.st.cold_ticks },
		{ "wake_scans", (double)M.st.wake_scans },
		{ "firsts_waited", (double)M.st.firsts_waited },
		{ "threads_read", (double)M.st.threads_read },
		{ "tick_cpu_p50_ns", (double)M.st.tick_cpu_p50_ns },
		{ "tick_cpu_p99_ns", (double)M.st.tick_cpu_p99_ns },
		{ "period_jitter", (double)M.jitter },
		{ "ticks_steady", (double)M.st.ticks_steady },
		{ "tick_cpu_steady_ns", M.st.ticks_steady ? (double)M.st.tick_cpu_steady_sum_ns /
							     (double)M.st.ticks_steady : NAN },
	};
	int n = (int)ARRAY_SIZE(all);

	_Static_assert(ARRAY_SIZE(all) <= SB_MAX_STATS, "every stat fits in a run's row");
	if (n > max)
		n = max;
	memcpy(out, all, (size_t)n * sizeof(*out));
	return n;
}

static void mach_thread_start(int index)
{
	registry_set_self_slot(index);
}

const struct sampler sampler_mach = {
	.name = "mach",
	.description = "sampler thread: suspend, get registers, walk, resume each thread "
		       "(Darwin thread_suspend; Linux signal rendezvous)",
	.clock = SB_CLOCK_WALL,
	.caps = SB_CAPS_PER_THREAD_FULL,
	.flags = SB_SAMPLER_IN_PROCESS,
	.available = mach_available,
	.start = mach_start,
	.stop = mach_stop,
	.stats = mach_stats,
	.thread_start = mach_thread_start,
	.signal = tc_signo,
};
