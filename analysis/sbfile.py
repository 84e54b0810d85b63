"""sbfile.py - the one reader of sampbench results files for Python (analysis/report.py,
tools/findings.py): the only module that imports h5py. It checks the schema, reads each
file once in a child process first (libhdf5 may crash or loop on a damaged file), resolves
each run's host as results/h5io.h's h5_read_hosts() does, and names the metric columns and
the sampler classes from the file and from `sampbench list --json`, never from lists of
its own. Problems are one line on stderr and exit 2 (die), prefixed with PROG.
"""
import json
import os
import signal
import subprocess
import sys
import time

PROG = "sampbench"  # the prefix of die()'s line: the calling tool's name
SCORED = ("ok", "lossy")  # statuses whose runs have metrics (core/run.h)
# The /runs columns that are not metrics (docs/hdf5.md "/runs"); every other column is one
# metric of core/metrics.h's SB_METRICS, in its order.
RUN_COLUMNS = ("run_id", "group", "sampler", "workload", "threads", "hz", "duration_s",
               "repetition", "status", "reason", "start_time", "clock", "wall_s",
               "nsamples", "variant")

h5py = None


def die(msg, code=2):
    print(f"{PROG}: {msg}", file=sys.stderr)
    sys.exit(code)


def import_h5py():
    """h5py, imported once; a missing module is one line and exit 1."""
    global h5py
    if h5py is None:
        try:
            import h5py as mod
        except ImportError:
            die("python module h5py missing (apt-get install python3-h5py, or make deps)", 1)
        h5py = mod
    return h5py


def metric_columns(run):
    """The metric names of a run dict (load_file) in file order: its /runs columns that are
    not RUN_COLUMNS, a `metric_` prefix (a metric named like a column) removed."""
    return [k[7:] if k.startswith("metric_") else k for k in run["columns"]
            if k not in RUN_COLUMNS]


def sampler_tables(exe):
    """`exe list --json`: {"samplers": [{name, clock, flags, caps}], "workloads": [name]},
    in table order (sampler/table_*.c, workloads/). A run's sampler that is not in it (a
    plugin, a file of another build) has no class."""
    try:
        p = subprocess.run([exe, "list", "--json"], capture_output=True, text=True)
        if p.returncode == 0:
            t = json.loads(p.stdout)
            if isinstance(t.get("samplers"), list) and isinstance(t.get("workloads"), list):
                return t
    except (OSError, ValueError, AttributeError):
        pass
    die(f"cannot read the sampler table from '{exe} list --json'")


def text(v):
    return v.decode("utf-8", "replace") if isinstance(v, bytes) else v


SCHEMAS = (1, 2)  # results schema versions this report reads (docs/hdf5.md)


def host_tables(loc):
    """({fact: value}, [calibration rows]) of an HDF5 file or run group; empty when it has
    none (schema 1, a run of the root's host)."""
    facts, calib = {}, []
    if "host_facts" in loc:
        facts = {text(row["name"]): float(row["value"]) for row in loc["host_facts"][:]}
    if "calibration" in loc:
        calib = [{k: text(row[k]) for k in loc["calibration"].dtype.names}
                 for row in loc["calibration"][:]]
    return facts, calib


def run_host(g, attrs, root_tables):
    """The host a run group records (a merged file holds runs of several): its attributes,
    its own facts and calibration, else the root's when it names the root's host and
    fingerprint (h5io.h, h5_read_hosts)."""
    h = {k: attrs.get(k) for k in ("host", "fingerprint", "kernel", "nproc", "tick_hz",
                                   "git_rev", "compiler")}
    if g is not None:
        h.update({k: text(g.attrs[k]) for k in h if k in g.attrs})
    if g is not None and "host_facts" in g:
        h["facts"], h["calib"] = host_tables(g)
    elif (h["host"], h["fingerprint"]) == (attrs.get("host"), attrs.get("fingerprint")):
        h["facts"], h["calib"] = root_tables
    else:
        h["facts"], h["calib"] = {}, []
    # a host is a machine class, as the gate groups them (analysis/gate_eval.c)
    h["key"] = h["fingerprint"] or h["host"]
    return h


