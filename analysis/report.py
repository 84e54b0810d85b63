#!/usr/bin/python3
"""report.py FILE.h5 [FILE.h5...] -o DIR [--history FILE.h5...] - sampbench accuracy report
(docs/report.md).

Writes DIR/index.html and the PNG images it shows, beside it: no network, no scripts.
Every finding is computed from the runs, with the numbers behind it and the threshold
that selected it. Run with the system interpreter (/usr/bin/python3) and Debian's
python3-h5py, python3-numpy and python3-matplotlib.
"""
import argparse
import html
import os
import subprocess
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "report"))
import sbfile  # noqa: E402  (analysis/sbfile.py: the one reader of results files)
import verdict  # noqa: E402  (analysis/report/: the gate's verdict, the head-to-head)
import versus  # noqa: E402


def die(msg, code=2):
    print(f"sampbench: {msg}", file=sys.stderr)
    sys.exit(code)


np = plt = Patch = None  # imported by main() once the arguments are checked


def import_modules(plotting):
    """numpy and h5py (sbfile) to read the files; matplotlib (slow to import) only with
    plotting, once the files are read, so a refused file is answered at once."""
    global np, plt, Patch
    sbfile.import_h5py()
    try:
        import numpy as np
        if plotting:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
            from matplotlib.patches import Patch
    except ImportError as e:
        mod = (e.name or "a module").split(".")[0]
        die(f"python module {mod} missing (apt-get install python3-{mod}, or make deps)", 1)


warnings.filterwarnings("ignore", category=RuntimeWarning)  # means of all-NaN cells

# The observations describe, with their numbers, and judge nothing: no threshold of their
# own (the limits are the gate's, ci/budgets, shown in the verdict section).

FIRST = ["itimer", "mach"]  # the comparison the report is for, then the others
SCORED = sbfile.SCORED


# ---------------------------------------------------------------- loading

load = sbfile.load


def sampler_order(runs):
    """Samplers under test: itimer and mach first; `none` (the overhead reference) left out."""
    names = sorted({r["sampler"] for r in runs} - {"none"})
    return [s for s in FIRST if s in names] + [s for s in names if s not in FIRST]


def ok(runs):
    """The runs with metrics: ok, and lossy (finished, but its sampler lost samples)."""
    return [r for r in runs if r["status"] in SCORED]


def stat(values):
    """(mean, sd, n) of the finite values; NaNs when none."""
    v = np.asarray([x for x in values if np.isfinite(x)], dtype=float)
    if v.size == 0:
        return float("nan"), float("nan"), 0
    return float(v.mean()), float(v.std(ddof=1)) if v.size > 1 else 0.0, int(v.size)


def cells(runs):
    """{(sampler, workload, threads, hz): [runs]} of the ok runs."""
    out = {}
    for r in ok(runs):
        out.setdefault((r["sampler"], r["workload"], r["threads"], r["hz"]), []).append(r)
    return out


def most_common(values, prefer=None):
    values = list(values)
    if not values:
        return None
    if prefer in values:
        return prefer
    return max(sorted(set(values)), key=values.count)


def finite_any(runs, metric):
    return any(np.isfinite(r.get(metric, np.nan)) for r in ok(runs))


def fmt_ns(ns):
    if not np.isfinite(ns):
        return "-"
    if ns >= 1e6:
        return f"{ns / 1e6:.2f} ms"
    return f"{ns / 1e3:.1f} µs"


# ---------------------------------------------------------------- plots

def legend(ax, **kw):
    if ax.get_legend_handles_labels()[0]:
        ax.legend(**kw)


