/* perf.c - the kernel's own sampler, the reference row: perf_event_open(2) task-clock.
 *
 * Every workload thread opens a PERF_COUNT_SW_TASK_CLOCK event for itself from its
 * thread_start hook (pid 0, cpu -1, no inherit: each thread owns one ring buffer, so a
 * record's thread is known without trusting the tid table). The event is an hrtimer armed
 * only while the thread runs, so samples follow CPU time and are not capped by the tick.
 * The kernel walks the stack itself (frame pointers for user frames) and writes records
 * into a per-thread mmap ring; a reader thread drains every ring into the sink.
 *
 * stop_latency_ns and suspend_window_ns are NaN: the thread is never stopped beyond the
 * hrtimer interrupt that takes the sample, and perf reports no timing of that interrupt.
 * weight_ns is the sample period (ns of task clock). */
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "core/util.h"
#include "sampler/sampler.h"
#include "sampler/threads.h"

#define PERF_MAX_EVENTS 4096     /* thread events per run; churn beyond is counted */
#define PERF_RING_PAGES 128      /* data pages per thread (power of two): 512 KiB */
#define PERF_MIN_RING_PAGES 8
#define PERF_POLL_MS 10          /* reader drains every ring at least this often */
#define PERF_RECORD_MAX 65536    /* perf_event_header.size is 16 bits */

enum perf_ev_state { PE_EMPTY, PE_LIVE, PE_CLOSED };

struct perf_ev {
	_Atomic int state; /* enum perf_ev_state; LIVE is published after the rest */
	int fd;
	int index;         /* workload slot of the owning thread */
	pid_t tid;
	void *base;        /* mmap: one metadata page + data pages */
	size_t len;
};

static struct perf_ev perf_evs[PERF_MAX_EVENTS];
static _Atomic int perf_nevs;
static pthread_mutex_t perf_lock = PTHREAD_MUTEX_INITIALIZER; /* hooks vs stop() */
static int perf_running;          /* under perf_lock */
static int perf_epfd = -1, perf_wakefd = -1;
static pthread_t perf_reader;
static struct sb_sink *perf_sink;
static struct perf_event_attr perf_attr;
static size_t perf_ring_pages;
static uint32_t perf_max_depth;

static _Atomic uint64_t perf_records, perf_lost, perf_throttles, perf_unthrottles,
	perf_fds, perf_open_failures, perf_dropped, perf_kernel_samples, perf_truncated;
static int perf_kernel_excluded;

static int perf_open(struct perf_event_attr *attr, pid_t pid)
{
	return (int)syscall(SYS_perf_event_open, attr, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

/* The kernel refuses sample_max_stack above kernel.perf_event_max_stack. */
static uint32_t perf_stack_limit(uint32_t want)
{
	unsigned long sys = 127;
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_stack", "r");
	if (f) {
		if (fscanf(f, "%lu", &sys) != 1)
			sys = 127;
		fclose(f);
	}
	if (want == 0 || want > SB_MAX_FRAMES)
		want = SB_MAX_FRAMES;
	return want < sys ? want : (uint32_t)sys;
}

static void perf_fill_attr(struct perf_event_attr *a, double hz, uint32_t max_stack,
			   int exclude_kernel)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	/* A fixed period, not freq=1: the kernel maps freq to a fixed hrtimer period for
	 * software clocks anyway, and a fixed period is the weight of every sample. */
	a->sample_period = (uint64_t)(1e9 / hz);
	if (a->sample_period == 0)
		a->sample_period = 1;
	a->sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a->sample_max_stack = (uint16_t)max_stack;
	a->exclude_kernel = exclude_kernel;
	a->exclude_hv = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)(PERF_MIN_RING_PAGES * 4096 / 2);
}

/* Tries kernel+user first, then user only (perf_event_paranoid >= 2 without CAP_PERFMON
 * refuses kernel sampling). Returns the exclude_kernel that works, or -1 with errno. */
static int perf_probe(double hz, uint32_t max_stack)
{
	struct perf_event_attr a;
	for (int excl = 0; excl <= 1; excl++) {
		perf_fill_attr(&a, hz, max_stack, excl);
		a.disabled = 1;
		int fd = perf_open(&a, 0);
		if (fd >= 0) {
			close(fd);
			return excl;
		}
		if (errno != EACCES && errno != EPERM)
			return -1;
	}
	return -1;
}

