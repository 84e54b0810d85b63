"""versus.py - setitimer against the Mach sampler, cell by cell: the report's second section.

For each workload and thread count, the process-wide CPU timers (itimer, gperftools) and
the suspend samplers (mach, mach-idle) side by side, the others as context, with mach −
itimer and its uncertainty over the repetitions, and one sentence per workload saying
which mechanism is closer to the truth there and why. Numbers are per cell, never pooled
across cells. The groups come from the sampler table (`sampbench list --json`, by class),
so every sampler of the file is shown; one the table does not know (a plugin) is context.
"""
import math


def groups(tables, names):
    """(cpu, suspend, context) of the sampler names, each in table order: process-wide CPU
    timers; wall samplers inside the process; the others (the baseline, faults and test
    samplers left out). tables is `sampbench list --json`."""
    order = [c["name"] for c in tables["samplers"]]
    cls = {c["name"]: c for c in tables["samplers"]}
    names = sorted(names, key=lambda n: (order.index(n) if n in cls else len(order), n))
    cpu, suspend, context = [], [], []
    for n in names:
        c = cls.get(n, {"clock": "", "flags": [], "caps": []})
        if {"baseline", "fault", "test"} & set(c["flags"]):
            continue
        if c["clock"] == "cpu" and "process-wide" in c["caps"]:
            cpu.append(n)
        elif c["clock"] == "wall" and "external" not in c["flags"]:
            suspend.append(n)
        else:
            context.append(n)
    return cpu, suspend, context

# (metric, label, goal): goal 1.0 means closer to 1 is better, "low" / "high" the direction
METRICS = [
    ("rate_accuracy", "rate_accuracy (samples / expected)", 1.0),
    ("thread_tvd", "thread_tvd (thread attribution)", "low"),
    ("function_tvd", "function_tvd (function attribution)", "low"),
    ("stack_correct_fraction", "stack_correct_fraction", "high"),
    ("magnitude_error", "magnitude_error", "low"),
    ("offcpu_sample_fraction", "off-CPU share of samples", "offcpu"),
    ("window_floor", "window p99 / host floor", "low"),
    ("overhead", "overhead (throughput vs none)", 1.0),
]


def values(rs, metric):
    out = []
    for r in rs:
        if metric == "window_floor":
            floor = r["host"]["facts"].get("rendezvous_busy_p99_ns", float("nan"))
            v = r["suspend_window_p99_ns"] / floor if floor and floor > 0 else float("nan")
        else:
            v = r[metric]
        if v is not None and math.isfinite(v):
            out.append(float(v))
    return out


def mean_se(v):
    if not v:
        return float("nan"), float("nan"), 0
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, float("nan"), 1
    var = sum((x - m) ** 2 for x in v) / (len(v) - 1)
    return m, math.sqrt(var / len(v)), len(v)


def error(metric, goal, m, truth):
    """How far a mean is from the truth (smaller is better), for the comparison."""
    if goal == "low":
        return m
    if goal == "high":
        return -m
    if goal == "offcpu":
        return abs(m - truth)
    return abs(m - goal)


def fmt(m, se, n):
    if n == 0 or not math.isfinite(m):
        return "–"
    return f"{m:.3f}" if n < 2 else f"{m:.3f} ± {2 * se:.3f}"


