#!/usr/bin/python3
"""findings.py - docs/findings.md from one bench file, through a small committed summary.

  findings.py summarize FILE.h5 [--gate FILE.gate.txt] [--scaling FILE.scaling.txt] -o SUMMARY.json
  findings.py render SUMMARY.json -o findings.md
  findings.py check SUMMARY.json findings.md     exit 1 when the page is not what render writes

summarize keeps what the page needs from FILE.h5 (the file's identity, its host's floors,
the median of each metric over the ok runs of each cell) in a JSON file small enough to
commit (docs/findings.json); findings measured by other commands than a bench are kept in
its "notes" list (title, source: commit, date, host and command, text), which summarize
carries over from the -o file it replaces; render writes the page from it, so re-running a bench and
these two commands refreshes every number, and check (make check) keeps the page and its
summary from drifting apart. summarize needs Debian's python3-h5py; render and check only
the standard library. Bad input: one line on stderr, exit 2."""
import json
import math
import os
import statistics
import sys

FLOORS = ("syscall", "thread_cpu_clock", "futex_cross", "futex_same", "signal_cross",
          "rendezvous", "rendezvous_busy", "rendezvous_busy_observed", "ptrace_interrupt")


def fail(msg):
    print(f"findings: {msg}", file=sys.stderr)
    sys.exit(2)


def text(b):
    return b.decode() if isinstance(b, bytes) else str(b)


def sbfile():
    """analysis/sbfile.py, the one reader of results files (it alone imports h5py)."""
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..",
                                    "analysis"))
    import sbfile as mod
    mod.PROG = "findings"
    return mod


def sampbench_bin():
    """$SAMPBENCH_BIN, else build/sampbench of this tree."""
    return os.environ.get("SAMPBENCH_BIN") or os.path.join(
        os.path.dirname(os.path.abspath(__file__)), "..", "build", "sampbench")


def summarize(path, gate_path, scaling_path):
    sb = sbfile()
    sb.check_readable(path)
    a, runs = sb.load_file(path, samples=False)
    floors = a["root_tables"][1]
    a = {k: text(v) for k, v in a.items() if k != "root_tables"}
    out = {"file": os.path.basename(path),
           "git_rev": a.get("git_rev", "unknown"), "created": a.get("created", ""),
           "profile": a.get("matrix_profile", ""), "fingerprint": a.get("fingerprint", ""),
           "kernel": a.get("kernel", ""), "tick_hz": a.get("tick_hz", ""),
           "cpus": a.get("nproc", ""), "runs": len(runs),
           "floors_us": {}, "cells": []}
    # the table's samplers in order, with their class: render orders the page by it
    out["samplers"] = [{k: c[k] for k in ("name", "clock", "flags", "caps")}
                       for c in sb.sampler_tables(sampbench_bin())["samplers"]]
    for c in floors:
        name = c["name"]
        if c["phase"] == "start" and int(c["n"]) > 0 and name in FLOORS:
            out["floors_us"][name] = [round(float(c["p50_ns"]) / 1e3, 2),
                                      round(float(c["p99_ns"]) / 1e3, 2)]
    cells = {}
    for r in runs:
        if r["variant"]:
            continue
        cells.setdefault((r["sampler"], r["workload"], int(r["threads"]), float(r["hz"])),
                         []).append(r)
    for (smp, wl, thr, hz), rows in sorted(cells.items()):
        ok = [r for r in rows if r["status"] in sb.SCORED]
        med = {}
        for m in sb.metric_columns(rows[0]):
            col = m if m in rows[0] else "metric_" + m
            vals = [float(r[col]) for r in ok if not math.isnan(float(r[col]))]
            if vals:
                med[m] = round(statistics.median(vals), 6)
        out["cells"].append({"sampler": smp, "workload": wl, "threads": thr, "hz": hz,
                             "runs": len(rows), "ok": len(ok), "median": med})
    if gate_path:
        try:
            with open(gate_path) as g:
                lines = g.readlines()
        except OSError as e:
            fail(f"cannot read '{gate_path}': {e.strerror}")
        verdict = [l.strip() for l in lines if l.startswith("gate:")]
        out["gate"] = verdict[-1] if verdict else ""
        out["gate_failed"] = [" ".join(l[1:].split()) for l in lines if l.startswith("✗")]
    if scaling_path:
        try:
            with open(scaling_path) as g:
                out["scaling"] = [l.rstrip("\n") for l in g if l.strip()]
        except OSError as e:
            fail(f"cannot read '{scaling_path}': {e.strerror}")
    return out


