/* exec_agent.c - exec's in-process mode: the LD_PRELOAD agent (agent/agent.c) runs the
 * sampler inside the program and pushes samples into a memfd sink created here, laid out
 * as core/exec_shm.h says. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/exec_shm.h"
#include "harness/exec_mode.h"
#include "platform/platform.h"
#include "sampler/plugin.h"

_Static_assert(SB_EXEC_MAX_STATS + 2 + 8 <= SB_RUN_MAX_STATS, "room for the agent's stats");

static int agent_prepare(struct exec_ctx *c)
{
	size_t hdr = (sizeof(struct sb_exec_shm) + 63) & ~(size_t)63;
	size_t sinkhdr = (sizeof(struct sb_sink) + 63) & ~(size_t)63;
	size_t len = hdr + sinkhdr + (size_t)EXEC_SAMPLE_CAP * sizeof(struct sb_sample) +
		     (size_t)EXEC_FRAME_CAP * sizeof(uint64_t);

	c->memfd = memfd_create("sampbench-exec", MFD_CLOEXEC);
	if (c->memfd < 0 || ftruncate(c->memfd, (off_t)len) != 0) {
		snprintf(c->err, sizeof(c->err), "cannot create the shared sink: %s", strerror(errno));
		return -1;
	}
	c->shm = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, c->memfd, 0);
	if (c->shm == MAP_FAILED) {
		c->shm = NULL;
		snprintf(c->err, sizeof(c->err), "cannot map the shared sink: %s", strerror(errno));
		return -1;
	}
	c->shm_len = len;
	struct sb_exec_shm *h = c->shm;
	h->magic = SB_EXEC_MAGIC;
	h->version = SB_EXEC_VERSION;
	h->header_size = sizeof(*h);
	h->total_size = len;
	long page = sysconf(_SC_PAGESIZE);
	h->threads_offset = (len + (size_t)page - 1) / (size_t)page * (size_t)page;
	atomic_init(&h->threads_claimed, 1); /* row 0: the main thread */
	h->sink_offset = hdr;
	h->samples_offset = hdr + sinkhdr;
	h->frames_offset = h->samples_offset + (size_t)EXEC_SAMPLE_CAP * sizeof(struct sb_sample);
	h->sample_cap = EXEC_SAMPLE_CAP;
	h->frame_cap = EXEC_FRAME_CAP;
	c->sink = sb_exec_sink(c->shm);
	c->sink->sample_cap = EXEC_SAMPLE_CAP;
	c->sink->frame_cap = EXEC_FRAME_CAP;
	atomic_init(&c->sink->nsamples, 0);
	atomic_init(&c->sink->nframes, 0);
	atomic_init(&c->sink->dropped, 0);
	return 0;
}

/* In the child: LD_PRELOAD the agent (in front of any the user set) and tell it where
 * the sink is. dup() gives an fd without FD_CLOEXEC that survives execve. */
static int agent_child(struct exec_ctx *c)
{
	char buf[PATH_MAX * 2], num[32];
	const char *old = getenv("LD_PRELOAD");
	int fd = dup(c->memfd);

	if (fd < 0)
		return -1;
	((struct sb_exec_shm *)c->shm)->target_pid = getpid();
	snprintf(buf, sizeof(buf), "%s%s%s", c->t->agent, old && *old ? ":" : "", old ? old : "");
	snprintf(num, sizeof(num), "fd:%d", fd);
	if (setenv("LD_PRELOAD", buf, 1) || setenv("SAMPBENCH_OUT", num, 1))
		return -1;
	const char *path = plugin_path(c->s);
	if (setenv("SAMPBENCH_SAMPLER", path ? path : c->s->name, 1))
		return -1;
	snprintf(num, sizeof(num), "%.17g", c->t->hz);
	if (setenv("SAMPBENCH_HZ", num, 1))
		return -1;
	snprintf(num, sizeof(num), "%d", (int)getpid());
	return setenv("SAMPBENCH_PID", num, 1);
}

static int agent_attach(struct exec_ctx *c)
{
	(void)c;
	return 0;
}

static void agent_poll(struct exec_ctx *c)
{
	(void)c;
}

/* The agent's thread rows into the truth: as many as it claimed and the file holds (a
 * row past the end is one whose chunk could not grow). */
