/* agent.c - libsampbench-agent.so: sampbench's in-process samplers, preloaded into an
 * unmodified program (LD_PRELOAD), the Linux form of DYLD_INSERT_LIBRARIES plus a
 * constructor.
 *
 * The constructor reads SAMPBENCH_SAMPLER, SAMPBENCH_HZ, SAMPBENCH_OUT and SAMPBENCH_PID
 * (docs/exec.md), maps the shared sink `sampbench exec` created, and starts the sampler
 * before main() runs. Threads the program creates later are followed: this file's
 * pthread_create() wraps the thread's start routine so that the new thread, from itself,
 * announces itself (sb_thread_begin: stack bounds, the sampler's thread_start hook) before
 * the program's code runs. The suspend sampler's registry (sampler/registry.c, built here
 * with its pthread_create renamed to sb_reg_pthread_create) sits under it, so both layers
 * see every thread. Each followed thread also writes its own CPU and monotonic clocks at
 * the start and the end of its start routine into a thread row of the shared memory: the
 * parent's exact per-thread truth (core/exec_shm.h). At exit() the sampler is stopped and
 * its counters and the program's memory map are written to the shared header; the
 * samples themselves were pushed into shared memory as they were taken, so a crash or a
 * SIGKILL loses none of them.
 *
 * What the program sees: nothing on stdout, errno preserved by every hook, its exit code
 * untouched, its own signal handlers honoured (taking the sampler's signal stops sampling
 * with one line on stderr). The agent does nothing at all unless SAMPBENCH_PID is this
 * process's pid: descendants inherit LD_PRELOAD but are not profiled. */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/exec_shm.h"
#include "core/util.h"
#include "platform/platform.h"
#include "sampler/plugin.h"
#include "sampler/sampler.h"
#include "sampler/thread_ctl.h"
#include "sampler/threads.h"

#define AGENT_PREFIX "sampbench-agent: "
/* The .so is built with -fvisibility=hidden: only the interposed functions are exported,
 * so none of sampbench's internal names can clash with the program's. */
#define SB_AGENT_EXPORT __attribute__((visibility("default")))
#define AGENT_MAX_TASKS 256 /* threads alive at start that we compare before/after */

int sb_reg_pthread_create(pthread_t *t, const pthread_attr_t *attr, void *(*fn)(void *),
			  void *arg);

/* The agent links the platform's sampler table (sampler/table_linux.c) and carries the
 * entries flagged SB_SAMPLER_IN_PROCESS; each one's signal hook names the signal it owns. */

/* The in-process sampler named name, or NULL. */
static const struct sampler *agent_builtin(const char *name)
{
	const struct sampler *s = sampler_find(name);

	return sampler_in_process(s) ? s : NULL;
}

/* Writes the names of the in-process samplers, comma-separated, into buf (len bytes). */
static void agent_builtin_names(char *buf, size_t len)
{
	size_t n = 0;

	buf[0] = 0;
	for (size_t i = 0; sampler_at(i) && n < len; i++)
		if (sampler_in_process(sampler_at(i)))
			n += snprintf(buf + n, len - n, "%s, ", sampler_at(i)->name);
}

static struct {
	struct sb_exec_shm *shm;
	size_t shm_len;
	struct sb_sink *sink;
	const struct sampler *s;
	int signo;
	pid_t pid;
	_Atomic int active;   /* sampling: threads are followed, stop() pending */
	_Atomic int tracking; /* this is the profiled process: threads write their rows */
	uint64_t first_row;   /* the first row this image claimed (rows below: an earlier image) */
	_Atomic int stopping; /* one stop only, whoever comes first */
	_Atomic int next_index;
	_Atomic uint64_t threads_followed;
	_Atomic uint64_t unblocks; /* masks that would have blocked the sampler's signal */
	pthread_key_t key;
	int key_ok;
	int out_fd; /* the sink's fd (SAMPBENCH_OUT=fd:N), close-on-exec until an execve */
	int fd;     /* the sink's fd whatever SAMPBENCH_OUT was: thread rows grow it */
} A = { .out_fd = -1, .fd = -1 };

/* Set while the agent itself calls into a sampler: its own sigaction()s are not the
 * program's. */
static __thread int agent_internal SB_TLS;
/* Set when the program (not the agent, not a sampler) changed the calling thread's
 * signal mask through pthread_sigmask or sigprocmask: its mask is then its own. */
