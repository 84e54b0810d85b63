/* exec_ext.c - `sampbench exec` from outside the program (see exec_ext.h).
 *
 * perf: frame-pointer callchains, timestamps on CLOCK_MONOTONIC, one ring per CPU drained
 * by the parent while it polls /proc. Preferred: a cpu-clock event per CPU for every task
 * (pid -1, the way `perf record -a` counts), keeping the program's samples by pid. Its
 * period runs on across threads, so a thread that lives 1 ms is sampled with probability
 * 1 ms / period, as CPU time is. The fallback, where system-wide events are not allowed
 * (perf_event_paranoid > 0 without CAP_PERFMON): task-clock on the child's pid with
 * inherit=1 and enable_on_exec=1, as `perf record CMD` does, where every new thread's
 * counter starts a full period from its first sample, so threads shorter than a period
 * are never sampled (stat perf_system_wide says which).
 *
 * Truth: /proc/PID/task/TID/schedstat's first field is the thread's sum_exec_runtime in
 * ns. A thread's last value is the last read before it exited: with a poll every few ms
 * a thread loses at most one poll interval plus one tick (the field is updated at ticks
 * and context switches). Where the agent runs, the rows each thread wrote from its own
 * clocks (exec_truth_row) replace those reads with the value at the thread's end. A
 * thread's name is read beside its CPU time at each poll (/proc/PID/task/TID/comm, kept
 * open as schedstat is), and the agent's row, read by the thread at its end, replaces
 * it. */
#include "harness/exec_ext.h"

#include <dirent.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <linux/perf_event.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "analysis/symbolize_linux.h"
#include "core/exec_shm.h"
#include "core/util.h"

#define EXEC_PERF_MAX_CPUS 256
#define EXEC_PERF_PAGES 256 /* data pages per CPU ring (power of two): 1 MiB */
#define EXEC_PERF_MAX_STACK 127
#define EXEC_PERF_REC_MAX 65536

struct exec_perf {
	pid_t pid;
	int ncpu;
	int fd[EXEC_PERF_MAX_CPUS];
	void *ring[EXEC_PERF_MAX_CPUS];
	size_t ring_len;
	uint64_t records, samples, lost, throttles, other_pid, dropped, truncated;
	int system_wide;
	unsigned char rec[EXEC_PERF_REC_MAX];
};

static void close_rings(struct exec_perf *p)
{
	for (int c = 0; c < p->ncpu; c++) {
		if (p->ring[c] != MAP_FAILED)
			munmap(p->ring[c], p->ring_len);
		if (p->fd[c] >= 0)
			close(p->fd[c]);
		p->ring[c] = MAP_FAILED;
		p->fd[c] = -1;
	}
}

/* Opens attr on every CPU for task (-1: every task) and maps each ring. Returns 0, or -1
 * with err and errno, every fd closed. */
static int open_rings(struct exec_perf *p, struct perf_event_attr *attr, pid_t task, char *err,
		      size_t errlen)
{
	for (int c = 0; c < p->ncpu; c++) {
		p->fd[c] = (int)syscall(SYS_perf_event_open, attr, task, c, -1, PERF_FLAG_FD_CLOEXEC);
		if (p->fd[c] < 0 && errno == ENODEV)
			continue; /* offline CPU */
		if (p->fd[c] < 0) {
			int e = errno;
			snprintf(err, errlen, "perf_event_open on %s %d cpu %d failed: %s%s",
				 task < 0 ? "every task, pid" : "pid", (int)(task < 0 ? p->pid : task),
				 c, strerror(e), e == EACCES || e == EPERM
					 ? " (root or kernel.perf_event_paranoid <= 1 needed)" : "");
			close_rings(p);
			errno = e;
			return -1;
		}
		p->ring[c] = mmap(NULL, p->ring_len, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd[c], 0);
		if (p->ring[c] == MAP_FAILED) {
			int e = errno;
			snprintf(err, errlen, "cannot map the perf ring of cpu %d: %s", c, strerror(e));
			close_rings(p);
			errno = e;
			return -1;
		}
	}
	return 0;
}

struct exec_perf *exec_perf_open(pid_t pid, double hz, char *err, size_t errlen)
{
	struct perf_event_attr a;
	struct exec_perf *p = calloc(1, sizeof(*p));
	long ncpu = sysconf(_SC_NPROCESSORS_CONF);
	size_t page = (size_t)sysconf(_SC_PAGESIZE);