static int perf_available(char *why, size_t len)
{
	if (perf_probe(100, perf_stack_limit(0)) >= 0)
		return 0;
	int e = errno;
	int paranoid = -99;
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	if (f) {
		if (fscanf(f, "%d", &paranoid) != 1)
			paranoid = -99;
		fclose(f);
	}
	if (e == EACCES || e == EPERM)
		snprintf(why, len,
			 "perf_event_open not permitted: %s (perf_event_paranoid=%d, no CAP_PERFMON)",
			 strerror(e), paranoid);
	else if (e == ENOENT || e == EOPNOTSUPP || e == ENOSYS)
		snprintf(why, len, "perf task-clock sampling not supported here: %s", strerror(e));
	else
		snprintf(why, len, "perf_event_open failed: %s", strerror(e));
	return -1;
}

/* Converts one PERF_RECORD_SAMPLE into a sink sample. Layout for our sample_type:
 * ip, pid/tid, time, period, nr, ips[nr] (the order of the PERF_SAMPLE_* bits). */
static void perf_sample(const struct perf_ev *ev, const uint64_t *p, size_t words)
{
	uint64_t frames[SB_MAX_FRAMES];
	uint32_t depth = 0, flags = 0;

	if (words < 5)
		return;
	uint32_t tid = (uint32_t)(p[1] >> 32);
	uint64_t time = p[2], period = p[3], nr = p[4];
	if (nr > words - 5)
		nr = words - 5;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t pc = p[5 + i];
		if (pc >= (uint64_t)PERF_CONTEXT_MAX) {
			if (pc == (uint64_t)PERF_CONTEXT_KERNEL)
				flags |= SB_SAMPLE_KERNEL;
			continue; /* context marker, not a frame */
		}
		if (depth == perf_max_depth) {
			flags |= SB_SAMPLE_TRUNCATED;
			break;
		}
		frames[depth++] = pc;
	}
	if (depth == 0) /* no callchain (e.g. user stack unreadable): keep the ip */
		frames[depth++] = p[0];
	/* The kernel stops at sample_max_stack without saying so: a full chain may be cut. */
	if (depth >= perf_max_depth)
		flags |= SB_SAMPLE_TRUNCATED;
	if (flags & SB_SAMPLE_TRUNCATED)
		atomic_fetch_add(&perf_truncated, 1);
	if (flags & SB_SAMPLE_KERNEL)
		atomic_fetch_add(&perf_kernel_samples, 1);

	struct sb_sample s = sample_unknown();
	s.time_ns = time;
	s.tid = (int32_t)tid;
	/* The ring belongs to one thread whose slot is known; the tid table may already have
	 * dropped the thread (it exited) or reused the slot (churn) when we drain. */
	s.thread_index = (tid == (uint32_t)ev->tid) ? ev->index : sb_index_of_tid((pid_t)tid);
	s.weight_ns = (double)period;
	s.flags = flags | SB_SAMPLE_RAN;
	atomic_fetch_add(&perf_records, 1);
	if (sink_push(perf_sink, &s, frames, depth) != 0)
		atomic_fetch_add(&perf_dropped, 1);
}

/* Drains one ring. Only the reader thread calls this. */
static void perf_drain(struct perf_ev *ev)
{
	static uint64_t rec[PERF_RECORD_MAX / 8];
	struct perf_event_mmap_page *meta = ev->base;
	const char *data = (const char *)ev->base + meta->data_offset;
	uint64_t size = meta->data_size;
	uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = meta->data_tail;

	while (tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		for (size_t i = 0; i < sizeof(h); i++)
			((char *)&h)[i] = data[(off + i) % size];
		if (h.size < sizeof(h) || tail + h.size > head)
			break;
		/* Records may wrap around the end of the ring: copy out. */
		uint64_t first = size - off < h.size ? size - off : h.size;
		memcpy(rec, data + off, first);
		memcpy((char *)rec + first, data, h.size - first);
		const uint64_t *body = rec + 1;
		size_t words = (h.size - sizeof(h)) / 8;

		switch (h.type) {
		case PERF_RECORD_SAMPLE:
			perf_sample(ev, body, words);
			break;
		case PERF_RECORD_LOST:
			if (words >= 2)
				atomic_fetch_add(&perf_lost, body[1]);
			break;
		case PERF_RECORD_THROTTLE:
			atomic_fetch_add(&perf_throttles, 1);
			break;
		case PERF_RECORD_UNTHROTTLE:
			atomic_fetch_add(&perf_unthrottles, 1);
			break;
		}
		tail += h.size;
	}
	__atomic_store_n(&meta->data_tail, tail, __ATOMIC_RELEASE);
}