def sampler_order(s):
    """The samplers of a summary's cells as the page lists them: CPU clocks before wall
    ones, process-wide before per-thread, then by reach (the agent's in-process samplers,
    the others, external ones last), then table order
    (the summary's "samplers", from `sampbench list --json`); the baseline, faults and
    test samplers left out. Names the table did not have (a plugin) follow, sorted."""
    table = s.get("samplers", [])
    order = {c["name"]: i for i, c in enumerate(table)}
    cls = {c["name"]: c for c in table}
    skip = {c["name"] for c in table if {"baseline", "fault", "test"} & set(c["flags"])}
    names = {c["sampler"] for c in s["cells"]} - skip

    def key(n):
        c = cls[n]
        return (c["clock"] == "wall", "process-wide" not in c["caps"],
                "external" in c["flags"], "in-process" not in c["flags"], order[n])
    known = sorted((n for n in names if n in cls), key=key)
    return known + sorted(names - set(known))


class Page:
    """Medians of a summary, formatted; '–' where a cell or metric is missing."""

    def __init__(self, s):
        self.s = s
        self.cells = {(c["sampler"], c["workload"], c["threads"], c["hz"]): c for c in s["cells"]}
        self.samplers = sampler_order(s)

    def v(self, smp, wl, thr, k, hz=100.0):
        c = self.cells.get((smp, wl, thr, hz))
        return None if c is None else c["median"].get(k)

    def f(self, smp, wl, thr, k, hz=100.0, fmt="{:.3f}", scale=1.0):
        x = self.v(smp, wl, thr, k, hz)
        return "–" if x is None else fmt.format(x * scale)

    def us(self, smp, wl, thr, k, hz=100.0):
        return self.f(smp, wl, thr, k, hz, "{:.0f}", 1e-3)

    def pct(self, smp, wl, thr, k, hz=100.0):
        return self.f(smp, wl, thr, k, hz, "{:.2f} %", 100)

    def floor(self, name, i=1):
        x = self.s["floors_us"].get(name)
        return None if x is None else x[i]

    def any_metric(self, k):
        return any(k in c["median"] for c in self.s["cells"])

    def has(self, *smps):
        return [x for x in smps if x in self.samplers]

    def clock(self, clock):
        """The page's samplers whose table class has this clock ("cpu", "wall")."""
        cls = {c["name"]: c for c in self.s.get("samplers", [])}
        return [x for x in self.samplers if cls.get(x, {}).get("clock") == clock]


def footprint(p, w, src):
    """The footprint table: what each sampler cost the process and changed in it."""
    w("\n## The profiler's footprint\n")
    w(f"({src})\n")
    w("Measured from the process, not taken from the sampler (docs/metrics.md): the run child's "
      "CPU less the workload threads' own and the harness's (`sampler_cpu_measured_fraction`, "
      "% of one core) against what the sampler reports (`sampler_cpu_fraction`), the CPU it "
      "spent beyond its claim (`sampler_cpu_unreported_fraction`), its private memory above "
      "`none`'s at the peak and its growth, the deepest stack a workload thread used "
      "(`stack_peak_bytes`, KiB; `none`'s is the workload's own) and what the program saw "
      "changed (`integrity_violations`: errno, signal masks and dispositions, its own signal, "
      "descriptors). Cell medians, 2 threads, 100 Hz:\n")
    for wl in ("balanced", "mixed", "syscall"):
        if not any((x, wl, 2, 100.0) in p.cells for x in p.samplers):
            continue
        w(f"**{wl}, 2 threads**\n")
        w("| sampler | CPU measured | CPU claimed | unreported | RSS peak excess MB "
          "| RSS growth KB/s | stack peak KiB | integrity | overhead |\n"
          "|---|---|---|---|---|---|---|---|---|")
        for x in ["none"] + p.samplers:
            if (x, wl, 2, 100.0) not in p.cells:
                continue
            w(f"| {x} | {p.pct(x, wl, 2, 'sampler_cpu_measured_fraction')} | "
              f"{p.pct(x, wl, 2, 'sampler_cpu_fraction')} | {p.pct(x, wl, 2, 'sampler_cpu_unreported_fraction')} | "
              f"{p.f(x, wl, 2, 'rss_peak_excess_bytes', fmt='{:.2f}', scale=1e-6)} | "
              f"{p.f(x, wl, 2, 'rss_growth_bytes_per_s', fmt='{:.0f}', scale=1e-3)} | "
              f"{p.f(x, wl, 2, 'stack_peak_bytes', fmt='{:.1f}', scale=1 / 1024)} | "
              f"{p.f(x, wl, 2, 'integrity_violations', fmt='{:.0f}')} | {p.f(x, wl, 2, 'overhead')} |")
        w("")