static __thread int program_set_mask SB_TLS;
/* Set while the calling thread runs the sampler's thread_start/thread_stop hooks: a mask
 * they set is the sampler's. */
static __thread int in_thread_hook SB_TLS;

static void agent_msg(const char *fmt, const char *a, const char *b)
{
	char line[512];
	int n = snprintf(line, sizeof(line), AGENT_PREFIX);
	n += snprintf(line + n, sizeof(line) - (size_t)n, fmt, a, b);
	if (n > (int)sizeof(line) - 2)
		n = (int)sizeof(line) - 2;
	line[n++] = '\n';
	if (write(2, line, (size_t)n) < 0) {
		/* nothing left to tell anyone */
	}
}

static void agent_fail(const char *fmt, const char *a, const char *b)
{
	agent_msg(fmt, a, b);
	if (A.shm) {
		snprintf(A.shm->reason, sizeof(A.shm->reason), fmt, a, b);
		atomic_store(&A.shm->state, SB_EXEC_FAILED);
	}
}

/* Maps SAMPBENCH_OUT ("fd:N" from sampbench exec, or a path to a file of the same
 * layout) and checks its header. The fd stays open, close-on-exec: thread rows grow the
 * file through it, and an fd:N is handed to the image an execve of this process loads
 * (agent_before_exec). */
static int map_out(const char *out)
{
	struct stat st;
	int fd;

	if (strncmp(out, "fd:", 3) == 0) {
		char *end;
		long v = strtol(out + 3, &end, 10);
		fd = (*end || v < 0 || v > 1 << 20) ? -1 : (int)v;
	} else {
		fd = open(out, O_RDWR | O_CLOEXEC);
	}
	if (fd < 0 || fstat(fd, &st) != 0 || (size_t)st.st_size < sizeof(struct sb_exec_shm)) {
		agent_msg("cannot use SAMPBENCH_OUT=%s%s: not a sampbench exec sink", out, "");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m == MAP_FAILED || fcntl(fd, F_SETFD, FD_CLOEXEC) != 0) {
		agent_msg("cannot map SAMPBENCH_OUT=%s: %s", out, strerror(errno));
		if (m != MAP_FAILED)
			munmap(m, (size_t)st.st_size);
		close(fd);
		return -1;
	}
	A.fd = fd;
	if (strncmp(out, "fd:", 3) == 0)
		A.out_fd = fd;
	/* The file may be longer than total_size: thread rows an earlier image added. */
	struct sb_exec_shm *h = m;
	if (h->magic != SB_EXEC_MAGIC || h->version != SB_EXEC_VERSION ||
	    h->header_size != sizeof(*h) || h->total_size > (uint64_t)st.st_size ||
	    h->threads_offset < h->total_size) {
		agent_msg("SAMPBENCH_OUT=%s%s has another layout (sampbench and agent differ?)", out,
			  "");
		munmap(m, (size_t)st.st_size);
		return -1;
	}
	A.shm = h;
	A.shm_len = (size_t)st.st_size;
	A.sink = sb_exec_sink(m);
	return 0;
}

/* ---- thread rows: each thread's own clocks (core/exec_shm.h) ---- */

#define AGENT_MAX_CHUNKS 40 /* chunk k holds SB_EXEC_ROWS_BASE << k rows: no practical limit */

static struct sb_exec_thread *_Atomic agent_chunks[AGENT_MAX_CHUNKS];
static pthread_mutex_t agent_grow = PTHREAD_MUTEX_INITIALIZER;
/* The calling thread's row until it ends (initial-exec TLS: safe in its exit path). */
static __thread struct sb_exec_thread *agent_row SB_TLS;

