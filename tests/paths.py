#!/usr/bin/env python3
"""paths.py - every repository path a doc or a comment names exists.

Scans the Markdown files (all text, and the targets of relative links, read from the
file's own folder) and the comments of the C, Python, shell and make files and of ci/ and
.ci/ for tokens that start with a top-level folder of the repository (sampler/, docs/,
...) or name a top-level file (README.md, Makefile). A `:LINE` suffix and a `#anchor` are
dropped; a glob (`*`, `?`, `[ch]`, `{a,b}`) must match at least one file. Generated
outputs and placeholders (build/, results/runs/, `<UTC>`, FILE.h5) are allowed by the
short list below. docs/gate.md and docs/mach.md name no commit hash outside a "validated
by" line (docs/validation.md holds the measurements). Prints one line per miss,
`FILE:LINE: missing path 'P'`, and exits 1 when there is one, 0 otherwise. Run from anywhere: `python3 tests/paths.py [ROOT]`.
"""
import glob
import os
import re
import sys

# Folders a repository path starts with. A token under one of them that is not on disk
# is an error unless ALLOWED says it is an output or a placeholder.
TOP_DIRS = ("agent analysis ci core docs examples harness mk platform results sampler "
            "tests tools workloads .ci .github").split()
TOP_FILES = ("README.md", "Makefile", ".gitignore")

# Paths that name what the tool writes, not what the repository holds.
ALLOWED = (
    re.compile(r"^build(/|$)"),                 # the out-of-tree build
    re.compile(r"^results/runs(/|$)"),          # bench outputs (results/runs/<UTC>.h5)
    re.compile(r"^results/baselines(/|$)"),     # a machine's baselines (sampbench baseline)
    re.compile(r"^results/report(/|$)"),        # make report's output
    re.compile(r"[<>]|\.\.\.$"),                  # placeholders: results/runs/<UTC>.h5, a/...
    re.compile(r"(^|/)(?!README)[A-Z][A-Z0-9_]{2,}(\.\w+)?(/|$)"),  # FILE.h5, NAME, FORMAT
)

# Reference docs state the tool as it is: a commit hash belongs to the measurement behind a
# claim (docs/validation.md), named only on a "validated by" line.
NO_HASH_DOCS = ("docs/gate.md", "docs/mach.md")
# (hex with a letter and a digit, or 7 digits from 0: numbers are not written 0417088)
HASH_RE = re.compile(r"\b(?:(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}|0[0-9]{6})\b")

SKIP_DIRS = {".git", "build", "runs", "baselines", "node_modules", "__pycache__"}

PATH_RE = re.compile(
    r"(?<![\w./@$-])(?:\./)?("
    r"(?:" + "|".join(re.escape(d) for d in TOP_DIRS) + r")/[\w./*?{},<>\[\]+-]*"
    r"|(?:" + "|".join(re.escape(f) for f in TOP_FILES) + r")(?![\w.-]*\w)"
    r")")
MD_LINK_RE = re.compile(r"\]\(([^)\s]+)\)")
# A section named after its document: docs/gate.md "Classes", (mach.md, "Many threads"),
# [findings.md](findings.md), "Cost".
SECTION_RE = re.compile(r"((?:docs/)?[\w-]+\.md)(?:\]\([^)\s]+\))?\)?,? \"([^\"]+)\"")
HEADING_RE = re.compile(r"^#+\s+(.*?)\s*$", re.M)
BOLD_RE = re.compile(r"\*\*([^*]+)\*\*")


def slug(heading):
    """The anchor GitHub gives a heading: lowercase, no punctuation, spaces to hyphens."""
    h = re.sub(r"[^\w\s-]", "", heading.strip().lower())
    return re.sub(r"\s", "-", h)


HEADINGS = {}


def headings(root, doc, bold=False):
    """The headings of a Markdown file (backticks dropped), with its bold run-in titles
    ("**Several hosts in one file.**") when bold; None when it is not a file."""
    if doc not in HEADINGS:
        try:
            with open(os.path.join(root, doc), encoding="utf-8") as f:
                text = f.read()
        except OSError:
            HEADINGS[doc] = (None, None)
        else:
            heads = [h.replace("`", "") for h in HEADING_RE.findall(text)]
            HEADINGS[doc] = (heads, heads + [b.replace("`", "") for b in BOLD_RE.findall(text)])
    return HEADINGS[doc][1 if bold else 0]


def find_doc(root, name, here):
    """The repository path of a Markdown file a text names (from root, here or docs/)."""
    for cand in (name, os.path.join(here, name), os.path.join("docs", name)):
        cand = os.path.normpath(cand)
        if os.path.isfile(os.path.join(root, cand)):
            return cand
    return None