def source(s):
    return (f"commit {s['git_rev']}, {s['created'][:10]}, host {s['fingerprint']}; "
            f"`git checkout {s['git_rev'][:7]} && make bench` (profile {s['profile']})")


def stops_table(p, wls=("balanced", "hotspot")):
    """The table of reported against observed windows and pause excess (markdown lines),
    for the samplers that have them on the workloads wls at 2 and 8 threads; [] when none
    does. docs/findings.md shows balanced and hotspot, the README's block balanced."""
    obs = [x for x in p.has("mach", "mach-idle", "ptrace", "itimer", "ctimer", "perf")
           if any(p.v(x, wl, t, k) is not None for wl in wls for t in (2, 8)
                  for k in ("window_observed_p50_ns", "pause_excess_fraction"))]
    if not obs:
        return []
    o = ["| sampler | cell | reported p50/p99/max | observed p50/p99/max | pause excess |",
         "|---|---|---|---|---|"]
    for x in obs:
        for wl in wls:
            for t in (2, 8):
                if (x, wl, t, 100.0) not in p.cells:
                    continue
                rep = "/".join(p.us(x, wl, t, f"suspend_window_{q}_ns") for q in ("p50", "p99", "max"))
                seen = "/".join(p.us(x, wl, t, f"window_observed_{q}_ns") for q in ("p50", "p99", "max"))
                o.append(f"| {x} | {wl} {t}t | {rep} | {seen} | {p.f(x, wl, t, 'pause_excess_fraction')} |")
    return o