def grid(n, w, h, cols=2):
    """n panels in rows of cols; returns the figure and the n axes (extra ones hidden)."""
    cols = min(n, cols)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(w * cols, h * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    return fig, list(axes.flat[:n])


class Figures:
    """Saves figures into the output directory and remembers their names."""

    def __init__(self, outdir, colors):
        self.outdir, self.colors, self.names = outdir, colors, []

    def save(self, fig, name):
        fig.savefig(os.path.join(self.outdir, name), dpi=90)
        plt.close(fig)
        self.names.append(name)
        return name


def line_figure(figs, runs, samplers, metric, xkey, fixed_key, fixed, ideal, tick=None,
                nproc=None):
    """metric vs xkey, one panel per workload, one line per sampler (mean, sd bars)."""
    workloads = sorted({r["workload"] for r in ok(runs)})
    fig, axes = grid(len(workloads), 5.5, 3.3)
    c = cells(runs)
    for ax, w in zip(axes, workloads):
        for s in samplers:
            pts = []
            for (cs, cw, ct, ch), rs in c.items():
                key = {"threads": ct, "hz": ch}
                if cs == s and cw == w and key[fixed_key] == fixed:
                    m, sd, n = stat(r[metric] for r in rs)
                    if n:
                        pts.append((key[xkey], m, sd))
            if pts:
                pts.sort()
                x, y, e = zip(*pts)
                ax.errorbar(x, y, yerr=e, marker="o", capsize=3, label=s,
                            color=figs.colors[s])
        if ideal is not None:
            ax.axhline(ideal, color="grey", lw=0.8, ls=":")
        if tick and tick > 0:
            ax.axvline(tick, color="black", lw=1, ls="--", label=f"kernel tick {tick} Hz")
        if nproc:
            ax.axvline(nproc, color="grey", lw=1, ls="--", label=f"{nproc} CPUs")
        if xkey == "hz":
            ax.set_xscale("log")
        xs = sorted({k[2 if xkey == "threads" else 3] for k in c if k[1] == w})
        ax.set_xticks(xs)
        ax.set_xticklabels([f"{x:g}" for x in xs])
        ax.minorticks_off()
        ax.set_title(f"{w}, {fixed:g} {'Hz' if fixed_key == 'hz' else 'threads'}")
        ax.set_xlabel("requested Hz" if xkey == "hz" else "workload threads")
        ax.grid(alpha=0.3)
    for ax in axes[::2]:
        ax.set_ylabel(metric)
    legend(axes[0], fontsize=7)
    fig.tight_layout()
    return fig


def bar_figure(runs, samplers, metrics, colors, select=None):
    """One panel per metric with data: bars per sampler, one bar per workload (mean, sd)."""
    metrics = [m for m in metrics if finite_any(runs, m)]
    if not metrics:
        return None
    workloads = sorted({r["workload"] for r in ok(runs)})
    fig, axes = grid(len(metrics), 5.5, 3.3)
    width = 0.8 / max(len(workloads), 1)
    hatches = ["", "//", "..", "xx", "\\\\"]
    for ax, m in zip(axes, metrics):
        for wi, w in enumerate(workloads):
            for si, s in enumerate(samplers):
                rs = [r for r in ok(runs) if r["sampler"] == s and r["workload"] == w
                      and (select is None or select(r))]
                mean, sd, n = stat(r.get(m, np.nan) for r in rs)
                if n:
                    ax.bar(si + wi * width, mean, width, yerr=sd, capsize=2,
                           color=colors[s], hatch=hatches[wi % len(hatches)],
                           edgecolor="black", lw=0.5)
        ax.set_xticks([i + 0.4 - width / 2 for i in range(len(samplers))])
        ax.set_xticklabels(samplers, rotation=30, fontsize=8)
        ax.set_title(m)
        ax.grid(axis="y", alpha=0.3)
        ax.legend(handles=[Patch(facecolor="white", edgecolor="black", label=w,
                                 hatch=hatches[wi % len(hatches)])
                           for wi, w in enumerate(workloads)], fontsize=7)
    fig.tight_layout()
    return fig


def thread_runs(runs, samplers, hz):
    """Per sampler: the skewed run (else any) with the most threads at hz, first repetition."""
    out = {}
    for s in samplers:
        rs = [r for r in ok(runs) if r["sampler"] == s and "thread_rows" in r
              and len(r["thread_rows"]) > 1]
        skewed = [r for r in rs if r["workload"] == "skewed"] or rs
        at_hz = [r for r in skewed if r["hz"] == hz] or skewed
        if at_hz:
            out[s] = max(at_hz, key=lambda r: (r["threads"], -r["repetition"], -r["run_id"]))
    return out


def thread_shares(r):
    """(true CPU share, sampled share) per thread: samples, or weights for wall samplers."""
    t = r["thread_rows"]
    cpu = t["cpu_ns"].astype(float)
    sampled = t["samples"].astype(float)
    if r["clock"] == "wall" and np.all(np.isfinite(t["weight_ns"])):
        sampled = t["weight_ns"].astype(float)
    if cpu.sum() <= 0 or sampled.sum() <= 0:
        return None
    return cpu / cpu.sum(), sampled / sampled.sum()


def scatter_figure(picked, colors):
    n = len(picked)
    cols = min(n, 4)
    rows = (n + cols - 1) // cols
    fig, axes = plt.subplots(rows, cols, figsize=(3.2 * cols, 3.2 * rows), squeeze=False)
    for ax in axes.flat[n:]:
        ax.axis("off")
    for ax, (s, r) in zip(axes.flat, picked.items()):
        shares = thread_shares(r)
        hi = 0.05
        if shares:
            x, y = shares
            hi = max(hi, x.max(), y.max()) * 1.1
            ax.scatter(x, y, color=colors[s], edgecolor="black", zorder=3)
        ax.plot([0, hi], [0, hi], color="grey", lw=0.8, ls=":")
        ax.set_xlim(0, hi)
        ax.set_ylim(0, hi)
        ax.set_title(f"{s}: {r['workload']} {r['threads']}t, tvd {r['thread_tvd']:.3f}",
                     fontsize=9)
        ax.set_xlabel("true CPU share", fontsize=8)
        ax.set_ylabel("sampled share", fontsize=8)
        ax.grid(alpha=0.3)
    fig.tight_layout()
    return fig


def latency_data(runs, samplers, key, select=lambda r: True):
    out = {}
    for s in samplers:
        v = np.concatenate([r[key] for r in ok(runs)
                            if r["sampler"] == s and key in r and select(r)] or
                           [np.zeros(0)])
        v = v[np.isfinite(v) & (v > 0)]
        if v.size:
            out[s] = np.sort(v)
    return out


def host_floor(rs):
    """The median busy-tick floor (rendezvous_busy p99) of the runs' hosts, or None."""
    v = [r["host"]["facts"].get("rendezvous_busy_p99_ns") for r in rs]
    v = [x for x in v if x and np.isfinite(x)]
    return float(np.median(v)) if v else None


def cdf_figure(data, colors, floors):
    """One panel per cell: the CDF of each sampler's windows, the host's floor drawn."""
    fig, axes = plt.subplots(1, 2, figsize=(11, 3.8), squeeze=False)
    for ax, (title, d) in zip(axes[0], data.items()):
        fl = floors.get(title)
        for s, v in d.items():
            y = np.arange(1, v.size + 1) / v.size
            p99 = np.percentile(v, 99)
            ax.step(v / 1e3, y, where="post", color=colors[s],
                    label=f"{s} (p99 {fmt_ns(p99)}" + (f", {p99 / fl:.1f}× floor)" if fl else ")"))
        if fl:
            ax.axvline(fl / 1e3, color="black", ls="--", lw=1,
                       label=f"host floor {fmt_ns(fl)} (busy tick p99)")
        ax.set_xscale("log")
        ax.set_xlabel("µs (log)")
        ax.set_ylabel("fraction of samples")
        ax.set_title(title)
        ax.grid(alpha=0.3)
        legend(ax, fontsize=7, loc="lower right")
    fig.tight_layout()
    return fig


# ---------------------------------------------------------------- findings

def finding(items, level, msg):
    items.append((level, msg))


def pct(x):
    return f"{abs(x) * 100:.1f}%"


def findings_rate(items, runs, samplers):
    """Per sampler, its cell at or below the tick furthest from the expected sample count,
    with the samples that cell expected (a small cell is a noisy one)."""
    c = cells(runs)
    for s in samplers:
        worst = None
        for (cs, w, t, hz), rs in c.items():
            if cs != s or hz > rs[0]["tick_hz"] > 0:
                continue  # above the tick: see the tick finding
            m, sd, n = stat(r["rate_accuracy"] for r in rs)
            if n and (worst is None or abs(m - 1) > abs(worst[0] - 1)):
                expect = stat(r["expected_samples"] for r in rs)[0]
                worst = (m, sd, n, w, t, hz, rs[0]["nproc"], expect)
        if worst is None:
            continue
        m, sd, n, w, t, hz, nproc, expect = worst
        sem = sd / np.sqrt(n)
        word = "under" if m < 1 else "over"
        finding(items, "info",
                f"{s} furthest from the expected sample count at {t} threads on {nproc} "
                f"cores ({w}, {hz:g} Hz: rate_accuracy {m:.3f} ± {sd:.3f} over {n} reps, "
                f"{expect:.0f} samples expected): {pct(m - 1)} {word}" +
                (f", within 2 standard errors ({2 * sem:.3f})" if abs(m - 1) <= 2 * sem else ""))


def findings_tick(items, runs, samplers):
    """The rate each sampler achieved where the request was above the kernel tick, as a
    multiple of the tick."""
    above = [r for r in ok(runs) if r["hz"] > r["tick_hz"] > 0]
    if not above:
        ticks = sorted({r["tick_hz"] for r in runs})
        hz = sorted({r["hz"] for r in runs})
        finding(items, "info", f"no run requested more than the kernel tick "
                f"({', '.join(map(str, ticks))} Hz; requested {', '.join(f'{h:g}' for h in hz)}"
                f" Hz): tick capping is not measured in this data")
        return
    for hz in sorted({r["hz"] for r in above}):
        tick = max(r["tick_hz"] for r in above if r["hz"] == hz)
        got = []
        for s in samplers:
            m, _, n = stat(r["rate_accuracy"] * hz for r in above
                           if r["sampler"] == s and r["hz"] == hz)
            if n:
                got.append(f"{s} {m:.0f} Hz ({m / tick:.2f} × tick)")
        finding(items, "info", f"{hz:g} Hz requested, above the {tick} Hz kernel tick; "
                f"achieved per CPU second: {', '.join(got)}")


def findings_pair(items, runs, a="itimer", b="mach"):
    c = cells(runs)
    rows = []
    for (s, w, t, hz), rs in c.items():
        if s != a or (b, w, t, hz) not in c:
            continue
        ma = stat(r["rate_accuracy"] for r in rs)[0]
        mb = stat(r["rate_accuracy"] for r in c[(b, w, t, hz)])[0]
        ta = stat(r["thread_tvd"] for r in rs)[0]
        tb = stat(r["thread_tvd"] for r in c[(b, w, t, hz)])[0]
        if np.isfinite(ma) and np.isfinite(mb):
            rows.append((abs(ma - 1), abs(mb - 1), ta, tb))
    if not rows:
        finding(items, "info", f"no cell has both {a} and {b}: no head-to-head comparison")
        return
    ea, eb, ta, tb = (np.array(x) for x in zip(*rows))
    wins = int(np.sum(eb < ea))
    finding(items, "info", f"{b} vs {a}: closer to the expected sample count in {wins} of "
            f"{len(rows)} cells (median |rate error| {b} {pct(np.median(eb))}, {a} "
            f"{pct(np.median(ea))}); median thread_tvd {b} {np.nanmedian(tb):.3f}, {a} "
            f"{np.nanmedian(ta):.3f}")


def findings_threads(items, runs, samplers):
    """Per sampler, its worst cell's thread_tvd."""
    c = cells(runs)
    worst = []
    for s in samplers:
        best = None
        for (cs, w, t, hz), rs in c.items():
            m, _, n = stat(r["thread_tvd"] for r in rs)
            if cs == s and n and (best is None or m > best[0]):
                best = (m, w, t, hz, n)
        if best:
            m, w, t, hz, n = best
            worst.append(f"{s} {m:.3f} ({w}, {t} threads, {hz:g} Hz, {n} reps)")
    if worst:
        finding(items, "info", "CPU attributed to the wrong threads, worst cell per sampler "
                "(thread_tvd, 0 = each thread its true share): " + "; ".join(worst))


def findings_magnitude(items, runs, samplers):
    """Per sampler, how far its sample weights are from the true CPU time on average."""
    got = []
    for s in samplers:
        m, sd, n = stat(r["magnitude_error"] for r in ok(runs) if r["sampler"] == s)
        if n:
            got.append(f"{s} {pct(m)} (sd {pct(sd)}, {n} runs)")
    if got:
        finding(items, "info", "sample weights against the true CPU time, mean "
                "magnitude_error: " + ", ".join(got))


def findings_disturbance(items, runs, samplers):
    """What the samplers did to the workload: interrupted calls, throughput, corruption."""
    if finite_any(runs, "eintr_per_1k_samples"):
        hit = []
        for s in samplers:
            m, _, n = stat(r["eintr_per_1k_samples"] for r in ok(runs) if r["sampler"] == s)
            if n and m > 0:
                hit.append(f"{s} {m:.1f}")
        if hit:
            finding(items, "info", "system calls interrupted (EINTR per 1000 samples): " +
                    ", ".join(hit))
        else:
            n = sum(1 for r in ok(runs) if np.isfinite(r["eintr_per_1k_samples"]))
            finding(items, "info", f"no sampler caused an EINTR in the workloads ({n} runs)")
    got = []
    for s in samplers:
        m, sd, n = stat(r["overhead"] for r in ok(runs) if r["sampler"] == s)
        if n:
            got.append(f"{s} {m:.3f} ± {sd:.3f} ({n} runs)")
    if got:
        finding(items, "info", "the workload's throughput against none (overhead, 1 = no "
                "loss): " + ", ".join(got))
    bad = [r for r in ok(runs) if r.get("checksum_errors", 0) > 0]
    if bad:
        finding(items, "info", f"{len(bad)} runs computed wrong results (checksum errors: "
                f"{', '.join(sorted({r['sampler'] for r in bad}))}): the sampler corrupts state")


def findings_runs(items, runs):
    c = cells(runs)
    spread = []
    for key, rs in c.items():
        m, sd, n = stat(r["rate_accuracy"] for r in rs)
        if n > 1:
            spread.append((sd, key, m, n))
    if spread:
        sd, (s, w, t, hz), m, n = max(spread)
        med = float(np.median([x[0] for x in spread]))
        finding(items, "info", f"rate_accuracy over repetitions: median sd {med:.3f} over "
                f"{len(spread)} cells; noisiest {s} {w} {t} threads {hz:g} Hz: {m:.3f} ± "
                f"{sd:.3f} ({n} reps)")
    failed = [r for r in runs if r["status"] != "ok"]
    if failed:
        why = sorted({f"{r['sampler']}: {r['reason'] or r['status']}" for r in failed})
        finding(items, "warn", f"{len(failed)} of {len(runs)} runs did not finish ok: " +
                "; ".join(why[:5]) + (" …" if len(why) > 5 else ""))


# ---------------------------------------------------------------- HTML

CSS = """
body { font-family: sans-serif; max-width: 1150px; margin: 1em auto; color: #222; }
table { border-collapse: collapse; font-size: 12px; margin: 0.5em 0; }
th, td { border: 1px solid #ccc; padding: 2px 6px; text-align: right; }
th { background: #eee; } td.l, th.l { text-align: left; }
td.better { background: #d9f2d9; } td.worse { background: #f7d4d4; }
li.bad, li.warn, li.ok, li.info { color: #222; }
p.verdict { font-size: 22px; font-weight: bold; margin: 0.3em 0; }
p.verdict.pass { color: #070; } p.verdict.fail { color: #a00; }
td.ctx { color: #999; }
p.note { background: #fff6d5; padding: 4px 8px; border-left: 4px solid #e0b000; }
p.caption { font-size: 13px; color: #555; }
img { max-width: 100%; border: 1px solid #ddd; }
"""


def esc(x):
    return html.escape(str(x))


def table(header, rows, classes=None):
    out = ["<table><tr>" + "".join(f'<th class="l">{esc(h)}</th>' if i == 0 else
                                   f"<th>{esc(h)}</th>" for i, h in enumerate(header)) +
           "</tr>"]
    for ri, row in enumerate(rows):
        cls = classes[ri] if classes else [""] * len(row)
        cells_html = []
        for i, v in enumerate(row):
            c = " ".join(x for x in (cls[i], "l" if i == 0 else "") if x)
            cells_html.append(f'<td class="{c}">{esc(v)}</td>' if c else f"<td>{esc(v)}</td>")
        out.append("<tr>" + "".join(cells_html) + "</tr>")
    out.append("</table>")
    return "\n".join(out)


class Page:
    def __init__(self):
        self.parts = []

    def section(self, sid, title):
        if self.parts and self.parts[-1] != "<body>":
            self.parts.append("</section>")
        self.parts.append(f'<section id="{sid}"><h2>{esc(title)}</h2>')

    def add(self, s):
        self.parts.append(s)

    def p(self, s, cls=None):
        self.parts.append(f'<p class="{cls}">{esc(s)}</p>' if cls else f"<p>{esc(s)}</p>")

    def img(self, name, alt):
        self.parts.append(f'<p><img src="{esc(name)}" alt="{esc(alt)}"></p>')

    def html(self, title):
        return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
                f"<title>{esc(title)}</title><style>{CSS}</style></head>\n<body>\n"
                f"<h1>{esc(title)}</h1>\n" + "\n".join(self.parts) +
                "\n</section>\n</body></html>\n")


