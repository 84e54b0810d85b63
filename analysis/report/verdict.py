"""verdict.py - the report's first section: the gate's verdict on each file.

The report judges nothing with thresholds of its own. It runs the gate of the same binary
on each file, with the same rules `make bench` uses (ci/budgets, the file's calibration,
this machine's baseline when `sampbench baseline --path` names one), and shows its
verdict, its failed and warned rows, and why the rows that were not judged were not.
"""
import json
import os
import re
import subprocess
import tempfile


def run_gate(exe, path):
    """The gate's JSON verdict on path (a dict), with "source" saying how it was made, or
    {"error": line} when the gate could not judge the file."""
    cmd = [exe, "gate"]
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    budgets = os.path.join(root, "ci", "budgets")
    if os.path.exists(budgets):  # the tree's rules, wherever the report is run from
        cmd += ["--budgets", "ci/budgets"]
    base = subprocess.run([exe, "baseline", "--path"], capture_output=True, text=True)
    baseline = base.stdout.strip() if base.returncode == 0 else ""
    if baseline and os.path.exists(baseline):
        cmd += ["--baseline", baseline]
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "gate.json")
        try:
            p = subprocess.run(cmd + ["--json", out, os.path.abspath(path)], cwd=root,
                               capture_output=True, text=True)
        except OSError as e:
            return {"error": f"cannot run {exe} gate: {e.strerror}"}
        if p.returncode not in (0, 1) or not os.path.exists(out):
            lines = p.stderr.strip().splitlines() or [f"gate exited {p.returncode}"]
            return {"error": lines[-1]}
        with open(out, encoding="utf-8") as f:
            d = json.load(f)
    d["source"] = " ".join(["sampbench"] + cmd[1:] + [os.path.basename(path)])
    d["baseline_used"] = bool(baseline and os.path.exists(baseline))
    return d


def fmt_value(metric, v):
    if v is None:
        return "-"
    if metric.endswith("_ns"):
        return f"{v / 1e3:.1f} µs" if abs(v) < 1e6 else f"{v / 1e6:.2f} ms"
    return f"{v:.3f}" if isinstance(v, float) else str(v)


def cell_name(c):
    return f"{c['sampler']}/{c['workload']}/{c['threads']}t/{c['hz']:g}Hz"


def reason_kind(reason):
    """A not-judged row's reason without its cell's particulars, to group rows by."""
    r = re.sub(r"\s*\([^()]*:\d+\)$", "", reason)     # the rule's file:line
    r = re.sub(r"on \S+ \(", "on a workload (", r)
    r = re.sub(r": \S+ does not claim", ": the sampler does not claim", r)
    r = re.sub(r"no \S+ \S+ in this cell", "no reference value in this cell", r)
    r = re.sub(r"[0-9.]+ ?(µs|ms|ns)?", "N", r)
    return r


def section(page, table, esc, exe, paths):
    """Writes the verdict section of each file into page. Returns the verdicts."""
    verdicts = []
    for path in paths:
        d = run_gate(exe, path)
        verdicts.append(d)
        name = esc(os.path.basename(path))  # page.add takes HTML, page.p text
        if "error" in d:
            page.p(f"{os.path.basename(path)}: the gate could not judge this file: {d['error']}",
                   "note")
            continue
        ok = d["verdict"] == "pass"
        page.add(f'<p class="verdict {"pass" if ok else "fail"}">{name}: '
                 f'{"PASS" if ok else "FAIL"}</p>')
        page.add(table(["file", "verdict", "checks", "failed", "warnings",
                        "not measured or not applicable", "expected failures", "computed by"],
                       [[os.path.basename(path), "PASS" if ok else "FAIL", d["checks"],
                         d["failed"], d["warned"], d["not_measured"], d["expected"],
                         d["source"] + ("" if d["baseline_used"]
                                        else " (no baseline of this machine: budgets only)")]],
                       [["l", "", "", "", "", "", "", "l"]]))
        page.p("The rules and why each is fair: docs/gate.md.", "caption")
        for state, title in (("fail", "Failed"), ("undecided", "Too few runs to judge"),
                             ("warn", "Warnings")):
            rows = [r for r in d["results"] if r["state"] == state]
            if not rows:
                continue
            page.add(f"<h3>{title} ({len(rows)})</h3>")
            page.add(table(["cell", "metric", "baseline", "current", "reason", "why the rule applies"],
                           [[cell_name(r), r["metric"], fmt_value(r["metric"], r["baseline"]),
                             fmt_value(r["metric"], r["current"]), r["reason"], r["class"]]
                            for r in rows],
                           classes=[["l", "l", "", "", "l", "l"]] * len(rows)))
        na = [r for r in d["results"] if r["state"] == "not_measured"]
        if na:
            groups = {}
            for r in na:
                groups.setdefault(reason_kind(r["reason"]), []).append(r)
            page.add(f"<h3>Not judged ({len(na)})</h3>")
            page.p("A metric a sampler does not claim, or that nobody could measure on a "
                   "workload, is not measured; a budget the host's own floor cannot meet is "
                   "not applicable. Neither is a pass.", "caption")
            page.add(table(["reason", "rows", "for example"],
                           [[k, len(v), f"{cell_name(v[0])} {v[0]['metric']}"]
                            for k, v in sorted(groups.items(), key=lambda kv: -len(kv[1]))],
                           classes=[["l", "", "l"]] * len(groups)))
    return verdicts