	if (!p) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	p->pid = pid;
	p->ncpu = ncpu > 0 && ncpu <= EXEC_PERF_MAX_CPUS ? (int)ncpu : 1;
	for (int c = 0; c < p->ncpu; c++) {
		p->fd[c] = -1;
		p->ring[c] = MAP_FAILED;
	}
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.sample_period = (uint64_t)(1e9 / hz) ? (uint64_t)(1e9 / hz) : 1;
	a.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
			PERF_SAMPLE_CALLCHAIN;
	a.disabled = 1;
	a.enable_on_exec = 1;
	a.inherit = 1;
	a.exclude_hv = 1;
	/* Kernel time is sampled (task-clock counts it) but charged to the user frame that
	 * made the system call: frames stay comparable with the in-process samplers. */
	a.exclude_callchain_kernel = 1;
	a.sample_max_stack = EXEC_PERF_MAX_STACK;
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(EXEC_PERF_PAGES * page / 2);

	p->ring_len = (EXEC_PERF_PAGES + 1) * page;
	/* every task on each CPU, the program's samples kept by pid */
	struct perf_event_attr wide = a;
	wide.config = PERF_COUNT_SW_CPU_CLOCK;
	wide.inherit = 0;
	wide.enable_on_exec = 0;
	wide.disabled = 0;
	p->system_wide = 1;
	if (open_rings(p, &wide, -1, err, errlen) != 0) {
		if (errno != EACCES && errno != EPERM)
			goto fail;
		p->system_wide = 0;
		if (open_rings(p, &a, pid, err, errlen) != 0)
			goto fail;
	}
	return p;
fail:
	exec_perf_close(p);
	return NULL;
}

/* One PERF_RECORD_SAMPLE: pid, tid, time, period, nr, ips[nr] (PERF_SAMPLE_* bit order). */
static void perf_sample(struct exec_perf *p, struct sb_sink *sink, const unsigned char *r,
			size_t len)
{
	uint64_t pcs[SB_MAX_FRAMES];
	uint32_t pid, tid, depth = 0;
	uint64_t time, period, nr;
	size_t off = sizeof(struct perf_event_header);

	if (len < off + 32)
		return;
	memcpy(&pid, r + off, 4);
	memcpy(&tid, r + off + 4, 4);
	memcpy(&time, r + off + 8, 8);
	memcpy(&period, r + off + 16, 8);
	memcpy(&nr, r + off + 24, 8);
	off += 32;
	if (nr > (len - off) / 8)
		return;
	if ((pid_t)pid != p->pid) {
		p->other_pid++; /* another task on the CPU, or a child process of the program */
		return;
	}
	for (uint64_t i = 0; i < nr && depth < SB_MAX_FRAMES; i++) {
		uint64_t ip;
		memcpy(&ip, r + off + 8 * i, 8);
		if (ip >= (uint64_t)PERF_CONTEXT_MAX)
			continue; /* PERF_CONTEXT_USER and friends mark sections */
		pcs[depth++] = ip;
	}
	struct sb_sample s = sample_unknown();
	s.time_ns = time;
	s.tid = (int32_t)tid;
	s.weight_ns = (double)period;
	if (nr >= EXEC_PERF_MAX_STACK) {
		s.flags |= SB_SAMPLE_TRUNCATED;
		p->truncated++;
	}
	p->samples++;
	if (sink_push(sink, &s, pcs, depth) != 0)
		p->dropped++;
}

void exec_perf_drain(struct exec_perf *p, struct sb_sink *sink)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t dlen = p->ring_len - page;

	for (int c = 0; c < p->ncpu; c++) {
		if (p->ring[c] == MAP_FAILED)
			continue;
		struct perf_event_mmap_page *meta = p->ring[c];
		const unsigned char *data = (const unsigned char *)p->ring[c] + page;
		uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
		uint64_t tail = meta->data_tail;

		while (tail + sizeof(struct perf_event_header) <= head) {
			struct perf_event_header h;
			for (size_t k = 0; k < sizeof(h); k++)
				((unsigned char *)&h)[k] = data[(tail + k) % dlen];
			if (h.size < sizeof(h) || tail + h.size > head)
				break;
			for (size_t k = 0; k < h.size; k++)
				p->rec[k] = data[(tail + k) % dlen];
			p->records++;
			if (h.type == PERF_RECORD_SAMPLE) {
				perf_sample(p, sink, p->rec, h.size);
			} else if (h.type == PERF_RECORD_LOST) {
				uint64_t n;
				memcpy(&n, p->rec + sizeof(h) + 8, 8);
				p->lost += n;
			} else if (h.type == PERF_RECORD_THROTTLE) {
				p->throttles++;
			}
			tail += h.size;
		}
		__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
	}
}