def better_class(metric, v, g):
    """'better' / 'worse' than gperftools by more than 10% of the error, else ''."""
    if not (np.isfinite(v) and np.isfinite(g)):
        return ""
    if metric in ("rate_accuracy", "overhead"):
        ev, eg = abs(v - 1), abs(g - 1)
    elif metric == "stack_correct_fraction":
        ev, eg = 1 - v, 1 - g
    else:
        ev, eg = v, g
    tol = 0.1 * max(eg, 1e-3)
    return "better" if ev < eg - tol else "worse" if ev > eg + tol else ""


VS_METRICS = ["rate_accuracy", "magnitude_error", "thread_tvd", "function_tvd",
              "stack_correct_fraction", "interval_jitter_ns", "overhead"]


def vs_gperftools(page, runs, samplers):
    c = cells(runs)
    base = {k[1:]: v for k, v in c.items() if k[0] == "gperftools"}
    metrics = [m for m in VS_METRICS if any(
        np.isfinite(stat(r[m] for r in rs)[0]) for rs in base.values())]
    if not base or not metrics:
        page.p("no gperftools runs (or none with metrics) in the data: nothing to compare "
               "against; add --sampler gperftools", "note")
        return
    rows, classes = [], []
    for key in sorted(base):
        g = {m: stat(r[m] for r in base[key])[0] for m in metrics}
        for s in samplers:
            if s == "gperftools" or (s,) + key not in c:
                continue
            rs = c[(s,) + key]
            row, cls = [f"{s}", key[0], key[1], f"{key[2]:g}"], ["", "", "", ""]
            for m in metrics:
                v = stat(r[m] for r in rs)[0]
                if np.isfinite(v) and np.isfinite(g[m]) and g[m] != 0:
                    row.append(f"{v:.3g} (×{v / g[m]:.2f})")
                elif np.isfinite(v):
                    row.append(f"{v:.3g} (gperftools {g[m]:.3g})")
                else:
                    row.append("-")
                cls.append(better_class(m, v, g[m]))
            rows.append(row)
            classes.append(cls)
    page.p("Each sampler's mean over repetitions, and in parentheses its ratio to gperftools "
           "in the same cell (workload, threads, Hz). Green: closer to the truth than "
           "gperftools by more than 10% of gperftools' error, red: further.", "caption")
    page.add(table(["sampler", "workload", "threads", "Hz"] + metrics, rows, classes))