static void read_rows(struct exec_ctx *c, const struct sb_exec_shm *h)
{
	struct stat st;
	uint64_t claimed = atomic_load(&h->threads_claimed), n = 0, ended = 0;
	struct sb_exec_thread *rows = NULL;

	if (fstat(c->memfd, &st) == 0 && (uint64_t)st.st_size > h->threads_offset)
		n = ((uint64_t)st.st_size - h->threads_offset) / sizeof(*rows);
	n = n < claimed ? n : claimed;
	if (n > 0 && (rows = malloc(n * sizeof(*rows))) != NULL) {
		size_t len = n * sizeof(*rows), got = 0;
		ssize_t k;
		while (got < len && (k = pread(c->memfd, (char *)rows + got, len - got,
					       (off_t)(h->threads_offset + got))) > 0)
			got += (size_t)k;
		n = got / sizeof(*rows);
		for (uint64_t i = 0; i < n; i++) {
			ended += atomic_load(&rows[i].state) == SB_EXEC_ROW_ENDED;
			exec_truth_row(c->truth, &rows[i]);
		}
		free(rows);
	}
	run_add_stat(c->r, "agent_thread_rows", (double)n);
	run_add_stat(c->r, "agent_thread_rows_ended", (double)ended);
	/* a claimed row past the file's end is one the agent counted lost */
	run_add_stat(c->r, "agent_threads_lost", (double)atomic_load(&h->threads_lost));
	if (atomic_load(&h->children_valid)) {
		c->children_cpu_ns = (double)h->children_cpu_ns;
		c->children_exact = 1;
	}
}

static void agent_finish(struct exec_ctx *c)
{
	struct sb_exec_shm *h = c->shm;
	int state = atomic_load(&h->state);
	int blocked = atomic_load(&h->sigblocked_threads);

	c->sink = sb_exec_sink(c->shm); /* the agent set the pointers for its own mapping */
	if (state == SB_EXEC_INIT)
		exec_fail(c, "the agent never started: not loaded (static or setuid program?) or "
			     "SAMPBENCH_* rejected");
	else if (state == SB_EXEC_FAILED || h->signal_conflict)
		exec_fail(c, h->reason[0] ? h->reason : "the agent failed");
	if (blocked > 0) {
		char why[SB_REASON_LEN];
		const char *sig = plat_signal_name(h->sampler_signo);
		snprintf(why, sizeof(why), "the program blocked the sampler's signal (SIG%s) behind "
			 "the agent (not through sigprocmask/pthread_sigmask) in %d thread%s: "
			 "profile partial", sig ? sig : "?", blocked, blocked == 1 ? "" : "s");
		exec_fail(c, why);
	}
	if (state != SB_EXEC_INIT)
		read_rows(c, h);
	int nh = atomic_load(&h->nhelpers);
	for (int i = 0; i < nh && i < SB_EXEC_MAX_HELPERS; i++) {
		struct exec_tid *t = exec_truth_tid(c->truth, h->helper_tids[i]);
		if (t)
			t->helper = 1;
	}
	for (int i = 0; i < h->nstats && i < SB_EXEC_MAX_STATS; i++)
		run_add_stat(c->r, h->stats[i].name, h->stats[i].value);
	run_add_stat(c->r, "agent_stopped", state == SB_EXEC_STOPPED);
	run_add_stat(c->r, "helper_threads", nh);
	run_add_stat(c->r, "agent_sigblocked_threads", blocked);
	/* the one integrity check the agent can make in a program it did not write */
	run_add_stat(c->r, "integrity_sigmask", atomic_load(&h->mask_changed_threads));
	/* Its copy at exit has everything dlopen()ed late; ours may be older. */
	uint32_t ml = atomic_load(&h->maps_len);
	if (ml > 0 && ml <= SB_EXEC_MAPS_MAX) {
		char *m = malloc(ml);
		if (m) {
			memcpy(m, h->maps, ml);
			free(c->maps);
			c->maps = m;
			c->maps_len = ml;
		}
	}
}

static void agent_cleanup(struct exec_ctx *c)
{
	if (c->shm)
		munmap(c->shm, c->shm_len);
	if (c->memfd >= 0)
		close(c->memfd);
	c->shm = NULL;
	c->memfd = -1;
}

const struct exec_mode exec_agent_mode = {
	"agent", agent_prepare, agent_child, agent_attach, agent_poll, agent_finish, agent_cleanup,
};

int exec_agent_find(char *buf, size_t len)
{
	char self[PATH_MAX];

	if (plat_self_exe(self, sizeof(self)) < 0)
		return -1;
	char *slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	if ((size_t)snprintf(buf, len, "%.*s/libsampbench-agent.so", PATH_MAX - 32, self) >= len)
		return -1;
	return access(buf, R_OK) == 0 ? 0 : -1;
}