int exec_perf_stats(const struct exec_perf *p, const char **names, double *values, int max)
{
	const char *n[] = { "records", "perf_samples", "lost", "throttle_events",
			    "other_process_samples", "sink_dropped_perf", "truncated", "cpus",
			    "perf_system_wide" };
	double v[] = { (double)p->records, (double)p->samples, (double)p->lost,
		       (double)p->throttles, (double)p->other_pid, (double)p->dropped,
		       (double)p->truncated, (double)p->ncpu, (double)p->system_wide };
	int k = 0;
	for (; k < max && k < (int)ARRAY_SIZE(n); k++) {
		names[k] = n[k];
		values[k] = v[k];
	}
	return k;
}

void exec_perf_close(struct exec_perf *p)
{
	if (!p)
		return;
	close_rings(p);
	free(p);
}

/* ---- truth ---- */

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

int exec_truth_init(struct exec_truth *tr, pid_t pid)
{
	char path[64];

	memset(tr, 0, sizeof(*tr));
	tr->pid = pid;
	snprintf(path, sizeof(path), "/proc/%d/schedstat", (int)pid);
	tr->from_stat = access(path, R_OK) != 0;
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	tr->stat_fd = open(path, O_RDONLY | O_CLOEXEC);
	return 0;
}

/* /proc/PID/task/TID/comm of tid, opened; -1 when it cannot be. */
static int open_comm(const struct exec_truth *tr, pid_t tid)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", (int)tr->pid, (int)tid);
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Reads t's name from its comm file into t->name (kept as it was when unreadable). */
static void read_comm(struct exec_tid *t)
{
	char buf[SB_THREAD_NAME_LEN + 1];
	ssize_t k = t->comm_fd >= 0 ? pread(t->comm_fd, buf, sizeof(buf) - 1, 0) : -1;
	if (k <= 0)
		return;
	buf[k] = 0;
	buf[strcspn(buf, "\n")] = 0;
	snprintf(t->name, sizeof(t->name), "%.*s", SB_THREAD_NAME_LEN - 1, buf);
}

static int open_tid(const struct exec_truth *tr, pid_t tid)
{
	char path[96];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/%s", (int)tr->pid, (int)tid,
		 tr->from_stat ? "stat" : "schedstat");
	return open(path, O_RDONLY | O_CLOEXEC);
}

/* Fields 14.. of a /proc stat text (utime, stime, cutime, cstime) in ns; -1 when it
 * cannot be parsed. */
static int stat_times(const char *buf, uint64_t ns[4])
{
	/* after the ")" that ends the name */
	const char *q = strrchr(buf, ')');
	unsigned long long v[4];
	if (!q || sscanf(q + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu %llu %llu",
			 &v[0], &v[1], &v[2], &v[3]) != 4)
		return -1;
	for (int i = 0; i < 4; i++)
		ns[i] = (uint64_t)((double)v[i] * 1e9 / (double)sysconf(_SC_CLK_TCK));
	return 0;
}

/* The thread's CPU time now, or -1 when it is gone. */
static int read_cpu(const struct exec_truth *tr, int fd, uint64_t *ns)
{
	char buf[1024];
	ssize_t k = pread(fd, buf, sizeof(buf) - 1, 0);
	if (k <= 0)
		return -1;
	buf[k] = 0;
	if (!tr->from_stat) {
		*ns = strtoull(buf, NULL, 10);
		return 0;
	}
	uint64_t t[4];
	if (stat_times(buf, t) != 0)
		return -1;
	*ns = t[0] + t[1];
	return 0;
}

static struct exec_tid *append_tid(struct exec_truth *tr, pid_t tid)
{
	if (tr->n == tr->cap) {
		size_t cap = tr->cap ? tr->cap * 2 : 256;
		struct exec_tid *t = realloc(tr->t, cap * sizeof(*t));
		if (!t)
			return NULL;
		tr->t = t;
		tr->cap = cap;
	}
	struct exec_tid *t = &tr->t[tr->n++];
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	t->fd = t->comm_fd = -1;
	return t;
}

static struct exec_tid *latest_tid(struct exec_truth *tr, pid_t tid)
{
	for (size_t i = tr->n; i-- > 0;)
		if (tr->t[i].tid == tid)
			return &tr->t[i];
	return NULL;
}