def summary_table(page, runs, samplers):
    c = cells(runs)
    rows = []
    order = {s: i for i, s in enumerate(samplers)}
    for key in sorted(c, key=lambda k: (order.get(k[0], 99), k[1], k[2], k[3])):
        rs = c[key]
        total = sum(1 for r in runs if (r["sampler"], r["workload"], r["threads"],
                                        r["hz"]) == key)
        row = [key[0], key[1], key[2], f"{key[3]:g}", f"{len(rs)}/{total}"]
        for m in ("rate_accuracy", "magnitude_error", "thread_tvd"):
            mean, sd, n = stat(r[m] for r in rs)
            row.append(f"{mean:.3f} ± {sd:.3f}" if n else "-")
        row.append(fmt_ns(stat(r["suspend_window_p99_ns"] for r in rs)[0]))
        row.append(fmt_ns(stat(r["stop_latency_p50_ns"] for r in rs)[0]))
        rows.append(row)
    page.add(table(["sampler", "workload", "threads", "Hz", "ok runs", "rate_accuracy",
                    "magnitude_error", "thread_tvd", "window p99", "stop p50"], rows))
    bad = [r for r in runs if r["status"] != "ok"]
    if bad:
        page.add(table(["run", "sampler", "workload", "threads", "status", "reason"],
                       [[r["run_id"], r["sampler"], r["workload"], r["threads"], r["status"],
                         r["reason"]] for r in bad]))


