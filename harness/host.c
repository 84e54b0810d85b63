/* host.c - host facts and the kernel tick rate. */
#include "harness/host.h"

#include <ctype.h>
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/utsname.h>
#include <unistd.h>
#include <zlib.h>

#include "core/sample.h"
#include "core/util.h"
#include "harness/calibrate.h"
#include "version.h"


static int parse_hz_line(const char *line)
{
	if (strncmp(line, "CONFIG_HZ=", 10) == 0)
		return atoi(line + 10);
	return -1;
}

int host_config_hz(void)
{
	struct utsname u;
	char path[300], line[256];
	int hz = -1;

	if (uname(&u) == 0) {
		snprintf(path, sizeof(path), "/boot/config-%s", u.release);
		FILE *f = fopen(path, "r");
		if (f) {
			while (hz < 0 && fgets(line, sizeof(line), f))
				hz = parse_hz_line(line);
			fclose(f);
			if (hz > 0)
				return hz;
		}
	}
	gzFile gz = gzopen("/proc/config.gz", "rb");
	if (gz) {
		while (hz < 0 && gzgets(gz, line, sizeof(line)))
			hz = parse_hz_line(line);
		gzclose(gz);
	}
	return hz;
}

static volatile sig_atomic_t tick_signals;

static void tick_handler(int sig)
{
	(void)sig;
	tick_signals++;
}

int host_measure_tick_hz(void)
{
	struct sigaction sa, old;
	struct itimerval it = { { 0, 100 }, { 0, 100 } }, zero;

	memset(&sa, 0, sizeof(sa));
	memset(&zero, 0, sizeof(zero));
	sa.sa_handler = tick_handler;
	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, &old) != 0)
		return -1;
	tick_signals = 0;
	uint64_t c0 = sb_thread_cpu_ns();
	if (setitimer(ITIMER_PROF, &it, NULL) != 0) {
		sigaction(SIGPROF, &old, NULL);
		return -1;
	}
	volatile uint64_t x = 1;
	while (sb_thread_cpu_ns() - c0 < 300000000ull)
		x = x * 6364136223846793005ull + 1;
	setitimer(ITIMER_PROF, &zero, NULL);
	sigaction(SIGPROF, &old, NULL);
	double rate = tick_signals / ((double)(sb_thread_cpu_ns() - c0) / 1e9);
	static const int usual[] = { 100, 250, 300, 1000 };
	int best = -1;
	double bestd = 1e18;
	for (size_t i = 0; i < ARRAY_SIZE(usual); i++) {
		double d = rate > usual[i] ? rate - usual[i] : usual[i] - rate;
		if (d < bestd) {
			bestd = d;
			best = usual[i];
		}
	}
	return best;
}

void host_probe(struct sb_host *h)
{
	struct utsname u;

	memset(h, 0, sizeof(*h));
	if (gethostname(h->host, sizeof(h->host) - 1) != 0)
		snprintf(h->host, sizeof(h->host), "unknown");
	if (uname(&u) == 0)
		snprintf(h->kernel, sizeof(h->kernel), "%.20s %.64s %.20s", u.sysname, u.release, u.machine);
	h->nproc = (int32_t)sysconf(_SC_NPROCESSORS_ONLN);
	snprintf(h->compiler, sizeof(h->compiler), "%s", SB_CC);
	snprintf(h->version, sizeof(h->version), "%s", SB_VERSION);
	snprintf(h->git_rev, sizeof(h->git_rev), "%s", SB_GIT_REV);
	snprintf(h->build, sizeof(h->build), "%s", SB_BUILD);
	h->tick_hz = host_config_hz();
	if (h->tick_hz > 0) {
		snprintf(h->tick_source, sizeof(h->tick_source), "config");
		return;
	}
	h->tick_hz = host_measure_tick_hz();
	snprintf(h->tick_source, sizeof(h->tick_source), h->tick_hz > 0 ? "measured" : "unknown");
}

/* The first line of path starting with key, its value after ':' trimmed, into out. */
static void read_keyed(const char *path, const char *key, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, key, strlen(key)) != 0)
			continue;
		const char *v = strchr(line, ':');
		v = v ? v + 1 : line;
		while (isspace((unsigned char)*v))
			v++;
		size_t n = strcspn(v, "\n");
		if (n >= len)
			n = len - 1;
		memcpy(out, v, n);
		out[n] = 0;
		break;
	}
	fclose(f);
}

/* FNV-1a, folded over the parts of a fingerprint. */
static uint64_t fnv(uint64_t h, const char *s)
{
	for (; *s; s++) {
		h ^= (unsigned char)*s;
		h *= 1099511628211ull;
	}
	return h ^ 0xff;
}

/* Folds every file of the kernel's CPU vulnerabilities directory into x, name and first
 * line, in name order: the mitigations in force, which move a system call's cost 4x
 * (page-table isolation) and more. Read, not timed: a timed floor bucketed into the
 * fingerprint flipped between runs of one host whose syscall floor sat at a bucket's edge
 * (130-140 ns against 128), which made two machine classes of one VM. */
static uint64_t fold_mitigations(uint64_t x)
{
	const char *dir = "/sys/devices/system/cpu/vulnerabilities";
	struct dirent **names = NULL;
	int n = scandir(dir, &names, NULL, alphasort);

	for (int i = 0; i < n; i++) {
		char path[512], line[256] = "";
		if (names[i]->d_name[0] != '.') {
			snprintf(path, sizeof(path), "%s/%s", dir, names[i]->d_name);
			FILE *f = fopen(path, "r");
			if (f) {
				if (!fgets(line, sizeof(line), f))
					line[0] = 0;
				fclose(f);
			}
			x = fnv(fnv(x, names[i]->d_name), line);
		}
		free(names[i]);
	}
	free(names);
	return x;
}

void host_fingerprint(struct sb_host *h)
{
	struct utsname u;
	char model[256], hyper[64] = "", parts[64];
	uint64_t x = 1469598103934665603ull;

	read_keyed("/proc/cpuinfo", "model name", model, sizeof(model));
	if (!model[0])
		read_keyed("/proc/cpuinfo", "CPU part", model, sizeof(model)); /* arm64 */
	/* The flags line is long; what counts is whether it names a hypervisor. */
	char flags[4096];
	FILE *f = fopen("/proc/cpuinfo", "r");
	snprintf(hyper, sizeof(hyper), "bare");
	if (f) {
		while (fgets(flags, sizeof(flags), f))
			if (strncmp(flags, "flags", 5) == 0) {
				if (strstr(flags, " hypervisor"))
					snprintf(hyper, sizeof(hyper), "vm");
				break;
			}
		fclose(f);
	}
	x = fnv(x, model);
	x = fnv(x, hyper);
	x = fold_mitigations(x);
	if (uname(&u) == 0)
		x = fnv(x, u.release);
	snprintf(parts, sizeof(parts), "%d", h->nproc);
	x = fnv(x, parts);
	snprintf(h->fingerprint, sizeof(h->fingerprint), "%.16s-%dcpu-%.8s-%08llx",
		 uname(&u) == 0 ? u.machine : "unknown", (int)(h->nproc & 0xffff), hyper,
		 (unsigned long long)(x & 0xffffffffull));
}

void host_probe_calibrated(struct sb_host *h)
{
	const char *cal = getenv("SB_CALIBRATE");

	host_probe(h);
	if (!(cal && !strcmp(cal, "0")))
		calibrate_host(h, "start");
	host_fingerprint(h);
}