struct exec_tid *exec_truth_tid(struct exec_truth *tr, pid_t tid)
{
	struct exec_tid *t = latest_tid(tr, tid);
	return t ? t : append_tid(tr, tid);
}

/* A /proc entry and a row are the same thread when the row's life [start, end] meets the
 * entry's bounds (after_ns, gone_ns): two threads of one tid would need the tid space to
 * wrap in between. The row's times are the agent's hooks, which may run long after the
 * thread appeared in /proc (it waits for a CPU, a sanitizer's thread setup) and long
 * before it leaves: bounds from the polls that did not list it hold whatever the delays,
 * where a fixed slack around the polls that saw it did not (a TSan build on a loaded
 * host saw threads 90 ms before their rows began, and counted them twice). */
int exec_truth_row(struct exec_truth *tr, const struct sb_exec_thread *row)
{
	uint32_t state = atomic_load(&row->state);
	if (state < SB_EXEC_ROW_STARTED || row->tid <= 0)
		return 0;
	uint64_t end = state == SB_EXEC_ROW_ENDED ? row->end_ns : UINT64_MAX;
	struct exec_tid *t = NULL;
	for (size_t i = tr->n; i-- > 0 && !t;) {
		struct exec_tid *c = &tr->t[i];
		if (c->tid != row->tid)
			continue;
		/* main's row 0 is rewritten by each image of an execve chain: always its entry */
		uint64_t gone = c->gone_ns ? c->gone_ns : UINT64_MAX;
		if (row->tid == tr->pid ||
		    (!c->exact && c->after_ns <= end && row->start_ns <= gone))
			t = c;
	}
	if (!t) {
		if (!(t = append_tid(tr, row->tid)))
			return -1;
		t->after_ns = row->start_ns; /* a row of its own: its life is the row's */
		t->gone_ns = state == SB_EXEC_ROW_ENDED ? row->end_ns : 0;
	}
	uint64_t cpu = state == SB_EXEC_ROW_ENDED ? row->end_cpu_ns : 0;
	if (row->exit_cpu_ns > cpu)
		cpu = row->exit_cpu_ns;
	/* both are lower bounds of the thread's total: the later read wins */
	if (cpu > t->cpu_ns)
		t->cpu_ns = cpu;
	t->exact |= state == SB_EXEC_ROW_ENDED;
	if (!t->first_ns || row->start_ns < t->first_ns)
		t->first_ns = row->start_ns;
	if (state == SB_EXEC_ROW_ENDED && row->end_ns > t->last_ns)
		t->last_ns = row->end_ns;
	/* read by the thread at its end (or at exit()): later than any poll's */
	if (row->name[0])
		snprintf(t->name, sizeof(t->name), "%.*s", SB_THREAD_NAME_LEN - 1, row->name);
	return 0;
}

void exec_truth_poll(struct exec_truth *tr)
{
	char path[64];
	uint64_t now = mono_ns(), listed = tr->listed_ns;
	DIR *d;
	struct dirent *de;

	tr->polls++;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)tr->pid);
	d = opendir(path);
	if (d) {
		while ((de = readdir(d))) {
			if (de->d_name[0] == '.')
				continue;
			pid_t tid = (pid_t)atoi(de->d_name);
			struct exec_tid *t = latest_tid(tr, tid);
			/* seen and still followed; a gone tid seen again is a new thread */
			if (t && t->fd >= 0)
				continue;
			if (!t || t->first_ns != 0)
				t = append_tid(tr, tid);
			if (!t)
				break;
			t->fd = open_tid(tr, tid);
			t->comm_fd = t->fd >= 0 ? open_comm(tr, tid) : -1;
			t->first_ns = now;
			t->after_ns = listed; /* the previous listing did not have it */
			if (t->fd < 0)
				t->gone_ns = mono_ns();
		}
		closedir(d);
		tr->listed_ns = now;
	}
	for (size_t i = 0; i < tr->n; i++) {
		struct exec_tid *t = &tr->t[i];
		uint64_t ns;
		if (t->fd < 0)
			continue;
		if (read_cpu(tr, t->fd, &ns) != 0) {
			close(t->fd);
			t->fd = -1;
			if (t->comm_fd >= 0)
				close(t->comm_fd);
			t->comm_fd = -1;
			t->gone_ns = mono_ns();
			continue;
		}
		t->cpu_ns = ns;
		t->last_ns = now;
		read_comm(t);
	}
	char buf[1024];
	ssize_t k = tr->stat_fd >= 0 ? pread(tr->stat_fd, buf, sizeof(buf) - 1, 0) : -1;
	uint64_t times[4];
	if (k > 0) {
		buf[k] = 0;
		if (stat_times(buf, times) == 0)
			tr->children_ns = times[2] + times[3];
	}
}