FOOTPRINT = [  # (metric, header, scale, decimals); missing columns (older files) print '-'
    ("sampler_cpu_measured_fraction", "CPU measured %", 100, 2),
    ("sampler_cpu_fraction", "CPU claimed %", 100, 2),
    ("sampler_cpu_unreported_fraction", "unreported %", 100, 2),
    ("rss_peak_excess_bytes", "RSS peak excess KB", 1e-3, 0),
    ("rss_growth_bytes_per_s", "RSS growth KB/s", 1e-3, 1),
    ("integrity_violations", "integrity violations", 1, 0),
    ("stack_peak_bytes", "stack peak KB", 1e-3, 1),
]


def median(values):
    """Median of the finite values, NaN when none."""
    v = [x for x in values if np.isfinite(x)]
    return float(np.median(v)) if v else float("nan")


def footprint_table(page, runs, samplers):
    """What each sampler cost the process, per cell: medians over its ok runs of the CPU
    measured from the process against the CPU it claims, its private memory's peak above
    `none` and growth, and the integrity counts when the file has them (docs/metrics.md)."""
    c = cells(runs)
    order = {s: i for i, s in enumerate(samplers)}
    rows = []
    for key in sorted(c, key=lambda k: (order.get(k[0], 99), k[1], k[2], k[3])):
        rs = c[key]
        row = [key[0], key[1], key[2], f"{key[3]:g}"]
        for m, _, scale, dec in FOOTPRINT:
            v = median(float(r.get(m, np.nan)) for r in rs)
            # + 0.0: a value that rounds to zero prints 0, never -0
            row.append(f"{round(v * scale, dec) + 0.0:.{dec}f}" if np.isfinite(v) else "-")
        rows.append(row)
    if not any(x != "-" for row in rows for x in row[4:]):
        page.p("no footprint metrics in these runs (files written before them)", "note")
        return
    page.p("What each sampler cost the process, measured from the process (medians over the "
           "cell's ok runs, docs/metrics.md \"What the sampler costs the process\"): the run's "
           "CPU less the workload threads' and the harness's, against the sampler_cpu_ns it "
           "claims (% of a core); its private memory above `none`'s and its growth; the "
           "integrity counts where the file has them.", "caption")
    page.add(table(["sampler", "workload", "threads", "Hz"] + [h for _, h, _, _ in FOOTPRINT],
                   rows))


