/* integrity.c - a workload thread's checks of itself (integrity.h). Nothing here asks the
 * sampler: the mask and the stack are read from the thread, the signal is the program's
 * own, and every count lands in the slot's truth in shared memory. */
#include "workloads/integrity.h"

#include <pthread.h>
#include <string.h>
#include <time.h>

#include "platform/platform.h"
#include "sampler/threads.h"

#define WL_PAINT_WORD 0x5ca1ab1e0ddba11dull
/* Left unpainted below the caller's frame: the painter's own frame and the calls between
 * begin and the work grow into the painted window, which is fine, but must not paint over
 * what they hold while painting. */
#define WL_PAINT_MARGIN 512
/* Kept clear above the stack's low end (a guard page that the bounds may include). */
#define WL_PAINT_FLOOR 4096
/* A signal a thread sends itself is delivered before pthread_kill returns when it is not
 * blocked; the wait only keeps a slow host from turning a late one into a violation. */
#define WL_SELF_SIGNAL_WAIT_NS 20000000ull

static __thread volatile sig_atomic_t self_signal_seen;
static _Atomic int self_signal_installed; /* wl_integrity_install ran in this process */

static _Atomic uint64_t timer_expiries; /* the program's timer, overruns included */

/* The program's handler: async-signal-safe, errno saved. A POSIX timer's signal also
 * counts the expiries merged into it while it was pending (a starved thread). */
static void self_signal_handler(int sig, siginfo_t *si, void *uc)
{
	int e = errno;
	(void)sig;
	(void)uc;
	self_signal_seen = self_signal_seen + 1;
#ifdef __linux__
	if (si && si->si_code == SI_TIMER)
		atomic_fetch_add(&timer_expiries, 1 + (uint64_t)(si->si_overrun > 0 ? si->si_overrun : 0));
#else
	(void)si;
#endif
	errno = e;
}

uint64_t wl_self_signal_count(void)
{
	return (uint64_t)self_signal_seen;
}

uint64_t wl_self_timer_expiries(void)
{
	return atomic_load(&timer_expiries);
}

int wl_integrity_install(void)
{
	struct sigaction sa;

	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = self_signal_handler;
	sa.sa_flags = SA_RESTART | SA_SIGINFO;
	sigemptyset(&sa.sa_mask);
	if (sigaction(WL_SELF_SIGNAL, &sa, NULL) != 0)
		return -1;
	atomic_store(&self_signal_installed, 1);
	return 0;
}

int wl_sigset_equal(const sigset_t *a, const sigset_t *b)
{
	for (int s = 1; s < NSIG; s++)
		if (sigismember(a, s) != sigismember(b, s))
			return 0;
	return 1;
}

/* Painting and scanning touch the stack below the caller's frame, which sanitizers track
 * as frames come and go: their checks are off in these two functions (a sanitizer build's
 * frames are larger, and the stack rule compares with `none` of the same file). */
#define WL_NO_SANITIZE __attribute__((no_sanitize("address", "thread")))

/* Not inlined: its frame address is the top of the window it paints. */
__attribute__((noinline)) WL_NO_SANITIZE void wl_integrity_begin(struct wl_integrity *it)
{
	uintptr_t lo, hi;

	sigemptyset(&it->mask);
	pthread_sigmask(SIG_SETMASK, NULL, &it->mask);
	it->top = it->lo = 0;
	uintptr_t top = (uintptr_t)__builtin_frame_address(0) - WL_PAINT_MARGIN;
	if (plat_stack_bounds_self(&lo, &hi) != 0 || top <= lo + WL_PAINT_FLOOR || top > hi)
		return;
	top &= ~(uintptr_t)7;
	uintptr_t bottom = top - (lo + WL_PAINT_FLOOR) > WL_PAINT_CAP ? top - WL_PAINT_CAP
								     : lo + WL_PAINT_FLOOR;
	bottom = (bottom + 7) & ~(uintptr_t)7;
	/* volatile: word by word, no memset call below this frame */
	for (volatile uint64_t *w = (volatile uint64_t *)bottom; (uintptr_t)w < top; w++)
		*w = WL_PAINT_WORD;
	it->top = top;
	it->lo = bottom;
}

/* Bytes between the window's top and its deepest changed word; 0 without a window. */
WL_NO_SANITIZE static uint64_t stack_peak_scan(const struct wl_integrity *it)
{
	if (it->top == 0)
		return 0;
	const volatile uint64_t *w = (const volatile uint64_t *)it->lo;
	while ((uintptr_t)w < it->top && *w == WL_PAINT_WORD)
		w++;
	return (uint64_t)(it->top - (uintptr_t)w) + WL_PAINT_MARGIN;
}

static void store_max(_Atomic uint64_t *v, uint64_t x)
{
	uint64_t cur = atomic_load(v);
	while (cur < x && !atomic_compare_exchange_weak(v, &cur, x))
		;
}

/* Sends the thread the program's own signal; 1 when its handler ran within the wait, or
 * when the program never installed it (a workload run outside the runner: tests, `target`),
 * where the signal's default action would end the process. A handler that is no longer
 * the program's does not run it: 0, without sending. */
static int self_signal_arrives(void)
{
	struct sigaction cur;

	if (!atomic_load(&self_signal_installed))
		return 1;
	if (sigaction(WL_SELF_SIGNAL, NULL, &cur) != 0 || cur.sa_sigaction != self_signal_handler)
		return 0;
	sig_atomic_t before = self_signal_seen;
	if (pthread_kill(pthread_self(), WL_SELF_SIGNAL) != 0)
		return 0;
	uint64_t t0 = sb_now_ns();
	while (self_signal_seen == before) {
		if (sb_now_ns() - t0 > WL_SELF_SIGNAL_WAIT_NS)
			return 0;
		struct timespec ts = { 0, 100000 };
		nanosleep(&ts, NULL);
	}
	return 1;
}

void wl_integrity_end(struct wl_integrity *it, struct wl_truth *t)
{
	sigset_t now;

	/* first: the handler of the signal below runs on this stack */
	store_max(&t->stack_peak, stack_peak_scan(it));
	sigemptyset(&now);
	pthread_sigmask(SIG_SETMASK, NULL, &now);
	if (!wl_sigset_equal(&now, &it->mask))
		atomic_fetch_add(&t->integrity_sigmask, 1);
	if (!self_signal_arrives())
		atomic_fetch_add(&t->integrity_signal, 1);
}

const void *const wl_integrity_funcs[] = {
	(const void *)wl_integrity_begin, (const void *)stack_peak_scan,
	(const void *)self_signal_arrives, (const void *)self_signal_handler,
	(const void *)wl_integrity_end,   (const void *)store_max,
	NULL,
};