def load_file(path, samples=True):
    """(root attributes, runs) of one file: attrs holds the root's attributes, "file" and
    "root_tables" (host_tables of the root); one dict per /runs row, its "columns" the
    table's column names, its "host" (run_host), and with samples the scored runs' stop
    latencies, suspend windows and thread rows. Any problem is one line and exit 2 (die)."""
    try:
        f = import_h5py().File(path, "r")
    except Exception as e:  # OSError, and anything h5py raises on a damaged superblock
        die(f"cannot read {path}: {(str(e).splitlines() or ['not an HDF5 file'])[0]}")
    runs = []
    try:
        with f:
            attrs = {k: text(v) for k, v in f.attrs.items()}
            if attrs.get("schema_version") not in SCHEMAS:
                die(f"cannot read {path}: schema_version {attrs.get('schema_version')}, "
                    f"want {' or '.join(map(str, SCHEMAS))}")
            if "runs" not in f:
                die(f"cannot read {path}: no /runs table")
            attrs["file"] = os.path.basename(path)
            root_tables = host_tables(f)
            attrs["root_tables"] = root_tables
            table = f["runs"][:]
            for row in table:
                r = {k: text(row[k]) for k in table.dtype.names}
                r["columns"] = table.dtype.names
                r["tick_hz"], r["nproc"], r["file"] = attrs["tick_hz"], attrs["nproc"], path
                g = f.get(r["group"])
                r["host"] = run_host(g, attrs, root_tables)
                if samples and r["status"] in SCORED and g is not None:
                    s = g["samples"][:]
                    r["stop_ns"] = s["stop_latency_ns"].astype(float)
                    r["window_ns"] = s["suspend_window_ns"].astype(float)
                    r["thread_rows"] = g["threads"][:]
                runs.append(r)
    except SystemExit:
        raise
    except Exception as e:  # a damaged or foreign file: KeyError, ValueError, OSError, ...
        msg = (str(e).splitlines() or [type(e).__name__])[0]
        die(f"cannot read {path}: damaged or not a sampbench results file ({msg})")
    return attrs, runs


def check_readable(path):
    """Reads path once in a child process first: libhdf5 may crash or loop on a damaged
    file (schema 1 files have no checksums), and the report must answer with one line and
    exit 2, never a signal or a hang. Returns when the child read it cleanly."""
    limit = 5 + os.path.getsize(path) / 1e6  # s: 5 s, plus 1 s per MB
    sys.stdout.flush()
    sys.stderr.flush()
    rfd, wfd = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(rfd)
        os.dup2(wfd, 2)  # its line, and whatever glibc or libhdf5 print: the parent sorts
        code = 0
        try:
            load_file(path)
        except SystemExit as e:
            code = e.code if isinstance(e.code, int) else 2
        except BaseException:
            code = 2
        sys.stderr.flush()
        os._exit(code)
    os.close(wfd)
    os.set_blocking(rfd, False)
    said = b""
    deadline = time.monotonic() + limit
    while True:
        try:
            said += os.read(rfd, 65536)
        except BlockingIOError:
            pass
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            os.close(rfd)
            die(f"cannot read {path}: damaged file (its HDF5 reader did not finish "
                f"in {limit:.0f} s)")
        time.sleep(0.01)
    try:
        said += os.read(rfd, 65536)
    except BlockingIOError:
        pass
    os.close(rfd)
    if os.WIFSIGNALED(status):
        die(f"cannot read {path}: damaged file (its HDF5 reader was killed by "
            f"{signal.Signals(os.WTERMSIG(status)).name})")
    if os.WEXITSTATUS(status) != 0:
        ours = [l for l in said.decode("utf-8", "replace").splitlines()
                if l.startswith("sampbench: ")]
        if ours:
            print(ours[-1], file=sys.stderr)
            sys.exit(os.WEXITSTATUS(status))
        die(f"cannot read {path}: damaged file")


def load(paths):
    """Host facts per file and one dict per run (runs row + samples + threads)."""
    hosts, runs = [], []
    for path in paths:
        check_readable(path)
        attrs, file_runs = load_file(path)
        hosts.append(attrs)
        runs.extend(file_runs)
    return hosts, runs


