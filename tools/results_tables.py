#!/usr/bin/python3
"""results_tables.py FILE.h5 - the README's results tables (markdown) from one bench file.

Medians over the repetitions of each cell (runs with status ok only), the host's floors
from the file's own calibration (start phase), and the file's identity. Debian's python3
with h5py (/usr/bin/python3). Exit 2 on a file it cannot read."""
import math
import statistics
import sys

try:
    import h5py
except ImportError:
    sys.exit("results_tables: h5py missing (apt-get install python3-h5py)")


def s(b):
    return b.decode() if isinstance(b, bytes) else str(b)


def main(argv):
    if len(argv) != 2:
        print("usage: results_tables.py FILE.h5", file=sys.stderr)
        return 2
    try:
        f = h5py.File(argv[1], "r")
        runs = f["runs"][:]
        calib = f["calibration"][:]
    except (OSError, KeyError) as e:
        print(f"cannot read '{argv[1]}': {e}", file=sys.stderr)
        return 2
    a = {k: s(v) for k, v in f.attrs.items()}
    print(f"file {argv[1]}: git_rev {a.get('git_rev')}, created {a.get('created')}, "
          f"profile {a.get('matrix_profile')}, {len(runs)} runs, fingerprint {a.get('fingerprint')}, "
          f"kernel {a.get('kernel')}, tick {a.get('tick_hz')} Hz")
    print("\n| floor (µs) | p50 | p99 |\n|---|---|---|")
    for c in calib:
        if s(c["phase"]) == "start" and c["n"] > 0:
            print(f"| {s(c['name'])} | {c['p50_ns'] / 1e3:.2f} | {c['p99_ns'] / 1e3:.2f} |")

    cells = {}
    for r in runs:
        if s(r["status"]) != "ok":
            continue
        key = (s(r["sampler"]), s(r["workload"]), int(r["threads"]), float(r["hz"]), s(r["variant"]))
        cells.setdefault(key, []).append(r)

    def med(sampler, workload, threads, hz, metric, scale=1.0, fmt="{:.3f}"):
        rows = cells.get((sampler, workload, threads, hz, ""), [])
        vals = [float(r[metric]) for r in rows if not math.isnan(float(r[metric]))]
        if not vals:
            return "–"
        return fmt.format(statistics.median(vals) * scale)

    samplers = []
    for (smp, _, _, _, _) in cells:
        if smp not in samplers and smp != "none":
            samplers.append(smp)

    us = dict(scale=1e-3, fmt="{:.0f}")
    pct = dict(scale=100, fmt="{:.2f} %")
    for threads in (2, 8):
        print(f"\n**balanced, {threads} threads, 100 Hz** (median of the repetitions)\n")
        print("| sampler | rate_accuracy | thread_tvd | magnitude_error | stop p50 µs | window p50 µs "
              "| window p99 µs | sampler CPU |\n|---|---|---|---|---|---|---|---|")
        for smp in samplers:
            if (smp, "balanced", threads, 100.0, "") not in cells:
                continue
            m = lambda k, **kw: med(smp, "balanced", threads, 100.0, k, **kw)
            print(f"| {smp} | {m('rate_accuracy')} | {m('thread_tvd')} | {m('magnitude_error')} | "
                  f"{m('stop_latency_p50_ns', **us)} | {m('suspend_window_p50_ns', **us)} | "
                  f"{m('suspend_window_p99_ns', **us)} | {m('sampler_cpu_fraction', **pct)} |")

    print("\n**Other cells** (2 threads unless said; medians)\n")
    print("| sampler | skewed rate / tvd | skewed window p99 µs | skewed stack_correct | hotspot window p99 µs "
          "| hotspot function_tvd | mixed off-CPU samples (truth) | churn rate, 2 / 8 threads "
          "| syscall EINTR per 1k samples | syscall wall rate | skewed 1000 Hz rate |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for smp in samplers:
        def m(w, k, t=2, hz=100.0, **kw):
            return med(smp, w, t, hz, k, **kw)
        truth = med(smp, "mixed", 2, 100.0, "offcpu_true_fraction", fmt="{:.2f}")
        print(f"| {smp} | {m('skewed', 'rate_accuracy')} / {m('skewed', 'thread_tvd')} | "
              f"{m('skewed', 'suspend_window_p99_ns', **us)} | {m('skewed', 'stack_correct_fraction', fmt='{:.2f}')} | "
              f"{m('hotspot', 'suspend_window_p99_ns', **us)} | {m('hotspot', 'function_tvd')} | "
              f"{m('mixed', 'offcpu_sample_fraction')} ({truth}) | "
              f"{m('churn', 'rate_accuracy')} / {m('churn', 'rate_accuracy', 8)} | "
              f"{m('syscall', 'eintr_per_1k_samples', fmt='{:.0f}')} | {m('syscall', 'wall_rate_accuracy')} | "
              f"{m('skewed', 'rate_accuracy', 2, 1000.0)} |")
    facts = {}
    if "host_facts" in f:
        for row in f["host_facts"][:]:
            facts[s(row["name"])] = float(row["value"])
    rz = facts.get("rendezvous_p99_ns", float("nan")) / 1e3
    busy = facts.get("rendezvous_busy_p99_ns", float("nan")) / 1e3
    print(f"\n**The suspend sampler against this file's floors** (rendezvous p99 {rz:.0f} µs, "
          f"busy rendezvous p99 {busy:.0f} µs; medians)\n")
    print("| sampler | balanced 2t window p50 / p99 µs | p99 / rendezvous p99 | balanced 8t rate, window p99 µs "
          "| skewed 2t window p99 µs | syscall 2t EINTR per 1k, wall rate | balanced 8t sampler CPU |")
    print("|---|---|---|---|---|---|---|")
    for smp in samplers:
        if (smp, "balanced", 2, 100.0, "") not in cells or smp not in ("mach", "mach-idle"):
            continue
        def m(w, k, t=2, **kw):
            return med(smp, w, t, 100.0, k, **kw)
        p99 = m("balanced", "suspend_window_p99_ns", fmt="{:.1f}")
        ratio = f"{float(p99) * 1e-3 / rz:.2f}" if p99 != "–" else "–"
        print(f"| {smp} | {m('balanced', 'suspend_window_p50_ns', **us)} / {m('balanced', 'suspend_window_p99_ns', **us)} | "
              f"{ratio} | {m('balanced', 'rate_accuracy', 8)}, {m('balanced', 'suspend_window_p99_ns', 8, **us)} | "
              f"{m('skewed', 'suspend_window_p99_ns', **us)} | {m('syscall', 'eintr_per_1k_samples', fmt='{:.0f}')}, "
              f"{m('syscall', 'wall_rate_accuracy')} | {m('balanced', 'sampler_cpu_fraction', 8, **pct)} |")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