static uint64_t clock_ns(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The chunk of row i; *first = its first row. */
static int chunk_of(uint64_t i, uint64_t *first)
{
	int k = 63 - __builtin_clzll(i / SB_EXEC_ROWS_BASE + 1);
	*first = (uint64_t)SB_EXEC_ROWS_BASE * ((1ull << k) - 1);
	return k;
}

/* Row i when its chunk is mapped in this image, else NULL. Lock-free. */
static struct sb_exec_thread *row_mapped(uint64_t i)
{
	uint64_t first;
	int k = chunk_of(i, &first);
	if (k >= AGENT_MAX_CHUNKS)
		return NULL;
	struct sb_exec_thread *c = atomic_load_explicit(&agent_chunks[k], memory_order_acquire);
	return c ? &c[i - first] : NULL;
}

/* Row i, mapping its chunk (and growing the file to hold it) on first use; NULL when the
 * file cannot grow. Takes the agent's own lock: never called in a thread's exit path. */
static struct sb_exec_thread *row_at(uint64_t i)
{
	struct sb_exec_thread *r = row_mapped(i);
	uint64_t first;
	int k = chunk_of(i, &first);

	if (r || k >= AGENT_MAX_CHUNKS || A.fd < 0)
		return r;
	pthread_mutex_lock(&agent_grow);
	struct sb_exec_thread *c = atomic_load_explicit(&agent_chunks[k], memory_order_relaxed);
	if (!c) {
		size_t len = ((size_t)SB_EXEC_ROWS_BASE << k) * sizeof(*c);
		off_t off = (off_t)(A.shm->threads_offset + first * sizeof(*c));
		struct stat st;
		/* grown, never shrunk: the parent reads whatever the file holds */
		if (fstat(A.fd, &st) == 0 &&
		    (st.st_size >= off + (off_t)len || ftruncate(A.fd, off + (off_t)len) == 0)) {
			void *m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, A.fd, off);
			if (m != MAP_FAILED) {
				c = m;
				atomic_store_explicit(&agent_chunks[k], c, memory_order_release);
			}
		}
	}
	pthread_mutex_unlock(&agent_grow);
	return c ? &c[i - first] : NULL;
}

/* The calling thread starts its row r (NULL: no row, counted lost). */
static void row_begin(struct sb_exec_thread *r, pid_t tid)
{
	if (!r) {
		atomic_fetch_add(&A.shm->threads_lost, 1);
		return;
	}
	r->tid = tid;
	memset(r->name, 0, sizeof(r->name)); /* row 0 is each image's: not an earlier one's */
	r->start_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	r->start_ns = clock_ns(CLOCK_MONOTONIC);
	atomic_store_explicit(&r->state, SB_EXEC_ROW_STARTED, memory_order_release);
	agent_row = r;
}

static int real_sigmask(int how, const sigset_t *set, sigset_t *old);

/* The calling thread, back from its start routine, blocks the sampler's signal behind
 * the agent (a raw rt_sigprocmask, say) while the sampler runs: its row says so, the
 * parent fails the run. */
static void row_check_blocked(struct sb_exec_thread *r)
{
	sigset_t cur;
	if (!r || !A.signo || !atomic_load_explicit(&A.active, memory_order_relaxed) ||
	    (r->flags & SB_EXEC_ROW_SIGBLOCKED) || real_sigmask(SIG_SETMASK, NULL, &cur) != 0 ||
	    sigismember(&cur, A.signo) != 1)
		return;
	r->flags |= SB_EXEC_ROW_SIGBLOCKED;
	atomic_fetch_add(&A.shm->sigblocked_threads, 1);
}

/* The calling thread ends its row: its start routine returned (check: look at its
 * signal mask too), or it called pthread_exit or was cancelled (the key's destructor; no
 * check: a cancellation acted on inside a signal handler, the sampler's included, unwinds
 * with that handler's mask). Its name is the one it has now, whatever it started with.
 * Async-signal-safe: clock_gettime, prctl(PR_GET_NAME), one sigprocmask, stores; no
 * lock. */
static void row_end(int check)
{
	struct sb_exec_thread *r = agent_row;
	if (!r)
		return;
	agent_row = NULL;
	r->end_cpu_ns = clock_ns(CLOCK_THREAD_CPUTIME_ID);
	r->end_ns = clock_ns(CLOCK_MONOTONIC);
	plat_thread_get_name(r->name, sizeof(r->name));
	if (check)
		row_check_blocked(r);
	atomic_store_explicit(&r->state, SB_EXEC_ROW_ENDED, memory_order_release);
}

/* Writes the decimal of v (v >= 0) at p; returns the end. No stdio: exit() may run in a
 * signal handler. */
static char *put_dec(char *p, long v)
{
	char d[24];
	int n = 0;
	do
		d[n++] = (char)('0' + v % 10);
	while ((v /= 10) > 0);
	while (n > 0)
		*p++ = d[--n];
	return p;
}

/* Thread tid's name now, from /proc/self/task/TID/comm, into r->name (left as it is when
 * unreadable). open, read, close: no allocation, no lock. */
