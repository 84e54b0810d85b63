#!/usr/bin/python3
"""readme_check.py README.md REPO BUILD - runs the README's example commands as written.

Every line of a fenced block that starts with "$ " is a command (a trailing backslash
continues it); the lines after it, up to the next command or the block's end, are what it
printed. Each command runs with sh in a scratch directory where the repository's top-level
entries are symbolic links (so relative outputs like -o ex.h5 land there) and build/ is
BUILD. It must exit 0, or with the status its own comment gives ("# exits 1"), and the
first line it printed in the README must appear in its output with only numbers and
commit ids changed (lines naming the host are skipped: they differ on every machine), so
the README and the tool cannot drift apart. Exit 1 on the first mismatch."""
import os
import re
import subprocess
import sys
import tempfile


def shape(line):
    line = re.sub(r"\b[0-9a-f]{7,40}(-dirty)?\b", "#", line)
    line = re.sub(r"0x[0-9a-fA-F]+", "#", line)
    line = re.sub(r"[-+]?\d+(\.\d+)?", "#", line)
    return " ".join(line.split())


def commands(text):
    out, block, cmd = [], False, None
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            block = not block
            cmd = None
            continue
        if not block:
            continue
        if cmd is not None and cmd["open"]:
            cmd["text"] += "\n" + line
            cmd["open"] = line.endswith("\\")
        elif line.startswith("$ "):
            cmd = {"text": line[2:], "open": line.endswith("\\"), "expect": []}
            out.append(cmd)
        elif cmd is not None and line.strip():
            cmd["expect"].append(line)
    return out


def main(argv):
    if len(argv) != 4:
        print("usage: readme_check.py README.md REPO BUILD", file=sys.stderr)
        return 2
    readme, repo, build = argv[1], os.path.abspath(argv[2]), os.path.abspath(argv[3])
    with open(readme) as f:
        cmds = commands(f.read())
    if not cmds:
        print(f"readme: no '$ ' command in {readme}", file=sys.stderr)
        return 1
    scratch = tempfile.mkdtemp(prefix="sbreadme.")
    for e in os.listdir(repo):
        if e not in ("build", ".git") and not e.startswith("build"):
            os.symlink(os.path.join(repo, e), os.path.join(scratch, e))
    os.symlink(build, os.path.join(scratch, "build"))
    failed = 0
    skipped = 0
    for c in cmds:
        # A sanitizer build cannot take a library preloaded before its runtime: the
        # gperftools-cpuprofile recipe preloads libprofiler into the target (ASan refuses
        # with "ASan runtime does not come first"). Said and counted, never a pass.
        if "address" in os.environ.get("SANITIZE", "") and "gperftools-cpuprofile" in c["text"]:
            print(f"readme: skipped: $ {c['text'].splitlines()[0]}: its recipe preloads "
                  "libprofiler into an AddressSanitizer build, which ASan refuses")
            skipped += 1
            continue
        m = re.search(r"#\s*exits (\d+)", c["text"])
        want = int(m.group(1)) if m else 0
        r = subprocess.run(["sh", "-c", c["text"]], cwd=scratch, capture_output=True, text=True,
                           timeout=300)
        got = r.stdout.splitlines() + r.stderr.splitlines()
        # the lines that describe the host (show's first two) differ on every machine
        lines = [e for e in c["expect"] if not e.startswith(("host ", "machine "))]
        first = lines[0] if lines else None
        ok = r.returncode == want and (first is None or shape(first) in {shape(g) for g in got})
        print(f"{'ok  ' if ok else 'FAIL'} exit {r.returncode}: $ {c['text'].splitlines()[0]}")
        if not ok:
            failed += 1
            if r.returncode != want:
                print(f"  exit status {r.returncode}, the README implies {want}")
            else:
                print(f"  the README's first output line is not in the output:\n    {first}")
            print("  output:\n" + "\n".join("    " + g for g in got[:20]))
    print(f"readme: {len(cmds) - failed - skipped} passed, {failed} failed, {skipped} skipped")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