def comment_lines(path, text):
    """Yields (line number, text) of the parts of a source file that are comments."""
    ext = os.path.splitext(path)[1]
    if ext in (".c", ".h"):
        for m in re.finditer(r"/\*.*?\*/|//[^\n]*", text, re.S):
            first = text.count("\n", 0, m.start()) + 1
            for i, line in enumerate(m.group(0).split("\n")):
                yield first + i, line
        return
    in_doc = False
    for n, line in enumerate(text.split("\n"), 1):
        if ext == ".py":
            quotes = line.count('"""') + line.count("'''")
            if in_doc or quotes:
                yield n, line
                if quotes % 2:
                    in_doc = not in_doc
                continue
        i = line.find("#")
        if i >= 0:
            yield n, line[i:]


def sources(root):
    """Yields (repository-relative path, is_markdown) of the files to scan."""
    for d, dirs, files in os.walk(root):
        rel_d = os.path.relpath(d, root)
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS
                         and not (rel_d == "tests" and x == "data"))
        for f in sorted(files):
            rel = os.path.normpath(os.path.join(rel_d, f))
            if f.endswith(".md"):
                yield rel, True
            elif (f.endswith((".c", ".h", ".py", ".sh", ".mk")) or f == "Makefile"
                  or rel.startswith(("ci" + os.sep, ".ci" + os.sep))):
                yield rel, False


def exists(root, p):
    """True when path p (relative to root) names a file or folder, or a glob matches one."""
    p = p.rstrip("/") or p
    alts = [p]
    m = re.search(r"\{([^{}]*)\}", p)
    if m:
        alts = [p[:m.start()] + a + p[m.end():] for a in m.group(1).split(",")]
    for a in alts:
        full = os.path.join(root, a)
        if re.search(r"[*?\[]", a):
            if glob.glob(full):
                return True
        elif os.path.exists(full):
            return True
        # a program or plugin named by its source (tests/test_mach, tools/mach_scaling,
        # tests/plugins/defect_*.so: built from the .c of that name)
        stem, ext = os.path.splitext(a)
        if ext in ("", ".so") and glob.glob(os.path.join(root, stem) + ".c"):
            return True
    return False


def clean(token):
    """The path a token names: no :LINE suffix, anchor or trailing punctuation."""
    token = re.sub(r"#.*$", "", token)
    token = re.sub(r":\d[\d,-]*$", "", token)
    while token and token[-1] in ".,;:)":
        token = token[:-1]
    if token.count("]") > token.count("["):
        token = token[:token.index("]")] if "[" not in token else token
    if token.count("[") != token.count("]"):
        token = token.split("[")[0]
    while token and token[-1] in ".,;:)":
        token = token[:-1]
    return token


def allowed(p):
    return any(r.search(p) for r in ALLOWED)


def check_file(root, rel, is_md, out):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    lines = enumerate(text.split("\n"), 1) if is_md else comment_lines(rel, text)
    here = os.path.dirname(rel)
    for n, line in lines:
        if rel in NO_HASH_DOCS and "validated by" not in line:
            for m in HASH_RE.finditer(line):
                out.append(f"{rel}:{n}: commit hash '{m.group(0)}' outside a validated-by line")
        for m in PATH_RE.finditer(line):
            p = clean(m.group(1))
            if p and not allowed(p) and not exists(root, p) and not (
                    is_md and exists(root, os.path.join(here, p))):
                out.append(f"{rel}:{n}: missing path '{p}'")
        for m in SECTION_RE.finditer(line):
            doc = find_doc(root, m.group(1), here)
            heads = headings(root, doc, bold=True) if doc else None
            name = m.group(2).replace("`", "").lower()
            if heads is not None and not any(name in h.lower() for h in heads):
                out.append(f"{rel}:{n}: no section '{m.group(2)}' in {doc}")
        if not is_md:
            continue
        for m in MD_LINK_RE.finditer(line):
            target = m.group(1)
            if re.match(r"^[a-z]+:|^/", target):
                continue
            p = os.path.normpath(os.path.join(here, clean(target))) if target[0] != "#" else rel
            if not allowed(p) and not exists(root, p):
                out.append(f"{rel}:{n}: missing link target '{target}'")
            elif "#" in target and p.endswith(".md"):
                anchor = target.split("#", 1)[1]
                if anchor not in [slug(h) for h in headings(root, p) or []]:
                    out.append(f"{rel}:{n}: no anchor '#{anchor}' in {p}")


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..")
    if not os.path.isfile(os.path.join(root, "Makefile")):
        print(f"paths: no repository at {root}", file=sys.stderr)
        return 2
    out = []
    for rel, is_md in sources(root):
        check_file(root, rel, is_md, out)
    for line in out:
        print(line)
    return 1 if out else 0


if __name__ == "__main__":
    sys.exit(main())
