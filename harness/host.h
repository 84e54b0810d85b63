/* host.h - facts about the machine that every run records. */
#ifndef SB_HOST_H
#define SB_HOST_H

#include "core/run.h"

/* Fills h: hostname, kernel, nproc, compiler, version, git revision and the kernel tick
 * rate (CONFIG_HZ from /boot/config-<release> or /proc/config.gz, else measured with a
 * short setitimer burst, else -1). */
void host_probe(struct sb_host *h);

/* host_probe(), then the start calibration (calibrate.h: host facts and the rendezvous
 * spin budget of this process and the children it forks), then host_fingerprint(). What
 * run, bench and exec record. About 0.4 s. SB_CALIBRATE=0 skips the calibration (the
 * candidate runs of an A/B bench, whose session has calibrated). */
void host_probe_calibrated(struct sb_host *h);

/* Sets h->fingerprint: which machine class h is, for comparing timings only within one
 * (per-machine baselines). `<arch>-<N>cpu-<vm|bare>-<hash>`, the hash over the CPU model,
 * hypervisor, every CPU vulnerability's mitigation as the kernel reports it, the kernel
 * release and the CPU count: read from the host, nothing timed, so one host keeps one
 * fingerprint from run to run. */
void host_fingerprint(struct sb_host *h);

/* CONFIG_HZ from the kernel config, or -1. */
int host_config_hz(void);

/* Measures the tick rate: the highest SIGPROF rate a CPU-time timer reaches, rounded to a
 * usual CONFIG_HZ value (100, 250, 300, 1000). Burns about 0.3 s of CPU. -1 on failure. */
int host_measure_tick_hz(void);

#endif