static void row_read_comm(struct sb_exec_thread *r, pid_t tid)
{
	char path[64] = "/proc/self/task/", buf[SB_THREAD_NAME_LEN + 1];
	char *p = put_dec(path + strlen(path), (long)tid);
	memcpy(p, "/comm", sizeof("/comm"));
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	ssize_t k = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (k <= 0)
		return;
	buf[k] = 0;
	buf[strcspn(buf, "\n")] = 0;
	memset(r->name, 0, sizeof(r->name));
	memcpy(r->name, buf, strnlen(buf, sizeof(r->name) - 1));
}

/* exit(): the threads of this image still running (the caller included) are read through
 * their CPU clocks, which the kernel lets a thread read only inside its own process; a
 * dead thread's read fails. Their names are read from /proc. Rows of an earlier image
 * (before an execve) are left alone. */
static void rows_at_exit(void)
{
	uint64_t n = atomic_load(&A.shm->threads_claimed);
	for (uint64_t i = 0; i < n; i++) {
		if (i != 0 && i < A.first_row)
			continue;
		struct sb_exec_thread *r = row_mapped(i);
		if (!r || atomic_load_explicit(&r->state, memory_order_acquire) !=
				  SB_EXEC_ROW_STARTED || r->tid <= 0)
			continue;
		/* MAKE_THREAD_CPUCLOCK(tid, CPUCLOCK_SCHED), as pthread_getcpuclockid */
		clockid_t cid = (clockid_t)((~(unsigned)r->tid) << 3) | 6;
		r->exit_cpu_ns = clock_ns(cid);
		row_read_comm(r, r->tid);
	}
	struct rusage ru;
	if (getrusage(RUSAGE_CHILDREN, &ru) == 0) {
		A.shm->children_cpu_ns =
			(uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1000000000ull +
			(uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ull;
		atomic_store(&A.shm->children_valid, 1);
	}
}

/* Tids of this process now, into out (at most max). */
static int list_tasks(pid_t *out, int max)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *de;
	int n = 0;

	if (!d)
		return 0;
	while ((de = readdir(d)) && n < max)
		if (de->d_name[0] != '.')
			out[n++] = (pid_t)atoi(de->d_name);
	closedir(d);
	return n;
}

/* Threads the sampler started for itself are not the program's: tell the parent, whose
 * truth leaves them out. */
static void record_helpers(const pid_t *before, int nbefore)
{
	pid_t now[AGENT_MAX_TASKS];
	int n = list_tasks(now, AGENT_MAX_TASKS);

	for (int i = 0; i < n; i++) {
		int seen = 0;
		for (int j = 0; j < nbefore && !seen; j++)
			seen = now[i] == before[j];
		int k = atomic_load(&A.shm->nhelpers);
		if (!seen && k < SB_EXEC_MAX_HELPERS) {
			A.shm->helper_tids[k] = now[i];
			atomic_store(&A.shm->nhelpers, k + 1);
		}
	}
}

/* Copies /proc/self/maps into the header, so the parent can symbolize after we are gone.
 * maps_len is written last. */
static void save_maps(void)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	size_t n = 0;
	ssize_t k;

	if (fd < 0)
		return;
	while (n < SB_EXEC_MAPS_MAX &&
	       (k = read(fd, A.shm->maps + n, SB_EXEC_MAPS_MAX - n)) > 0)
		n += (size_t)k;
	close(fd);
	atomic_store(&A.shm->maps_len, (uint32_t)n);
}

/* The main thread's mask before the sampler started (read in the constructor, compared
 * there once start() and the main thread's thread_start hook ran). */
static sigset_t main_mask0;
static int main_mask_ok;

/* The thread's mask at the end of its start routine against the one it was created with
 * (mask0, read before the sampler's thread_start): a difference the program did not make
 * through the C library is the sampler's (docs/metrics.md, "Integrity"). */
static void check_mask(const sigset_t *mask0)
{
	sigset_t now;
	if (program_set_mask || real_sigmask(SIG_SETMASK, NULL, &now) != 0)
		return;
	for (int i = 1; i < NSIG; i++)
		if (sigismember(&now, i) != sigismember(mask0, i)) {
			atomic_fetch_add(&A.shm->mask_changed_threads, 1);
			return;
		}
}