def host_list(runs):
    """The hosts of the runs, in order of their first run: one dict each (run_host)."""
    hosts = {}
    for r in runs:
        hosts.setdefault(r["host"]["key"], r["host"])
    return list(hosts.values())


def host_labels(hosts):
    """Each host's name: its host name, or its fingerprint when two share the name."""
    names = [h["host"] for h in hosts]
    return [h["fingerprint"] if names.count(h["host"]) > 1 else h["host"] for h in hosts]


# The side-by-side comparison: (metric, column title, format).
SIDE_METRICS = [("rate_accuracy", "rate_accuracy", "{:.3f}"),
                ("magnitude_error", "magnitude_error", "{:.3f}"),
                ("thread_tvd", "thread_tvd", "{:.3f}"),
                ("suspend_window_p50_ns", "window p50", None),
                ("suspend_window_p99_ns", "window p99", None),
                ("suspend_window_p50_floor_ratio", "window p50 / floor", "{:.1f}×"),
                ("suspend_window_p99_floor_ratio", "window p99 / floor", "{:.1f}×"),
                ("stop_latency_p50_ns", "stop p50", None),
                ("stop_latency_p99_ns", "stop p99", None)]


def hosts_section(page, runs, samplers):
    """Several hosts in the data (a merged file, or files of several machines): the same
    cell's key metrics per host in adjacent columns, and each host's calibration floors."""
    hosts = host_list(runs)
    labels = host_labels(hosts)
    page.p("The files hold runs of several hosts (a host is a machine class: its host "
           "fingerprint). The same cell on each host, side by side: means over its ok runs "
           "on that host; '-' where a host has no value. Floor ratios divide by each host's "
           "own calibration floor (below). The other sections pool the hosts.", "caption")
    page.add(table(["host", "fingerprint", "kernel", "nproc", "tick Hz", "revision", "runs"],
                   [[lb, h["fingerprint"] or "-", h["kernel"], h["nproc"], h["tick_hz"],
                     h["git_rev"], sum(1 for r in runs if r["host"]["key"] == h["key"])]
                    for lb, h in zip(labels, hosts)]))
    names = []
    for c in (c for h in hosts for c in h["calib"]):
        if c["name"] not in names:
            names.append(c["name"])
    if names:
        rows = []
        for n in names:
            row = [n]
            for h in hosts:
                got = [c for c in h["calib"] if c["name"] == n and c.get("phase") == "start"]
                got = got or [c for c in h["calib"] if c["name"] == n]
                c = got[0] if got else None
                row.append("-" if c is None or int(c["n"]) == 0 else
                           f"{fmt_ns(float(c['p50_ns']))} / {fmt_ns(float(c['p99_ns']))}")
            rows.append(row)
        page.p("Calibration floors per host (start of the bench; p50 / p99): what each "
               "host's own mechanisms cost, the denominators of its floor ratios.", "caption")
        page.add(table(["floor"] + labels, rows))
    else:
        page.p("no host in these files has a calibration table (schema 1, or merged before "
               "runs kept their host's): floor ratios are not available", "note")
    by = {}
    for r in ok(runs):
        if r["sampler"] in samplers:
            key = (r["sampler"], r["workload"], r["threads"], r["hz"])
            by.setdefault(key, {}).setdefault(r["host"]["key"], []).append(r)
    order = {s: i for i, s in enumerate(samplers)}
    header, rows = ["cell"], []
    for _, title, _ in SIDE_METRICS:
        header += [f"{title} {lb}" for lb in labels]
    for key in sorted(by, key=lambda k: (len(by[k]) < 2, order.get(k[0], 99), k[1:])):
        row = [f"{key[0]}/{key[1]}/{key[2]}t/{key[3]:g}Hz"]
        for m, _, fmt in SIDE_METRICS:
            for h in hosts:
                v = stat(r[m] for r in by[key].get(h["key"], []))[0]
                row.append("-" if not np.isfinite(v) else fmt.format(v) if fmt else fmt_ns(v))
        rows.append(row)
    page.add(table(header, rows))


def history_section(page, outdir, files, metrics):
    """The History section: `sampbench history` over files (the chosen metrics per cell
    over the commits, the gate's verdicts marked), its table and its plot."""
    exe = os.environ.get("SAMPBENCH_BIN") or "sampbench"
    cmd = [exe, "history", "--plot", os.path.join(outdir, "history.svg")]
    if metrics:
        cmd += ["--metric", metrics]
    try:
        p = subprocess.run(cmd + files, capture_output=True, text=True)
    except OSError as e:
        die(f"cannot run {exe} history: {e.strerror}", 1)
    if p.returncode != 0:
        lines = p.stderr.strip().splitlines() or [f"{exe} history failed ({p.returncode})"]
        print(lines[-1], file=sys.stderr)
        sys.exit(p.returncode)
    out = "\n".join(l for l in p.stdout.splitlines() if not l.startswith("plot: "))
    page.p(f"{len(files)} files, oldest first by creation time, headed by their git "
           "revision (+: modified tree); a value per cell (median of its ok runs; A/B files: "
           "variant A). The gate row and '!' come from FILE.gate.json beside each file "
           "(as make bench writes it): FAIL and '!' where the gate failed that metric of "
           "that cell; red rings in the plot. Computed by sampbench history.", "caption")
    page.add(f"<pre>{esc(out)}</pre>")
    page.img("history.svg", "history plot")


