/* integrity.c - the run's process checks itself around the sampler (integrity.h). */
#include "harness/integrity.h"

#include <fcntl.h>
#include <pthread.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "sampler/threads.h"

#include "workloads/integrity.h"

/* The C library's business: glibc sets it on every disposition it installs, so a
 * disposition restored through sigaction() differs from a never-set one only in it. */
#if defined(__linux__) && !defined(SA_RESTORER)
#define SA_RESTORER 0x04000000
#endif

int sb_sigaction_same(const struct sigaction *a, const struct sigaction *b)
{
#ifdef SA_RESTORER
	const int ignore = SA_RESTORER;
#else
	const int ignore = 0;
#endif
	return a->sa_handler == b->sa_handler && (a->sa_flags & ~ignore) == (b->sa_flags & ~ignore) &&
	       wl_sigset_equal(&a->sa_mask, &b->sa_mask);
}

static void sig_snap(struct sb_sigsnap *s)
{
	memset(s, 0, sizeof(*s));
	for (int i = 1; i < NSIG; i++)
		s->ok[i] = sigaction(i, NULL, &s->sa[i]) == 0;
}

static void fd_snap(struct sb_fdsnap *s)
{
	memset(s, 0, sizeof(*s));
	for (int fd = 0; fd < SB_FD_SCAN; fd++) {
		int fl = fcntl(fd, F_GETFD);
		if (fl < 0)
			continue;
		s->open[fd / 64] |= 1ull << (fd % 64);
		if (fl & FD_CLOEXEC)
			s->cloexec[fd / 64] |= 1ull << (fd % 64);
	}
}

void sb_integrity_snap(struct sb_integrity *in, int which)
{
	sig_snap(&in->sig[which]);
	fd_snap(&in->fd[which]);
	sigemptyset(&in->mask[which]);
	pthread_sigmask(SIG_SETMASK, NULL, &in->mask[which]);
}

/* Dispositions: the signals start() changed are the sampler's (it may leave its handler
 * after stop: a timer signal still in flight must not find SIG_DFL and kill the
 * process), except one the program had a handler or SIG_IGN for (taken over). No
 * disposition may change while the workload runs, and none other than the sampler's may
 * differ after stop from before start. */
static uint64_t count_sigaction(const struct sb_integrity *in)
{
	const struct sb_sigsnap *b = &in->sig[SB_SNAP_BEFORE], *s = &in->sig[SB_SNAP_STARTED];
	const struct sb_sigsnap *w = &in->sig[SB_SNAP_WORKED], *e = &in->sig[SB_SNAP_STOPPED];
	uint64_t n = 0;

	for (int i = 1; i < NSIG; i++) {
		if (!b->ok[i] || !s->ok[i] || !w->ok[i] || !e->ok[i])
			continue;
		int declared = !sb_sigaction_same(&b->sa[i], &s->sa[i]);
		if (!sb_sigaction_same(&s->sa[i], &w->sa[i]))
			n++;
		if (!declared && !sb_sigaction_same(&b->sa[i], &e->sa[i]))
			n++;
		if (declared && b->sa[i].sa_handler != SIG_DFL)
			n++;
	}
	return n;
}

static int bit(const uint64_t *v, int fd)
{
	return (int)((v[fd / 64] >> (fd % 64)) & 1);
}

/* Descriptors opened by the run and still open after stop: those a fork+exec would hand
 * to the program's children (no close-on-exec) are leaks (integrity_fd); close-on-exec
 * ones are counted in *kept, since a library may keep one for the process's life
 * (libunwind's address-validation pipe: 2 under gperftools). Descriptors opened during
 * the run without close-on-exec go to *inheritable (libprofiler's profile file). The
 * program's own descriptors, open before start and closed after stop, are violations too
 * (integrity_fd): a sampler closed what was not its own. */
static uint64_t count_fd(const struct sb_integrity *in, uint64_t *kept, uint64_t *inheritable)
{
	const struct sb_fdsnap *b = &in->fd[SB_SNAP_BEFORE], *w = &in->fd[SB_SNAP_WORKED];
	const struct sb_fdsnap *e = &in->fd[SB_SNAP_STOPPED];
	uint64_t n = 0;

	*kept = *inheritable = 0;
	for (int fd = 0; fd < SB_FD_SCAN; fd++) {
		if (bit(b->open, fd)) {
			n += !bit(e->open, fd); /* the program's, closed under it */
			continue;
		}
		if (bit(w->open, fd) && !bit(w->cloexec, fd))
			(*inheritable)++;
		if (bit(e->open, fd) && bit(e->cloexec, fd))
			(*kept)++;
		else if (bit(e->open, fd))
			n++;
	}
	return n;
}

#ifndef sigev_notify_thread_id
#define sigev_notify_thread_id _sigev_un._tid
#endif

void sb_integrity_timer_arm(struct sb_integrity *in)
{
	in->timer_armed = 0;
#if defined(__linux__) && defined(SIGEV_THREAD_ID)
	struct sigevent sev;
	memset(&sev, 0, sizeof(sev));
	sev.sigev_notify = SIGEV_THREAD_ID;
	sev.sigev_signo = WL_SELF_SIGNAL;
	sev.sigev_notify_thread_id = sb_gettid();
	if (timer_create(CLOCK_MONOTONIC, &sev, &in->timer) != 0)
		return;
	struct itimerspec its = {
		.it_interval = { 0, (long)SB_TIMER_PERIOD_NS },
		.it_value = { 0, (long)SB_TIMER_PERIOD_NS },
	};
	if (timer_settime(in->timer, 0, &its, NULL) != 0) {
		timer_delete(in->timer);
		return;
	}
	in->timer_armed = 1;
	in->timer_t0_ns = sb_now_ns();
	in->timer_n0 = wl_self_timer_expiries();
#endif
}

void sb_integrity_timer_disarm(struct sb_integrity *in)
{
	if (!in->timer_armed)
		return;
	in->timer_ticks = wl_self_timer_expiries() - in->timer_n0;
	in->timer_expected = (sb_now_ns() - in->timer_t0_ns) / SB_TIMER_PERIOD_NS;
#ifdef __linux__
	timer_delete(in->timer);
#endif
	in->timer_armed = 0;
}

void sb_integrity_count(const struct sb_integrity *in, struct sb_integrity_counts *out)
{
	out->sigaction = count_sigaction(in);
	out->fd = count_fd(in, &out->fd_kept, &out->fd_inheritable);
	/* expiries merged while the signal waited for a starved thread count too (the
	 * handler adds si_overrun): only the last one may be missing; half is far above a
	 * timer whose signal was blocked, stolen or whose timer was deleted */
	out->timer = in->timer_expected >= 4 && 2 * in->timer_ticks < in->timer_expected;
	out->timer_ticks = in->timer_ticks;
	out->timer_expected = in->timer_expected;
	out->sigmask = 0;
	for (int k = SB_SNAP_STARTED; k < SB_SNAP_N; k++)
		out->sigmask += !wl_sigset_equal(&in->mask[SB_SNAP_BEFORE], &in->mask[k]);
}