/* Stops the sampler once and writes its counters. Safe to call from any thread. */
static void agent_stop(void)
{
	if (!atomic_load(&A.active) || atomic_exchange(&A.stopping, 1))
		return;
	agent_internal = 1;
	if (A.s->stop() != 0)
		agent_msg("the %s sampler failed to stop: %s", A.s->name, strerror(errno));
	atomic_store(&A.active, 0);
	A.shm->stop_ns = sb_now_ns();
	if (A.s->stats) {
		struct sb_stat st[SB_EXEC_MAX_STATS - 2];
		int n = A.s->stats(st, SB_EXEC_MAX_STATS - 2);
		for (int i = 0; i < n && i < SB_EXEC_MAX_STATS - 2; i++) {
			snprintf(A.shm->stats[i].name, sizeof(A.shm->stats[i].name), "%s",
				 st[i].name);
			A.shm->stats[i].value = st[i].value;
		}
		A.shm->nstats = n < SB_EXEC_MAX_STATS - 2 ? n : SB_EXEC_MAX_STATS - 2;
	}
	struct sb_exec_stat *t = &A.shm->stats[A.shm->nstats++];
	snprintf(t->name, sizeof(t->name), "agent_threads_followed");
	t->value = (double)atomic_load(&A.threads_followed);
	t = &A.shm->stats[A.shm->nstats++];
	snprintf(t->name, sizeof(t->name), "agent_signal_unblocks");
	t->value = (double)atomic_load(&A.unblocks);
	save_maps();
	atomic_store(&A.shm->state, SB_EXEC_STOPPED);
	agent_internal = 0;
}

/* atexit: runs in the process that called exit(), after main returned. */
static void agent_exit(void)
{
	int e = errno;
	/* No look at the caller's mask: exit() called from a signal handler (whose mask
	 * may be full) would pass for the program blocking the sampler's signal. */
	if (getpid() == A.pid) {
		agent_stop();
		if (atomic_load(&A.tracking))
			rows_at_exit();
	}
	errno = e;
}

/* The key's values: a followed thread (sampler hooks and row) or one with a row only. */
#define AGENT_KEY_HOOKED ((void *)1)
#define AGENT_KEY_ROW ((void *)2)

/* pthread_exit or cancellation of a thread the agent follows. */
static void agent_thread_gone(void *v)
{
	int e = errno;
	if (v == AGENT_KEY_HOOKED)
		sb_thread_end();
	row_end(0);
	errno = e;
}

/* A forked child of the program has none of the sampler's threads or timers and must not
 * stop anything at its exit. */
static void agent_atfork_child(void)
{
	atomic_store(&A.active, 0);
	atomic_store(&A.tracking, 0);
	atomic_store(&A.stopping, 1);
	agent_row = NULL;
}