def build(paths, outdir, history=None, history_metrics=None):
    hosts, all_runs = load(paths)
    import_modules(plotting=True)
    runs = [r for r in all_runs if r["sampler"] != "none"]  # none: the overhead reference
    if not ok(runs):
        die(f"no finished runs of a sampler in {', '.join(paths)}", 1)
    samplers = sampler_order(runs)
    palette = plt.get_cmap("tab10").colors
    colors = {s: palette[i % len(palette)] for i, s in enumerate(samplers)}
    figs = Figures(outdir, colors)
    page = Page()
    tick = most_common(r["tick_hz"] for r in runs)
    nproc = most_common(r["nproc"] for r in runs)
    hz_fixed = most_common([r["hz"] for r in ok(runs)], prefer=100.0)
    threads_all = sorted({r["threads"] for r in ok(runs)})
    by_threads = {t: len({r["hz"] for r in ok(runs) if r["threads"] == t}) for t in threads_all}
    t_fixed = max(threads_all, key=lambda t: (by_threads[t], t))

    page.section("verdict", "Verdict")
    verdict.section(page, table, esc, os.environ.get("SAMPBENCH_BIN") or "sampbench", paths)
    page.section("versus", "setitimer vs Mach, cell by cell")
    page.p("itimer (setitimer, process-wide CPU timer) and gperftools (the same timer in "
           "libprofiler) against mach and mach-idle (stop each thread, read its registers, "
           "walk its stack); ctimer, gperftools-pt, perf and ptrace in grey as context. Mean "
           "± twice the standard error over repetitions, per cell.", "caption")
    tables = sbfile.sampler_tables(os.environ.get("SAMPBENCH_BIN") or "sampbench")
    if not versus.section(page, table, cells(runs), hz_fixed, tables):
        page.p("no cell has both a process-wide CPU timer (itimer, gperftools) and a "
               "suspend sampler (mach, mach-idle)", "note")
    page.section("host", "Runs")
    page.add(table(["file", "host", "kernel", "tick Hz", "nproc", "compiler", "sampbench",
                    "revision", "created", "runs"],
                   [[h["file"], h.get("host"), h.get("kernel"),
                     f"{h.get('tick_hz')} ({h.get('tick_source')})", h.get("nproc"),
                     h.get("compiler"), h.get("version"), h.get("git_rev"), h.get("created"),
                     sum(1 for r in all_runs if os.path.basename(r["file"]) == h["file"])]
                    for h in hosts]))
    page.p(f"{len(all_runs)} runs ({len(ok(all_runs))} ok) of samplers {', '.join(samplers)} on "
           f"workloads {', '.join(sorted({r['workload'] for r in runs}))}; threads "
           f"{', '.join(map(str, threads_all))}; Hz "
           f"{', '.join(f'{h:g}' for h in sorted({r['hz'] for r in runs}))}.")

    if len(host_list(all_runs)) > 1:
        page.section("hosts", "Hosts side by side")
        hosts_section(page, all_runs, samplers)

    items = []
    findings_rate(items, runs, samplers)
    findings_tick(items, runs, samplers)
    findings_pair(items, runs)
    findings_threads(items, runs, samplers)
    findings_magnitude(items, runs, samplers)
    findings_disturbance(items, runs, samplers)
    findings_runs(items, all_runs)
    page.section("findings", "Observations")
    page.p("What the runs show about each mechanism, pooled per sampler over the file, with "
           "the numbers: descriptions with no threshold of their own, not verdicts (the "
           "verdict and its limits are the gate's, above).", "caption")
    page.add("<ul>" + "".join(f'<li class="{lv}">{esc(m)}</li>' for lv, m in items) + "</ul>")

    for sid, metric, ideal, title in (("rate", "rate_accuracy", 1.0, "Rate accuracy"),
                                      ("magnitude", "magnitude_error", 0.0,
                                       "Magnitude error")):
        page.section(sid, title)
        if not finite_any(runs, metric):
            page.p(f"no run has {metric}", "note")
            continue
        page.p(f"{metric}: mean over repetitions, bars one standard deviation. Top: vs "
               f"workload threads at {hz_fixed:g} Hz ({nproc} CPUs drawn); bottom: vs "
               f"requested Hz at {t_fixed} threads (kernel tick drawn).", "caption")
        fig = line_figure(figs, runs, samplers, metric, "threads", "hz", hz_fixed, ideal,
                          nproc=nproc)
        page.img(figs.save(fig, f"{sid}_threads.png"), f"{metric} vs threads")
        if len(threads_all) < 2:
            page.p(f"only {threads_all[0]} threads in the data: run more thread counts "
                   "(one file each) to draw lines", "note")
        fig = line_figure(figs, runs, samplers, metric, "hz", "threads", t_fixed, ideal,
                          tick=tick)
        page.img(figs.save(fig, f"{sid}_hz.png"), f"{metric} vs Hz")
        if by_threads[t_fixed] < 2:
            page.p(f"only {hz_fixed:g} Hz in the data: run other rates to see the tick cap",
                   "note")

    page.section("threads", "Thread attribution")
    picked = {s: r for s, r in thread_runs(runs, samplers, hz_fixed).items()
              if thread_shares(r)}
    if picked:
        page.p("Per-thread share of the samples (of the sample weights for wall-clock "
               "samplers) against the true CPU share, one run per sampler (skewed workload, "
               "most threads); on the diagonal is exact.", "caption")
        page.img(figs.save(scatter_figure(picked, colors), "threads_scatter.png"),
                 "thread share scatter")
    else:
        page.p("no run with more than one thread and samples", "note")
    fig = bar_figure(runs, samplers, ["thread_tvd", "wall_thread_tvd"], colors,
                     select=lambda r: r["threads"] == t_fixed)
    if fig:
        page.p(f"thread_tvd at {t_fixed} threads, all Hz, mean and sd over runs.", "caption")
        page.img(figs.save(fig, "threads_tvd.png"), "thread_tvd bars")

    page.section("latency", "Suspend latency")
    lat_cells = sorted({(r["workload"], r["threads"]) for r in ok(runs)
                        if r["hz"] == hz_fixed and np.isfinite(r.get("window_ns", [])).any()},
                       key=lambda c: (c[0] != "balanced", c[1]))
    data, floors = {}, {}
    for w, t in lat_cells[:2]:
        title = f"suspend window, {w}, {t} threads, {hz_fixed:g} Hz"
        sel = [r for r in ok(runs) if (r["workload"], r["threads"], r["hz"]) == (w, t, hz_fixed)]
        data[title] = latency_data(sel, samplers, "window_ns")
        floors[title] = host_floor(sel)
    if any(data.values()):
        missing = [s for s in samplers if not any(s in d for d in data.values())]
        page.p("CDF of the suspend window (a signal sampler: its handler's run time) per "
               "cell, over every sample of its runs (log x), with this host's busy-tick "
               "floor as calibrated in the file; the gate's budgets are multiples of it." +
               (f" No window data from {', '.join(missing)}." if missing else ""), "caption")
        page.img(figs.save(cdf_figure(data, colors, floors), "latency_cdf.png"), "latency CDF")
    else:
        page.p("no sampler in the data measures stop latency or suspend window", "note")

    page.section("overhead", "Overhead and disturbance")
    fig = bar_figure(runs, samplers, ["overhead", "sampler_cpu_fraction",
                                      "eintr_per_1k_samples"], colors)
    if fig:
        page.img(figs.save(fig, "overhead.png"), "overhead bars")
        if not finite_any(runs, "overhead"):
            page.p("overhead needs a `none` run in the same file: not measured here", "note")
    else:
        page.p("no overhead, sampler CPU or EINTR data in these runs", "note")
    footprint_table(page, all_runs, ["none"] + samplers)

    page.section("pauses", "Observed pauses")
    pcolors = dict(colors, none=(0.6, 0.6, 0.6))
    fig = bar_figure([r for r in all_runs if r["threads"] == t_fixed], ["none"] + samplers,
                     ["pause_p99_ns", "pause_fraction", "window_observed_p99_ns"], pcolors)
    if fig:
        page.p(f"What the workload threads lived through ({t_fixed} threads, all Hz): the "
               "p99 of the gaps in their own progress clock, the share of compute time lost "
               "to gaps, and the gap covering each sample that reports a suspend window "
               "(docs/metrics.md, \"Observed pauses\"); `none` in grey is the host's own "
               "share, the reference of pause_excess.", "caption")
        page.img(figs.save(fig, "pauses.png"), "observed pauses bars")
    else:
        page.p("no progress-clock data in these runs (files written before the clock)",
               "note")

    page.section("functions", "Function attribution and stack correctness")
    fig = bar_figure(runs, samplers, ["function_tvd", "stack_correct_fraction",
                                      "misattributed_fraction", "truncated_fraction"], colors)
    if fig:
        page.img(figs.save(fig, "functions.png"), "function attribution bars")
        absent = [m for m in ("function_tvd", "stack_correct_fraction")
                  if not finite_any(runs, m)]
        if absent:
            page.p(f"{', '.join(absent)}: not measured by these workloads", "note")
    else:
        page.p("no function attribution or stack metrics in these runs", "note")

    page.section("gperftools", "vs gperftools")
    vs_gperftools(page, runs, samplers)

    page.section("runs", "All cells")
    summary_table(page, all_runs, samplers)

    if history:
        page.section("history", "History")
        history_section(page, outdir, history, history_metrics)

    title = f"sampbench accuracy report: {', '.join(h['file'] for h in hosts)}"
    tmp = os.path.join(outdir, ".index.html.tmp")
    with open(tmp, "w", encoding="utf-8") as f:
        f.write(page.html(title))
    os.replace(tmp, os.path.join(outdir, "index.html"))
    return items, figs.names


class Parser(argparse.ArgumentParser):
    def error(self, message):
        die(f"report: {message} (see 'sampbench report --help')")


def main():
    ap = Parser(prog="sampbench report", description=__doc__.splitlines()[0])
    ap.add_argument("files", nargs="+", metavar="FILE.h5")
    ap.add_argument("-o", "--output", required=True, metavar="DIR")
    ap.add_argument("--history", nargs="+", metavar="FILE.h5")
    ap.add_argument("--history-metric", metavar="M[,M...]")
    args = ap.parse_args()
    for p in args.files + (args.history or []):
        if not os.access(p, os.R_OK):
            die(f"cannot read {p}: {os.strerror(2) if not os.path.exists(p) else 'permission denied'}")
    import_modules(plotting=False)
    try:
        os.makedirs(args.output, exist_ok=True)
    except OSError as e:
        die(f"cannot create {args.output}: {e.strerror}", 1)
    items, images = build(args.files, args.output, args.history, args.history_metric)
    print(f"{os.path.join(args.output, 'index.html')}: {len(items)} findings, "
          f"{len(images)} images")


if __name__ == "__main__":
    main()