static void perf_close(struct perf_ev *ev)
{
	perf_drain(ev);
	munmap(ev->base, ev->len);
	close(ev->fd); /* also leaves the epoll set */
	atomic_store(&ev->state, PE_CLOSED);
}

/* Drains every ring at least every PERF_POLL_MS and on watermark wakeups; closes a ring
 * once its thread exited (EPOLLHUP). On the stop request, disables, drains and closes
 * everything, so no sample is written after perf_stop() returns. */
static void *perf_reader_main(void *arg)
{
	(void)arg;
	struct epoll_event evs[64];
	for (;;) {
		int n = epoll_wait(perf_epfd, evs, 64, PERF_POLL_MS);
		int stopping = 0;
		for (int i = 0; i < n; i++) {
			if (evs[i].data.u32 == UINT32_MAX) {
				stopping = 1;
				continue;
			}
			struct perf_ev *ev = &perf_evs[evs[i].data.u32];
			if ((evs[i].events & EPOLLHUP) && atomic_load(&ev->state) == PE_LIVE)
				perf_close(ev);
		}
		int nevs = atomic_load(&perf_nevs);
		for (int i = 0; i < nevs; i++)
			if (atomic_load(&perf_evs[i].state) == PE_LIVE)
				perf_drain(&perf_evs[i]);
		if (stopping)
			break;
	}
	/* No hook adds events any more (perf_running is 0 under perf_lock). */
	int nevs = atomic_load(&perf_nevs);
	for (int i = 0; i < nevs; i++)
		if (atomic_load(&perf_evs[i].state) == PE_LIVE)
			ioctl(perf_evs[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (int i = 0; i < nevs; i++)
		if (atomic_load(&perf_evs[i].state) == PE_LIVE)
			perf_close(&perf_evs[i]);
	return NULL;
}

/* Opens the calling thread's event and hands its ring to the reader. Failures are
 * counted (open_failures), not fatal: the thread is then simply not sampled. */
static void perf_thread_start(int index)
{
	pthread_mutex_lock(&perf_lock);
	if (!perf_running)
		goto cleanup;
	int slot = atomic_load(&perf_nevs);
	if (slot >= PERF_MAX_EVENTS) {
		atomic_fetch_add(&perf_open_failures, 1);
		goto cleanup;
	}
	struct perf_ev *ev = &perf_evs[slot];
	struct perf_event_attr a = perf_attr;
	ev->fd = perf_open(&a, 0);
	if (ev->fd < 0) {
		atomic_fetch_add(&perf_open_failures, 1);
		goto cleanup;
	}
	/* Locked-memory limits (perf_event_mlock_kb) may refuse a big ring: halve. */
	size_t pages = perf_ring_pages;
	ev->base = MAP_FAILED;
	for (; pages >= PERF_MIN_RING_PAGES; pages /= 2) {
		ev->len = (pages + 1) * (size_t)sysconf(_SC_PAGESIZE);
		ev->base = mmap(NULL, ev->len, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
		if (ev->base != MAP_FAILED)
			break;
	}
	if (ev->base == MAP_FAILED) {
		close(ev->fd);
		atomic_fetch_add(&perf_open_failures, 1);
		goto cleanup;
	}
	ev->index = index;
	ev->tid = sb_gettid();
	atomic_store(&ev->state, PE_LIVE);
	atomic_store(&perf_nevs, slot + 1);
	struct epoll_event ee = { .events = EPOLLIN | EPOLLHUP, .data.u32 = (uint32_t)slot };
	if (epoll_ctl(perf_epfd, EPOLL_CTL_ADD, ev->fd, &ee) != 0) {
		/* Still drained by the periodic pass; only wakeups are lost. */
		atomic_fetch_add(&perf_open_failures, 1);
	}
	atomic_fetch_add(&perf_fds, 1);
cleanup:
	pthread_mutex_unlock(&perf_lock);
}

static int perf_start(const struct sb_config *cfg, struct sb_sink *sink)
{
	if (cfg->hz <= 0) {
		errno = EINVAL;
		return -1;
	}
	uint32_t max_stack = perf_stack_limit(cfg->max_depth);
	int excl = perf_probe(cfg->hz, max_stack);
	if (excl < 0)
		return -1;

	perf_sink = sink;
	perf_max_depth = max_stack;
	perf_kernel_excluded = excl;
	perf_fill_attr(&perf_attr, cfg->hz, max_stack, excl);
	/* Half a ring per wakeup at the requested rate is ~ pages*4096/2/1KiB samples: 128
	 * pages hold >250 samples of 127 frames, >0.25 s at 1 kHz, far above PERF_POLL_MS. */
	perf_ring_pages = PERF_RING_PAGES;
	perf_attr.wakeup_watermark = (uint32_t)(perf_ring_pages * 4096 / 4);
	atomic_store(&perf_nevs, 0);
	perf_records = perf_lost = perf_throttles = perf_unthrottles = 0;
	perf_fds = perf_open_failures = perf_dropped = perf_kernel_samples = perf_truncated = 0;

	perf_epfd = epoll_create1(EPOLL_CLOEXEC);
	if (perf_epfd < 0)
		return -1;
	perf_wakefd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (perf_wakefd < 0)
		goto fail;
	struct epoll_event ee = { .events = EPOLLIN, .data.u32 = UINT32_MAX };
	if (epoll_ctl(perf_epfd, EPOLL_CTL_ADD, perf_wakefd, &ee) != 0)
		goto fail;
	int e = pthread_create(&perf_reader, NULL, perf_reader_main, NULL);
	if (e != 0) {
		errno = e;
		goto fail;
	}
	pthread_mutex_lock(&perf_lock);
	perf_running = 1;
	pthread_mutex_unlock(&perf_lock);
	return 0;
fail:
	e = errno;
	if (perf_wakefd >= 0)
		close(perf_wakefd);
	close(perf_epfd);
	perf_wakefd = perf_epfd = -1;
	errno = e;
	return -1;
}

static int perf_stop(void)
{
	pthread_mutex_lock(&perf_lock);
	int was = perf_running;
	perf_running = 0;
	pthread_mutex_unlock(&perf_lock);
	if (!was)
		return 0;
	uint64_t one = 1;
	if (write(perf_wakefd, &one, sizeof(one)) != sizeof(one))
		return -1; /* cannot happen on a fresh eventfd; the reader would never stop */
	pthread_join(perf_reader, NULL);
	close(perf_wakefd);
	close(perf_epfd);
	perf_wakefd = perf_epfd = -1;
	return 0;
}

static int perf_stats(struct sb_stat *out, int max)
{

	struct sb_stat all[] = {
		{ "records", (double)atomic_load(&perf_records) },
		{ "lost", (double)atomic_load(&perf_lost) },
		{ "throttle_events", (double)atomic_load(&perf_throttles) },
		{ "unthrottle_events", (double)atomic_load(&perf_unthrottles) },
		{ "fds", (double)atomic_load(&perf_fds) },
		{ "open_failures", (double)atomic_load(&perf_open_failures) },
		{ "sink_dropped", (double)atomic_load(&perf_dropped) },
		{ "kernel_samples", (double)atomic_load(&perf_kernel_samples) },
		{ "truncated", (double)atomic_load(&perf_truncated) },
		{ "kernel_excluded", (double)perf_kernel_excluded },
		{ "ring_pages", (double)perf_ring_pages },
	};
	int n = 0;
	for (size_t i = 0; i < ARRAY_SIZE(all) && n < max; i++)
		out[n++] = all[i];
	return n;
}

const struct sampler sampler_perf = {
	.name = "perf",
	.description = "perf_event_open task-clock per thread, kernel callchains (reference)",
	.clock = SB_CLOCK_CPU,
	.caps = SB_CAP_THREAD_IDS | SB_CAP_WEIGHTS | SB_CAP_STACKS,
	.flags = 0,
	.available = perf_available,
	.start = perf_start,
	.stop = perf_stop,
	.stats = perf_stats,
	.thread_start = perf_thread_start,
};