__attribute__((constructor)) static void agent_init(void)
{
	const char *name = getenv("SAMPBENCH_SAMPLER");
	const char *out = getenv("SAMPBENCH_OUT");
	const char *hzs = getenv("SAMPBENCH_HZ");
	const char *pids = getenv("SAMPBENCH_PID");
	char why[SB_EXEC_REASON_LEN] = "", err[SB_EXEC_REASON_LEN];
	int e = errno;

	/* Descendants inherit the environment; only the process sampbench exec'd samples. */
	if (!name || !out || !pids || atoi(pids) != getpid())
		goto out;
	A.pid = getpid();
	if (map_out(out) != 0)
		goto out;
	if (A.shm->target_pid != A.pid) {
		agent_fail("SAMPBENCH_OUT belongs to process %s, not %s", pids, "this one");
		goto out;
	}

	char *end = NULL;
	double hz = hzs ? strtod(hzs, &end) : 100;
	if (hzs && (end == hzs || *end || !(hz > 0) || hz > 1e6)) {
		agent_fail("SAMPBENCH_HZ must be a frequency in (0, 1e6], got '%s'%s", hzs, "");
		goto out;
	}
	A.signo = 0;
	A.s = NULL;
	A.s = agent_builtin(name);
	if (A.s && A.s->signal)
		A.signo = A.s->signal();
	if (!A.s && plugin_is_path(name)) {
		A.s = plugin_load(name, err, sizeof(err));
		if (!A.s) {
			agent_fail("%s%s", err, "");
			goto out;
		}
	}
	if (!A.s) {
		char names[256];
		agent_builtin_names(names, sizeof(names));
		agent_fail("sampler '%s' cannot run in-process (in the agent: %splugins)", name,
			   names);
		goto out;
	}
	if (A.s->available && A.s->available(why, sizeof(why)) != 0) {
		agent_fail("the %s sampler is not available: %s", A.s->name, why);
		goto out;
	}
	/* The program may have inherited SIG_IGN (exec keeps it) or a handler from another
	 * preloaded library: that signal is not ours to take. */
	if (A.signo) {
		struct sigaction cur;
		if (sigaction(A.signo, NULL, &cur) == 0 && cur.sa_handler != SIG_DFL) {
			agent_fail("signal SIG%s is already taken in this program, the %s sampler "
				   "cannot use it",
				   sigabbrev_np(A.signo) ? sigabbrev_np(A.signo) : "RT", A.s->name);
			goto out;
		}
	}
	A.key_ok = pthread_key_create(&A.key, agent_thread_gone) == 0;
	/* resolved now (dlsym): a thread's exit path reads its mask through it */
	sigset_t cur;
	real_sigmask(SIG_SETMASK, NULL, &cur);
	pthread_atfork(NULL, NULL, agent_atfork_child);

	struct sb_config cfg = {
		.hz = hz,
		.threads = 1,
		.duration_s = 0,
		.seed = 1,
		.max_depth = SB_MAX_FRAMES,
		.idle_skip = false,
		.rt_priority = true,
		.target_pid = 0,
		.tmpdir = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
	};
	pid_t before[AGENT_MAX_TASKS];
	int nbefore = list_tasks(before, AGENT_MAX_TASKS);

	main_mask_ok = real_sigmask(SIG_SETMASK, NULL, &main_mask0) == 0;
	sb_thread_begin(-1);
	agent_internal = 1;
	A.shm->start_ns = sb_now_ns();
	if (A.s->start(&cfg, A.sink) != 0) {
		agent_internal = 0;
		agent_fail("the %s sampler failed to start: %s", A.s->name, strerror(errno));
		goto out;
	}
	agent_internal = 0;
	record_helpers(before, nbefore);
	sb_active_sampler = A.s;
	atomic_store(&A.next_index, 1);
	atomic_store(&A.active, 1);
	in_thread_hook = 1;
	sb_thread_begin(0); /* the main thread: its hooks, after start() like every thread */
	in_thread_hook = 0;
	/* The main thread's mask is compared here, before main(): at exit() it may be a
	 * handler's (exit called from one), not the program's. */
	if (main_mask_ok)
		check_mask(&main_mask0);
	/* Row 0 is the main thread's in every image: its CPU clock runs on across execve. */
	A.shm->sampler_signo = A.signo;
	A.first_row = atomic_load(&A.shm->threads_claimed);
	row_begin(row_at(0), A.pid);
	if (A.key_ok)
		pthread_setspecific(A.key, AGENT_KEY_ROW);
	atomic_store(&A.tracking, 1);
	atomic_store(&A.shm->state, SB_EXEC_STARTED);
	atexit(agent_exit);
out:
	errno = e;
}

/* ---- following threads ---- */

/* The new thread inherited its creator's mask; libraries that block every signal in
 * their workers (liblzma does) would hide them from a signal-driven sampler. */
static void keep_signal_open(void)
{
	sigset_t set;
	if (!A.signo)
		return;
	if (real_sigmask(SIG_SETMASK, NULL, &set) == 0 && sigismember(&set, A.signo) == 1) {
		atomic_fetch_add(&A.unblocks, 1);
		sigemptyset(&set);
		sigaddset(&set, A.signo);
		real_sigmask(SIG_UNBLOCK, &set, NULL);
	}
}

struct agent_start {
	void *(*fn)(void *);
	void *arg;
};

static void *agent_trampoline(void *p)
{
	struct agent_start s = *(struct agent_start *)p;
	int e = errno;
	sigset_t mask0;

	free(p);
	sigemptyset(&mask0);
	int have_mask = real_sigmask(SIG_SETMASK, NULL, &mask0) == 0;
	void *key = NULL;
	if (atomic_load_explicit(&A.active, memory_order_acquire)) {
		keep_signal_open();
		int idx = atomic_fetch_add(&A.next_index, 1);
		in_thread_hook = 1;
		sb_thread_begin(idx < SB_MAX_THREADS ? idx : -1);
		in_thread_hook = 0;
		atomic_fetch_add(&A.threads_followed, 1);
		key = AGENT_KEY_HOOKED;
	}
	if (atomic_load_explicit(&A.tracking, memory_order_acquire)) {
		row_begin(row_at(atomic_fetch_add(&A.shm->threads_claimed, 1)), sb_gettid());
		key = key ? key : AGENT_KEY_ROW;
	}
	/* pthread_exit() and cancellation skip our return: the key's destructor runs the
	 * thread_stop hook and ends the row then. */
	if (A.key_ok && key)
		pthread_setspecific(A.key, key);
	errno = e;
	void *ret = s.fn(s.arg);
	e = errno;
	if (have_mask && key == AGENT_KEY_HOOKED && atomic_load(&A.active))
		check_mask(&mask0);
	if (A.key_ok && (key = pthread_getspecific(A.key)) != NULL) {
		pthread_setspecific(A.key, NULL);
		if (key == AGENT_KEY_HOOKED)
			sb_thread_end();
	}
	row_end(1);
	errno = e;
	return ret;
}

