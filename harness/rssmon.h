/* rssmon.h - the run child's private memory, watched from outside: the parent reads
 * /proc/PID/statm at every look at the child and keeps the peak and a thinned series, from
 * which the growth rate over the work comes (docs/metrics.md "What the sampler costs the
 * process"). Private = resident minus shared (file-backed and shared-memory pages): the
 * sample sink and the run's other MAP_SHARED areas, which the harness owns, are left out. */
#ifndef SB_RSSMON_H
#define SB_RSSMON_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define RSSMON_MAX 1024 /* points kept; every other one is dropped when full */

struct rssmon {
	pid_t pid;
	int fd;            /* /proc/PID/statm, kept open: each look is one pread */
	double peak;       /* bytes, NaN until a read succeeded */
	size_t n;          /* points in t/v */
	uint32_t stride;   /* keep one look in stride (doubles at every thinning) */
	uint32_t skipped;  /* looks since the last kept one */
	uint64_t t[RSSMON_MAX];
	double v[RSSMON_MAX];
};

/* Private resident bytes of process pid (0: this process) from /proc/PID/statm, or NaN
 * when unreadable (no /proc, the process is gone). */
double rssmon_private_bytes(pid_t pid);

/* Starts watching pid (peak NaN, no points); opens its statm (rssmon_close closes it). */
void rssmon_init(struct rssmon *m, pid_t pid);

/* Closes what rssmon_init opened; the peak and the points stay. */
void rssmon_close(struct rssmon *m);

/* Adds one reading v (bytes, NaN ignored) taken at t_ns: raises the peak, keeps the point
 * when its turn in the stride comes, halving the series when full. */
void rssmon_add(struct rssmon *m, uint64_t t_ns, double v);

/* Reads pid now and adds the reading (rssmon_add); nothing once it is gone. */
void rssmon_poll(struct rssmon *m);

/* Least-squares slope in bytes/s of the points with t in [t0 + (t1-t0)/4, t1]: the first
 * quarter of the work, where threads start and a sampler sets up, is left out. NaN with
 * fewer than 8 such points or t1 <= t0. */
double rssmon_growth(const struct rssmon *m, uint64_t t0, uint64_t t1);

#endif