void exec_truth_close(struct exec_truth *tr)
{
	for (size_t i = 0; i < tr->n; i++) {
		if (tr->t[i].fd >= 0)
			close(tr->t[i].fd);
		if (tr->t[i].comm_fd >= 0)
			close(tr->t[i].comm_fd);
		tr->t[i].fd = tr->t[i].comm_fd = -1;
	}
	if (tr->pid > 0 && tr->stat_fd >= 0) /* a zeroed, never started truth owns no fd */
		close(tr->stat_fd);
	tr->stat_fd = -1;
	free(tr->t);
	tr->t = NULL;
	tr->n = tr->cap = 0;
}

/* ---- symbolization ---- */

size_t exec_read_maps(pid_t pid, char *buf, size_t len)
{
	char path[64];
	size_t n = 0;
	ssize_t k;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	while (n < len && (k = read(fd, buf + n, len - n)) > 0)
		n += (size_t)k;
	close(fd);
	return n;
}

static const Dwfl_Callbacks maps_callbacks = {
	.find_elf = dwfl_linux_proc_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
};

int exec_symbolize(const char *maps, size_t mapslen, const uint64_t *frames, size_t n,
		   const uint64_t *leaves, size_t nleaves, struct sb_symbol **syms,
		   size_t *nsyms, struct sb_inline_frame **inl, size_t *ninl)
{
	struct sb_inline_frame chain[SB_INLINE_MAX_DEPTH];
	size_t k, cap = 0;
	int oom = 0;
	uint64_t *pcs = symbol_distinct_pcs(frames, n, &k);
	Dwfl *dwfl = NULL;

	*syms = NULL;
	*nsyms = 0;
	*inl = NULL;
	*ninl = 0;
	if (!pcs)
		return -1;
	*syms = calloc(k + 1, sizeof(**syms));
	if (!*syms) {
		free(pcs);
		return -1;
	}
	if (maps && mapslen > 0) {
		FILE *f = fmemopen((void *)maps, mapslen, "r");
		dwfl = f ? dwfl_begin(&maps_callbacks) : NULL;
		if (dwfl) {
			dwfl_report_begin(dwfl);
			if (dwfl_linux_proc_maps_report(dwfl, f) != 0) {
				dwfl_end(dwfl);
				dwfl = NULL;
			} else {
				dwfl_report_end(dwfl, NULL, NULL);
			}
		}
		if (f)
			fclose(f);
	}
	/* The vdso cannot be opened by path, but every process of this kernel maps the same
	 * image: PCs in the program's [vdso] are resolved at the same offset in ours. */
	unsigned long long vlo = 0, vhi = 0;
	const char *v = maps && mapslen ? memmem(maps, mapslen, "[vdso]", 6) : NULL;
	if (v) {
		while (v > maps && v[-1] != '\n')
			v--;
		if (sscanf(v, "%llx-%llx", &vlo, &vhi) != 2)
			vlo = vhi = 0;
	}
	uint64_t own_vdso = getauxval(AT_SYSINFO_EHDR);
	struct sb_symbolizer *self = NULL;
	for (size_t i = 0; i < k; i++) {
		struct sb_symbol *out = &(*syms)[i];
		symbolize_dwfl(dwfl, pcs[i], out);
		if (pcs[i] < vlo || pcs[i] >= vhi || !own_vdso) {
			int c = oom ? 0 : symbolize_dwfl_inlines(dwfl,
								 inline_lookup_pc(leaves, nleaves, pcs[i]),
								 chain, SB_INLINE_MAX_DEPTH);
			for (int j = 0; j < c; j++)
				chain[j].pc = pcs[i]; /* stored under the frame's PC */
			/* out of memory: the run keeps its names, without chains */
			if (c > 0 && inline_table_append(inl, ninl, &cap, chain, (size_t)c) < 0) {
				free(*inl);
				*inl = NULL;
				*ninl = 0;
				oom = 1;
			}
			continue;
		}
		if (!self)
			self = symbolizer_new();
		if (self)
			symbolize(self, own_vdso + (pcs[i] - vlo), out);
		out->pc = pcs[i];
		snprintf(out->module, sizeof(out->module), "[vdso]");
	}
	symbolizer_free(self);
	*nsyms = k;
	if (dwfl)
		dwfl_end(dwfl);
	free(pcs);
	return 0;
}