/* Every pthread_create of the program (and of its libraries) binds here first. */
SB_AGENT_EXPORT int pthread_create(pthread_t *restrict t, const pthread_attr_t *restrict attr,
		   void *(*fn)(void *), void *restrict arg)
{
	if (!atomic_load_explicit(&A.active, memory_order_acquire) &&
	    !atomic_load_explicit(&A.tracking, memory_order_acquire))
		return sb_reg_pthread_create(t, attr, fn, arg);
	struct agent_start *s = malloc(sizeof(*s));
	if (!s)
		return EAGAIN;
	s->fn = fn;
	s->arg = arg;
	int rc = sb_reg_pthread_create(t, attr, agent_trampoline, s);
	if (rc != 0)
		free(s);
	return rc;
}

/* ---- the program's signal handlers win ---- */

typedef int (*sigaction_fn)(int, const struct sigaction *, struct sigaction *);
typedef sighandler_t (*signal_fn)(int, sighandler_t);

static void *next_sym(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

/* The program installs a disposition for the sampler's signal: stop sampling first, so
 * the program's handler never sees a sampler's signal, and say so once. */
static void take_signal_back(int sig, const char *how)
{
	if (!atomic_load(&A.active) || agent_internal || !A.signo || sig != A.signo ||
	    getpid() != A.pid)
		return;
	int e = errno;
	agent_msg("the program installs its own SIG%s handler (%s), which the sampler needs: "
		  "sampling stopped here, the profile is partial",
		  sigabbrev_np(sig) ? sigabbrev_np(sig) : "signal", how);
	A.shm->signal_conflict = 1;
	snprintf(A.shm->reason, sizeof(A.shm->reason),
		 "the program took the sampler's signal: profile partial");
	agent_stop();
	errno = e;
}

SB_AGENT_EXPORT int sigaction(int sig, const struct sigaction *restrict act, struct sigaction *restrict old)
{
	static sigaction_fn real;
	if (!real)
		*(void **)&real = next_sym("sigaction");
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	if (act && act->sa_handler != SIG_DFL)
		take_signal_back(sig, "sigaction");
	return real(sig, act, old);
}

SB_AGENT_EXPORT sighandler_t signal(int sig, sighandler_t handler)
{
	static signal_fn real;
	if (!real)
		*(void **)&real = next_sym("signal");
	if (!real) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (handler != SIG_DFL)
		take_signal_back(sig, "signal");
	return real(sig, handler);
}

/* ---- the sampler's signal stays deliverable ----
 * Blocking it would not change what the program does, only stop the sampler from seeing
 * the thread: the sampler's signal is removed from every mask the program sets that would
 * block it, and counted (stat agent_signal_unblocks). Not where it is blocked already: in
 * its own handler the kernel blocks it, and code there that restores a saved mask must
 * keep it blocked. libprofiler's handler unwinds with libunwind, which saves and restores
 * the mask; unblocking it there re-entered the handler, which waited forever for the
 * spinlock its outer call held (exec --sampler gperftools hung every thread). */

typedef int (*sigmask_fn)(int, const sigset_t *, sigset_t *);

static int real_sigmask(int how, const sigset_t *set, sigset_t *old)
{
	static sigmask_fn real;
	if (!real)
		*(void **)&real = next_sym("pthread_sigmask");
	return real ? real(how, set, old) : ENOSYS;
}

/* set, without the sampler's signal when it would newly block it; set itself when
 * unchanged. */
static const sigset_t *filter_mask(int how, const sigset_t *set, sigset_t *copy)
{
	sigset_t now;

	if (!set || !A.signo || agent_internal || how == SIG_UNBLOCK ||
	    !atomic_load_explicit(&A.active, memory_order_relaxed) ||
	    sigismember(set, A.signo) != 1)
		return set;
	if (real_sigmask(SIG_BLOCK, NULL, &now) == 0 && sigismember(&now, A.signo) == 1)
		return set; /* blocked already: in its handler, or by a raw system call */
	*copy = *set;
	sigdelset(copy, A.signo);
	atomic_fetch_add_explicit(&A.unblocks, 1, memory_order_relaxed);
	return copy;
}

SB_AGENT_EXPORT int pthread_sigmask(int how, const sigset_t *restrict set,
				    sigset_t *restrict old)
{
	sigset_t copy;
	if (set && !agent_internal && !in_thread_hook)
		program_set_mask = 1;
	return real_sigmask(how, filter_mask(how, set, &copy), old);
}

SB_AGENT_EXPORT int sigprocmask(int how, const sigset_t *restrict set, sigset_t *restrict old)
{
	sigset_t copy;
	if (set && !agent_internal && !in_thread_hook)
		program_set_mask = 1;
	int rc = real_sigmask(how, filter_mask(how, set, &copy), old);
	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return 0;
}

/* ---- execve: the new image must survive the sampler, and is sampled in its turn ----
 * A process-wide setitimer survives execve while the handler does not: the next SIGPROF
 * would kill the new image (a wrapper such as `sh -c 'exec prog'`, env, nice). Before any
 * execve of the profiled process the sampler is stopped (timers disarmed), its signal's
 * pending instances discarded (SIG_IGN) and its disposition reset, and the sink's fd is
 * let through, so the agent in the new image (same pid, LD_PRELOAD and SAMPBENCH_* in
 * the environment it passes on) maps it and samples the program the wrapper started.
 * An execve that fails leaves sampling stopped. execl* (variadic) are not wrapped:
 * glibc's execl calls execve through its internal alias, which no preload sees. */

typedef int (*execve_fn)(const char *, char *const[], char *const[]);
typedef int (*execv_fn)(const char *, char *const[]);
typedef int (*fexecve_fn)(int, char *const[], char *const[]);

static void agent_before_exec(void)
{
	if (!A.shm || getpid() != A.pid)
		return;
	int e = errno;
	agent_stop();
	if (A.signo) {
		struct sigaction ign = { .sa_handler = SIG_IGN }, dfl = { .sa_handler = SIG_DFL };
		agent_internal = 1;
		sigaction(A.signo, &ign, NULL);
		sigaction(A.signo, &dfl, NULL);
		agent_internal = 0;
	}
	if (A.out_fd >= 0)
		fcntl(A.out_fd, F_SETFD, 0);
	errno = e;
}

/* The execve failed: the fd is the agent's again. */
static void agent_exec_failed(void)
{
	int e = errno;
	if (A.out_fd >= 0 && getpid() == A.pid)
		fcntl(A.out_fd, F_SETFD, FD_CLOEXEC);
	errno = e;
}

SB_AGENT_EXPORT int execve(const char *path, char *const argv[], char *const envp[])
{
	static execve_fn real;
	if (!real)
		*(void **)&real = next_sym("execve");
	agent_before_exec();
	int rc = real ? real(path, argv, envp) : (errno = ENOSYS, -1);
	agent_exec_failed();
	return rc;
}

SB_AGENT_EXPORT int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static execve_fn real;
	if (!real)
		*(void **)&real = next_sym("execvpe");
	agent_before_exec();
	int rc = real ? real(file, argv, envp) : (errno = ENOSYS, -1);
	agent_exec_failed();
	return rc;
}

SB_AGENT_EXPORT int fexecve(int fd, char *const argv[], char *const envp[])
{
	static fexecve_fn real;
	if (!real)
		*(void **)&real = next_sym("fexecve");
	agent_before_exec();
	int rc = real ? real(fd, argv, envp) : (errno = ENOSYS, -1);
	agent_exec_failed();
	return rc;
}

static int exec_path(const char *sym, const char *file, char *const argv[])
{
	execv_fn real;
	*(void **)&real = next_sym(sym);
	agent_before_exec();
	int rc = real ? real(file, argv) : (errno = ENOSYS, -1);
	agent_exec_failed();
	return rc;
}

SB_AGENT_EXPORT int execv(const char *path, char *const argv[])
{
	return exec_path("execv", path, argv);
}

SB_AGENT_EXPORT int execvp(const char *file, char *const argv[])
{
	return exec_path("execvp", file, argv);
}
