/* rssmon.c - the run child's private memory, read from /proc (rssmon.h). */
#include "harness/rssmon.h"

#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "core/sample.h"

/* Private bytes from the text of a statm file, or NaN. */
static double parse_statm(const char *text)
{
	unsigned long size, resident, shared;
	long page = sysconf(_SC_PAGESIZE);

	/* resident counts file-backed and shared-memory pages too; shared is exactly those */
	if (sscanf(text, "%lu %lu %lu", &size, &resident, &shared) != 3 || resident < shared)
		return NAN;
	return (double)(resident - shared) * (double)(page > 0 ? page : 4096);
}

/* Reads fd's statm from its start: one pread, ~1 us (fopen and fscanf: ~6 us). */
static double read_statm(int fd)
{
	char buf[256];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);

	if (n <= 0)
		return NAN;
	buf[n] = 0;
	return parse_statm(buf);
}

static int open_statm(pid_t pid)
{
	char path[64];

	if (pid > 0)
		snprintf(path, sizeof(path), "/proc/%d/statm", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/statm");
	return open(path, O_RDONLY | O_CLOEXEC);
}

double rssmon_private_bytes(pid_t pid)
{
	int fd = open_statm(pid);
	if (fd < 0)
		return NAN;
	double v = read_statm(fd);
	close(fd);
	return v;
}

void rssmon_init(struct rssmon *m, pid_t pid)
{
	m->pid = pid;
	m->fd = open_statm(pid);
	m->peak = NAN;
	m->n = 0;
	m->stride = 1;
	m->skipped = 0;
}

void rssmon_add(struct rssmon *m, uint64_t t_ns, double v)
{
	if (isnan(v))
		return;
	if (isnan(m->peak) || v > m->peak)
		m->peak = v;
	if (++m->skipped < m->stride)
		return;
	m->skipped = 0;
	if (m->n == RSSMON_MAX) {
		/* keep every other point: the series stays evenly spaced at twice the stride */
		for (size_t i = 0; i < RSSMON_MAX / 2; i++) {
			m->t[i] = m->t[2 * i];
			m->v[i] = m->v[2 * i];
		}
		m->n = RSSMON_MAX / 2;
		m->stride *= 2;
	}
	m->t[m->n] = t_ns;
	m->v[m->n++] = v;
}

void rssmon_poll(struct rssmon *m)
{
	if (m->fd >= 0)
		rssmon_add(m, sb_now_ns(), read_statm(m->fd));
}

void rssmon_close(struct rssmon *m)
{
	if (m->fd >= 0)
		close(m->fd);
	m->fd = -1;
}

double rssmon_growth(const struct rssmon *m, uint64_t t0, uint64_t t1)
{
	if (t1 <= t0)
		return NAN;
	uint64_t from = t0 + (t1 - t0) / 4;
	double st = 0, sv = 0, stt = 0, stv = 0;
	size_t k = 0;

	for (size_t i = 0; i < m->n; i++) {
		if (m->t[i] < from || m->t[i] > t1)
			continue;
		double t = (double)(m->t[i] - from) / 1e9;
		st += t;
		sv += m->v[i];
		stt += t * t;
		stv += t * m->v[i];
		k++;
	}
	double d = (double)k * stt - st * st;
	if (k < 8 || !(d > 0))
		return NAN;
	return ((double)k * stv - st * sv) / d;
}