def render(s):
    p = Page(s)
    o = []
    w = o.append
    src = source(s)
    w("# Findings\n")
    w("What sampbench measured about the sampling mechanisms, from one bench file. Generated by")
    w("`tools/findings.py render docs/findings.json` from the summary that `tools/findings.py")
    w("summarize` took of the bench file (do not edit by hand: re-run the bench and both")
    w("commands). Numbers are medians over the runs of a cell (2 s each, status ok); timings")
    w("are this host's and mean something only against its own floors, in the first table.\n")
    w(f"- bench file: `results/runs/{s['file']}`, {s['runs']} runs, profile `{s['profile']}` of "
      f"ci/matrix")
    w(f"- commit {s['git_rev']}, created {s['created']}")
    w(f"- host {s['fingerprint']}: {s['kernel']}, {s['cpus']} CPUs, CONFIG_HZ={s['tick_hz']}")
    w(f"- reproduce: `git checkout {s['git_rev'][:7]} && make bench`, then `tools/findings.py "
      f"summarize FILE.h5 --gate FILE.gate.txt -o docs/findings.json && tools/findings.py render "
      f"docs/findings.json -o docs/findings.md`")
    if s.get("gate"):
        w(f"- the gate on that file (budgets only, no baseline of the machine): `{s['gate']}`")
        for row in s.get("gate_failed", []):
            w(f"  - failed: `{row}`")
    w("\n## This host's floors\n")
    w("| floor (µs) | p50 | p99 |\n|---|---|---|")
    names = {"syscall": "system call", "thread_cpu_clock": "thread CPU clock read",
             "futex_cross": "futex wake round trip, two CPUs",
             "futex_same": "futex wake round trip, one CPU",
             "signal_cross": "signal to a thread running on another CPU",
             "rendezvous": "empty rendezvous, one thread",
             "rendezvous_busy": "a tick on a busy machine, per thread (the suspend budgets' floor)",
             "rendezvous_busy_observed": "the same tick as its threads see it (the observed "
                                         "windows' floor)",
             "ptrace_interrupt": "ptrace interrupt round trip"}
    for n in FLOORS:
        if n in s["floors_us"]:
            a, b = s["floors_us"][n]
            w(f"| {names[n]} | {a:.2f} | {b:.2f} |")

    tick = float(s["tick_hz"]) if s["tick_hz"] else float("nan")
    w("\n## The tick caps CPU-time timers\n")
    w(f"({src})\n")
    cap = tick / 1000.0
    w(f"At 1000 Hz requested (skewed, 2 threads) rate_accuracy was "
      + ", ".join(f"{x} {p.f(x, 'skewed', 2, 'rate_accuracy', 1000.0)}"
                  for x in p.has("itimer", "gperftools", "ctimer", "perf", "mach"))
      + f". The kernel checks CPU-time timers (setitimer's ITIMER_PROF, timer_create on a "
      f"thread CPU clock) only at the scheduler tick, {s['tick_hz']} Hz here, so they cannot "
      f"reach more than {cap:.2f} of a 1000 Hz request per busy thread. perf's hrtimer and "
      f"mach's sampler thread do not depend on the tick.")

    w("\n## Process-wide setitimer misattributes threads\n")
    w(f"({src})\n")
    w("thread_tvd (0 = each thread got its true share), balanced, 8 threads on 2 CPUs: "
      + ", ".join(f"{x} {p.f(x, 'balanced', 8, 'thread_tvd')}" for x in p.samplers) + ".")
    w("A process-wide timer's signal goes to whichever thread the kernel picks when it "
      "expires (seed 000's bug class); per-thread clocks and stop-every-thread samplers "
      "charge the thread that ran. The gate's `fault-misdeliver` and the plugin "
      "`defect_one_thread` show the extreme and fail it.")

    w("\n## Threads that run between ticks are invisible to CPU timers\n")
    w(f"({src})\n")
    cpu = p.has("itimer", "ctimer", "gperftools", "gperftools-pt", "perf")
    w("On `syscall` (threads blocking in nanosleep, pipes, futexes and select between bursts "
      "far shorter than the tick) rate_accuracy was "
      + ", ".join(f"{x} {p.f(x, 'syscall', 2, 'rate_accuracy')}" for x in cpu)
      + "; the wall samplers' wall rate " + ", ".join(
          f"{x} {p.f(x, 'syscall', 2, 'wall_rate_accuracy')}" for x in p.clock("wall"))
      + ". Short threads are the same mechanism: on `churn` (threads living 1–20 ms) rate_accuracy "
      "with 2 / 8 threads at a time was " + ", ".join(
          f"{x} {p.f(x, 'churn', 2, 'rate_accuracy')} / {p.f(x, 'churn', 8, 'rate_accuracy')}"
          for x in p.samplers)
      + " (a per-thread clock starts at zero and is checked at the tick: Go issue 40435). "
      "The gate's rate and magnitude rules exclude both workloads with this reason.")

    w("\n## Off-CPU time: CPU samplers are blind, wall samplers split it\n")
    w(f"({src})\n")
    w("On `mixed` (per thread: spin 2 ms, sleep 1 ms, block on a pipe) the fraction of samples "
      "in the sleep and read paths, truth "
      f"{p.f('mach', 'mixed', 2, 'offcpu_true_fraction', fmt='{:.2f}')}: "
      + ", ".join(f"{x} {p.f(x, 'mixed', 2, 'offcpu_sample_fraction')}" for x in p.samplers) + ".")

    w("\n## The suspend window against the floor\n")
    w(f"({src})\n")
    busy = p.floor("rendezvous_busy")
    w(f"The host's busy-tick floor (`rendezvous_busy` p99) is {busy} µs. Window p50 / p99 in µs "
      "and p99 as a multiple of that floor:\n")
    w("| sampler | balanced 2t | × floor | hotspot 2t | skewed 2t | balanced 8t rate, p99 | "
      "syscall 2t EINTR per 1k, wall rate |")
    w("|---|---|---|---|---|---|---|")
    for x in p.clock("wall"):
        p99 = p.v(x, "balanced", 2, "suspend_window_p99_ns")
        ratio = "–" if p99 is None or not busy else f"{p99 / 1e3 / busy:.2f}"
        w(f"| {x} | {p.us(x, 'balanced', 2, 'suspend_window_p50_ns')} / "
          f"{p.us(x, 'balanced', 2, 'suspend_window_p99_ns')} | {ratio} | "
          f"{p.us(x, 'hotspot', 2, 'suspend_window_p50_ns')} / {p.us(x, 'hotspot', 2, 'suspend_window_p99_ns')} | "
          f"{p.us(x, 'skewed', 2, 'suspend_window_p50_ns')} / {p.us(x, 'skewed', 2, 'suspend_window_p99_ns')} | "
          f"{p.f(x, 'balanced', 8, 'rate_accuracy')}, {p.us(x, 'balanced', 8, 'suspend_window_p99_ns')} | "
          f"{p.f(x, 'syscall', 2, 'eintr_per_1k_samples', fmt='{:.0f}')}, "
          f"{p.f(x, 'syscall', 2, 'wall_rate_accuracy')} |")
    w("\nThe window is timed from before the stop request to after the resume (docs/metrics.md). "
      "With more busy threads than CPUs a target that has not parked 100 µs after the tick's "
      "requests is deferred and takes its own sample when it next runs (docs/mach.md, "
      "\"Stopping many threads\"). The p99s are made of the host's vCPU stalls (docs/mach.md, \"Cost against the "
      "host's floor\"); skewed's threads sleep at a barrier and must be woken to park.")

    rows = stops_table(p)
    if rows:
        w("\n## What the threads lived through against what the sampler reported\n")
        w(f"({src})\n")
        w("Each workload thread's progress clock (docs/metrics.md, \"Observed pauses\") sees "
          "every gap in its own work; a sample that reports a suspend window is matched with "
          "the gap that covers it. Reported window / observed gap, p50, p99 and max in µs "
          "(medians over the runs of a cell), and the pause excess over `none` of the same "
          "cell (share of compute time):\n")
        o.extend(rows)
        w("\nA signal handler's reported window is its own run time (1–2 µs); the gap around it "
          "includes the kernel's signal delivery and, on this VM, the ~20 µs a scheduler tick "
          "costs a thread. With more threads than CPUs the observed gap includes the wait for a "
          "CPU after the resume, whoever stopped the thread.")

    w("\n## Frame pointers end at glibc\n")
    w(f"({src})\n")
    if p.any_metric("stack_unwalkable_fraction"):
        w("The share of samples whose leaf lies in code without frame pointers "
          "(`stack_unwalkable_fraction`: glibc, the vDSO), skewed / malloclock, 2 threads: "
          + ", ".join(f"{x} {p.f(x, 'skewed', 2, 'stack_unwalkable_fraction', fmt='{:.2f}')} / "
                      f"{p.f(x, 'malloclock', 2, 'stack_unwalkable_fraction', fmt='{:.2f}')}"
                      for x in p.samplers)
          + ". Debian's glibc is built without frame pointers: a stop that lands in "
          "`pthread_barrier_wait` or `malloc` cannot walk back to the workload's function, whose "
          "return address lies in no frame record (docs/workloads.md). `stack_correct_fraction` "
          "judges the samples whose leaf is the workload's own code (skewed / malloclock: "
          + ", ".join(f"{x} {p.f(x, 'skewed', 2, 'stack_correct_fraction', fmt='{:.2f}')} / "
                      f"{p.f(x, 'malloclock', 2, 'stack_correct_fraction', fmt='{:.2f}')}"
                      for x in p.samplers)
          + "); docs/gate.md says how the others are bounded.")
    else:
        w("stack_correct_fraction on skewed, 2 threads: "
          + ", ".join(f"{x} {p.f(x, 'skewed', 2, 'stack_correct_fraction', fmt='{:.2f}')}" for x in p.samplers)
          + ". Debian's glibc is built without frame pointers, and skewed's threads wait in "
          "`pthread_barrier_wait`: a stop that lands there cannot walk back to `skewed_thread`, "
          "whose return address lies in no frame record (docs/workloads.md). CPU timers fire "
          "mostly while the thread computes in its own code.")

    w("\n## Cost\n")
    w(f"({src})\n")
    w("The sampler's own CPU as a fraction of one core (`sampler_cpu_fraction`), balanced, "
      "2 / 8 threads: " + ", ".join(
          f"{x} {p.pct(x, 'balanced', 2, 'sampler_cpu_fraction')} / {p.pct(x, 'balanced', 8, 'sampler_cpu_fraction')}"
          for x in p.samplers if p.v(x, "balanced", 2, "sampler_cpu_fraction") is not None)
      + ". The program's throughput against `none` in the same file (`overhead`, 1 = no loss), "
      "balanced, 2 threads: " + ", ".join(
          f"{x} {p.f(x, 'balanced', 2, 'overhead')}" for x in p.samplers
          if p.v(x, "balanced", 2, "overhead") is not None) + ".")
    if p.any_metric("sampler_cpu_measured_fraction"):
        footprint(p, w, src)
    if s.get("scaling"):
        w("\nmach's cost per tick against the thread count (`build/mach_scaling`, 200 Hz, "
          "the sampler at SCHED_FIFO; the last columns are ratios to this host's floors):\n")
        w("```")
        o.extend(s["scaling"])
        w("```")

    w("\n## Idle skip\n")
    w(f"({src})\n")
    if p.has("mach", "mach-idle") == ["mach", "mach-idle"]:
        w("`mach-idle` does not stop a thread that used no CPU since its previous sample. "
          "Against `mach` (balanced window p50 / p99 µs, 2 and 8 threads; sampler CPU with 8): "
          + "; ".join(f"{x} {p.us(x, 'balanced', 2, 'suspend_window_p50_ns')} / "
                      f"{p.us(x, 'balanced', 2, 'suspend_window_p99_ns')}, "
                      f"{p.us(x, 'balanced', 8, 'suspend_window_p50_ns')} / "
                      f"{p.us(x, 'balanced', 8, 'suspend_window_p99_ns')}, "
                      f"{p.pct(x, 'balanced', 8, 'sampler_cpu_fraction')}" for x in ("mach", "mach-idle"))
          + ". On busy workloads every thread runs between ticks, so there is nothing to skip.")

    for n in s.get("notes", []):
        w(f"\n## {n['title']}\n")
        w(f"({n['source']})\n")
        w(n["text"])

    w("\n## Every sampler, balanced\n")
    w(f"({src})\n")
    for thr in (2, 8):
        w(f"**balanced, {thr} threads, 100 Hz**\n")
        w("| sampler | rate_accuracy | thread_tvd | magnitude_error | stop p50 µs | window p50 µs "
          "| window p99 µs | sampler CPU |\n|---|---|---|---|---|---|---|---|")
        for x in p.samplers:
            if (x, "balanced", thr, 100.0) not in p.cells:
                continue
            w(f"| {x} | {p.f(x, 'balanced', thr, 'rate_accuracy')} | {p.f(x, 'balanced', thr, 'thread_tvd')} | "
              f"{p.f(x, 'balanced', thr, 'magnitude_error')} | {p.us(x, 'balanced', thr, 'stop_latency_p50_ns')} | "
              f"{p.us(x, 'balanced', thr, 'suspend_window_p50_ns')} | {p.us(x, 'balanced', thr, 'suspend_window_p99_ns')} | "
              f"{p.pct(x, 'balanced', thr, 'sampler_cpu_fraction')} |")
        w("")
    return "\n".join(o).rstrip("\n") + "\n"


