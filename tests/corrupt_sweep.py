#!/usr/bin/python3
"""corrupt_sweep.py [-n N] [-j JOBS] [--seed S] [--file F.h5] [--bin B] - damaged results files
against every reader.

Writes a 2-run results file with `sampbench run` (or takes --file), makes N copies of it
with 1 to 50 random bytes changed each (seeded: the same seed gives the same copies), and
runs `show`, `top`, `export`, `gate`, `report` and `baseline` (into a scratch file) on
each copy with a 10 s limit. Every
answer must be one of:
  read     exit 0 (the damage hit padding or free space, or data no check covers)
  verdict  exit 1 with the file read: gate's regression verdict, top/report finding
           nothing to show
  refused  exit 2 and exactly one line on stderr
Anything else is BAD: a signal, a run over 10 s, exit 2 with more or less than one line,
any other exit status. Prints one table row per command; exits 1 when anything was BAD.
Run from the repository root (ci/budgets, analysis/report.py). `make check` does not run
it (about 10 min for N=1000 on 2 cores); docs/hdf5.md has the last numbers.
"""
import argparse
import concurrent.futures
import os
import random
import shutil
import subprocess
import sys
import tempfile
import time

LIMIT_S = 10.0
COMMANDS = ["show", "top", "export", "gate", "report", "baseline"]


def argv_for(cmd, binary, path, scratch):
    if cmd == "export":
        return [binary, "export", "--format", "folded", path]
    if cmd == "report":
        return [binary, "report", path, "-o", os.path.join(scratch, "report")]
    if cmd == "baseline":  # into the scratch directory, never results/baselines/
        return [binary, "baseline", "--force", "--to", os.path.join(scratch, "b.h5"), path]
    return [binary, cmd, path]


def run_one(cmd, binary, path, scratch):
    """(outcome, detail, seconds) of one reader on one file."""
    t0 = time.monotonic()
    try:
        p = subprocess.run(argv_for(cmd, binary, path, scratch), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=LIMIT_S)
    except subprocess.TimeoutExpired:
        return "BAD", f"over {LIMIT_S:.0f} s", LIMIT_S
    dt = time.monotonic() - t0
    err = p.stderr.decode("utf-8", "replace").splitlines()
    if p.returncode < 0:
        return "BAD", f"signal {-p.returncode}", dt
    if p.returncode == 0:
        return "read", "", dt
    if p.returncode == 1:
        return "verdict", err[0] if err else "", dt
    if p.returncode == 2 and len(err) == 1:
        return "refused", err[0], dt
    return "BAD", f"exit {p.returncode} after {dt:.1f} s, {len(err)} stderr lines: " \
                  f"{' | '.join(err[:3])}", dt


def corrupt(src, dst, rng):
    data = bytearray(open(src, "rb").read())
    for _ in range(rng.randint(1, 50)):
        data[rng.randrange(len(data))] = rng.randrange(256)
    with open(dst, "wb") as f:
        f.write(data)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("-n", type=int, default=1000, help="damaged copies (default 1000)")
    ap.add_argument("-j", type=int, default=1, help="parallel readers (default 1)")
    ap.add_argument("--seed", type=int, default=15)
    ap.add_argument("--file", help="results file to damage (default: a new 2-run file)")
    ap.add_argument("--bin", default=os.path.join(os.environ.get("BUILD", "build"),
                                                  "sampbench"))
    args = ap.parse_args()
    scratch = tempfile.mkdtemp(prefix="sampbench-sweep-")
    try:
        src = args.file
        if not src:
            src = os.path.join(scratch, "orig.h5")
            subprocess.run([args.bin, "run", "-q", "-s", "ctimer,itimer", "-w", "balanced",
                            "-t", "2", "-d", "0.2", "-o", src], check=True)
        rng = random.Random(args.seed)
        files = []
        for i in range(args.n):
            dst = os.path.join(scratch, f"bad{i:04d}.h5")
            corrupt(src, dst, rng)
            files.append(dst)
        tally = {c: {"read": 0, "verdict": 0, "refused": 0, "BAD": 0, "max_s": 0.0}
                 for c in COMMANDS}
        bad = []
        t0 = time.monotonic()
        with concurrent.futures.ThreadPoolExecutor(max_workers=args.j) as pool:
            jobs = {}
            for i, f in enumerate(files):
                for c in COMMANDS:
                    sub = os.path.join(scratch, f"out{i:04d}-{c}")
                    os.makedirs(sub, exist_ok=True)
                    jobs[pool.submit(run_one, c, args.bin, f, sub)] = (c, f)
            for fut in concurrent.futures.as_completed(jobs):
                c, f = jobs[fut]
                outcome, detail, dt = fut.result()
                tally[c][outcome] += 1
                tally[c]["max_s"] = max(tally[c]["max_s"], dt)
                if outcome == "BAD":
                    keep = os.path.join(tempfile.gettempdir(), "sweep-" + os.path.basename(f))
                    shutil.copy(f, keep)
                    bad.append(f"{c} {keep}: {detail}")
        print(f"{args.n} damaged copies of {os.path.basename(src)} ({os.path.getsize(src)} "
              f"bytes, 1-50 bytes changed each, seed {args.seed}), "
              f"{time.monotonic() - t0:.0f} s")
        print(f"{'command':8} {'read':>6} {'verdict':>8} {'refused':>8} {'BAD':>5} "
              f"{'slowest':>8}")
        for c in COMMANDS:
            t = tally[c]
            print(f"{c:8} {t['read']:6} {t['verdict']:8} {t['refused']:8} {t['BAD']:5} "
                  f"{t['max_s']:7.2f}s")
        for b in sorted(bad)[:20]:
            print("BAD", b)
        return 1 if bad else 0
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