def reason(workload, get):
    """The mechanism behind the differences on workload, with its numbers (get(sampler,
    metric) -> mean or NaN)."""
    def f(s, m):
        v = get(s, m)
        return "–" if not math.isfinite(v) else f"{v:.3f}"
    if workload == "balanced":
        return (f"A process-wide timer's signal goes to whichever thread the kernel picks "
                f"(seed 000's misattribution): thread_tvd itimer {f('itimer', 'thread_tvd')}, "
                f"mach {f('mach', 'thread_tvd')}, which stops each thread itself.")
    if workload == "skewed":
        return (f"Unequal threads make misattribution visible (thread_tvd itimer "
                f"{f('itimer', 'thread_tvd')}, mach {f('mach', 'thread_tvd')}); mach also "
                f"stops threads waiting at the barrier inside glibc, which has no frame "
                f"pointers, so more of its stacks cannot be walked back to the workload "
                f"(stack_unwalkable_fraction mach {f('mach', 'stack_unwalkable_fraction')}, "
                f"itimer {f('itimer', 'stack_unwalkable_fraction')}).")
    if workload == "hotspot":
        return (f"Both see the 60/30/10 split of one thread's time over three functions: "
                f"function_tvd itimer {f('itimer', 'function_tvd')}, mach "
                f"{f('mach', 'function_tvd')}.")
    if workload == "mixed":
        return (f"Threads sleep and block for a third of their time: a CPU timer cannot see "
                f"it (off-CPU share of samples itimer {f('itimer', 'offcpu_sample_fraction')}"
                f", truth {f('mach', 'offcpu_true_fraction')}), a wall sampler splits it "
                f"(mach {f('mach', 'offcpu_sample_fraction')}). Which is right depends on "
                f"the question: CPU profile or wall-clock profile.")
    if workload == "syscall":
        return (f"Threads run in bursts shorter than the kernel tick between system calls, "
                f"and CPU timers are checked at the tick: itimer rate_accuracy "
                f"{f('itimer', 'rate_accuracy')}; mach samples at wall ticks (rate "
                f"{f('mach', 'rate_accuracy')}) and pays with interrupted calls "
                f"(EINTR per 1000 samples {f('mach', 'eintr_per_1k_samples')}).")
    return ""


def section(page, table, cells, hz, tables):
    """Writes the head-to-head tables into page from cells ({(sampler, workload, threads,
    hz): [ok runs]}), the samplers grouped and the workloads ordered by tables (`sampbench
    list --json`). Returns how many cells were compared."""
    shown = 0
    CPU, SUSPEND, CONTEXT = groups(tables, {k[0] for k in cells})
    present = {k[1] for k in cells}
    workloads = [w for w in tables["workloads"] if w in present]
    for w in workloads + sorted(present - set(workloads)):
        for t in sorted({k[2] for k in cells if k[1] == w and k[3] == hz}):
            samplers = [s for s in CPU + SUSPEND + CONTEXT if (s, w, t, hz) in cells]
            if not any(s in samplers for s in CPU) or not any(s in samplers for s in SUSPEND):
                continue
            shown += 1

            def get(s, m, w=w, t=t):
                return mean_se(values(cells.get((s, w, t, hz), []), m))[0]
            truth = get("mach", "offcpu_true_fraction")
            rows, classes, score = [], [], {"mach": 0, "itimer": 0}
            for metric, label, goal in METRICS:
                if goal == "offcpu" and w != "mixed":
                    continue
                stats = {s: mean_se(values(cells[(s, w, t, hz)], metric)) for s in samplers}
                if not any(n for _, _, n in stats.values()):
                    continue
                a, b = stats.get("itimer", (math.nan, math.nan, 0)), stats.get("mach", (math.nan, math.nan, 0))
                diff = "–"
                if a[2] and b[2]:
                    unc = 2 * math.sqrt((a[1] if a[2] > 1 else 0) ** 2 + (b[1] if b[2] > 1 else 0) ** 2)
                    diff = f"{b[0] - a[0]:+.3f} ± {unc:.3f}"
                    ea, eb = error(metric, goal, a[0], truth), error(metric, goal, b[0], truth)
                    if abs(ea - eb) > unc and metric != "window_floor":
                        score["mach" if eb < ea else "itimer"] += 1
                rows.append([label] + [fmt(*stats[s]) for s in samplers] + [diff])
                classes.append(["l"] + ["ctx" if s in CONTEXT else "" for s in samplers] + [""])
            page.add(f"<h3>{w}, {t} threads, {hz:g} Hz</h3>")
            page.add(table(["metric"] + samplers + ["mach − itimer"], rows, classes))
            lead = (f"mach is closer to the truth on {score['mach']} metric(s), itimer on "
                    f"{score['itimer']}, beyond twice the standard error over repetitions "
                    f"(suspend window left out: it is a cost, not an accuracy). ")
            page.p(lead + reason(w, get), "caption")
    return shown