def write_atomic(path, data):
    tmp = path + ".tmp"
    try:
        with open(tmp, "w") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as e:
        fail(f"cannot write '{path}': {e.strerror}")


def read_text(path):
    try:
        with open(path) as f:
            return f.read()
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")


def load(path):
    try:
        with open(path) as f:
            s = json.load(f)
        for k in ("git_rev", "created", "fingerprint", "floors_us", "cells", "tick_hz"):
            s[k]
        return s
    except OSError as e:
        fail(f"cannot read '{path}': {e.strerror}")
    except (ValueError, KeyError, TypeError) as e:
        fail(f"'{path}' is not a findings summary: {e}")


def usage():
    print(__doc__.split("\n\n")[0], file=sys.stderr)
    sys.exit(2)


def main(argv):
    if len(argv) < 2:
        usage()
    cmd, args = argv[1], argv[2:]
    opts = {}
    pos = []
    i = 0
    while i < len(args):
        if args[i] in ("-o", "--gate", "--scaling"):
            if i + 1 >= len(args):
                fail(f"option '{args[i]}' needs a value")
            opts[args[i]] = args[i + 1]
            i += 2
        elif args[i].startswith("-"):
            fail(f"unknown option '{args[i]}'")
        else:
            pos.append(args[i])
            i += 1
    if cmd == "summarize" and len(pos) == 1 and "-o" in opts:
        s = summarize(pos[0], opts.get("--gate"), opts.get("--scaling"))
        if os.path.exists(opts["-o"]):
            s["notes"] = load(opts["-o"]).get("notes", [])
        write_atomic(opts["-o"], json.dumps(s, indent=1, sort_keys=True) + "\n")
    elif cmd == "render" and len(pos) == 1 and "-o" in opts:
        write_atomic(opts["-o"], render(load(pos[0])))
    elif cmd == "check" and len(pos) == 2:
        if read_text(pos[1]) != render(load(pos[0])):
            print(f"findings: '{pos[1]}' is not what 'tools/findings.py render {pos[0]}' writes "
                  "(edit the summary or re-run the bench, never the page)", file=sys.stderr)
            return 1
    else:
        usage()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
