#!/usr/bin/python3
"""check.py DIR... - checks reports written by analysis/report.py (tests/test_report.c).

Fails (exit 1, one line per problem) unless: index.html parses with balanced tags and no
network references; the gate's verdict is shown; every section is there with a heading and an image, a table or a note;
the host facts are shown; every finding carries a number; every image is a PNG beside
index.html with data in it (pixel variance, several colours), or an SVG with drawn lines
and points (the History plot), and every PNG and SVG is used.
"""
import os
import sys
from html.parser import HTMLParser

import numpy as np
import matplotlib.image

SECTIONS = ["verdict", "versus", "host", "findings", "rate", "magnitude", "threads", "latency", "overhead",
            "pauses", "functions", "gperftools", "runs"]
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source",
        "track", "wbr"}
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


class Report(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.stack, self.problems, self.images = [], [], []
        self.sections = {}   # id -> set of what it holds: h2, img, table, note
        self.section = None
        self.findings, self.li = [], None
        self.text = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for k in ("src", "href"):
            if a.get(k) and (":" in a[k] or a[k].startswith("//")):
                self.problems.append(f"network or absolute reference {k}={a[k]}")
        if tag in ("script", "link", "iframe"):
            self.problems.append(f"<{tag}> in a self-contained report")
        if tag == "section":
            self.section = a.get("id")
            self.sections[self.section] = set()
        if self.section is not None:
            if tag in ("h2", "img", "table", "ul"):
                self.sections[self.section].add(tag)
            if tag == "p" and a.get("class") == "note":
                self.sections[self.section].add("note")
        if tag == "img":
            self.images.append(a.get("src", ""))
        if tag == "li" and self.section == "findings":
            self.li = []
        if tag not in VOID:
            self.stack.append((tag, self.getpos()))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1][0] != tag:
            top = self.stack[-1] if self.stack else ("nothing", (0, 0))
            self.problems.append(f"</{tag}> at line {self.getpos()[0]} closes <{top[0]}> "
                                 f"of line {top[1][0]}")
            return
        self.stack.pop()
        if tag == "section":
            self.section = None
        if tag == "li" and self.li is not None:
            self.findings.append("".join(self.li))
            self.li = None

    def handle_data(self, data):
        self.text.append(data)
        if self.li is not None:
            self.li.append(data)


def check_png(path):
    with open(path, "rb") as f:
        if f.read(8) != PNG_MAGIC:
            return "not a PNG"
    px = matplotlib.image.imread(path)
    if px.ndim != 3 or px.shape[0] < 100 or px.shape[1] < 100:
        return f"odd shape {px.shape}"
    rgb = px[:, :, :3]
    q = (rgb * 255).astype(np.uint32).reshape(-1, 3)
    colours = len(np.unique(q[:, 0] << 16 | q[:, 1] << 8 | q[:, 2]))
    if rgb.std() < 0.02 or colours < 8:
        return f"blank (pixel sd {rgb.std():.4f}, {colours} colours)"
    return None


def check_svg(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        doc = f.read()
    if not doc.lstrip().startswith("<svg") or not doc.rstrip().endswith("</svg>"):
        return "not an SVG"
    if " L" not in doc and "<circle" not in doc:
        return "blank (no line, no point)"
    return None


def check(outdir):
    problems = []
    index = os.path.join(outdir, "index.html")
    try:
        with open(index, encoding="utf-8") as f:
            doc = f.read()
    except OSError as e:
        return [f"cannot read {index}: {e.strerror}"], (0, 0, 0)
    p = Report()
    p.feed(doc)
    p.close()
    problems += p.problems
    problems += [f"<{t}> of line {pos[0]} never closed" for t, pos in p.stack]
    for sid in SECTIONS:
        held = p.sections.get(sid)
        if held is None:
            problems.append(f"section {sid} missing")
        elif "h2" not in held or not held & {"img", "table", "ul", "note"}:
            problems.append(f"section {sid} has no heading or no content ({sorted(held)})")
    if 'class="verdict pass"' not in doc and 'class="verdict fail"' not in doc:
        problems.append("no gate verdict (PASS or FAIL) at the top")
    text = " ".join(p.text)
    for fact in ("kernel", "tick Hz", "nproc", "compiler", "revision"):
        if fact not in text:
            problems.append(f"host fact '{fact}' not shown")
    if not p.findings:
        problems.append("no findings")
    problems += [f"finding without a number: {f}" for f in p.findings
                 if not any(c.isdigit() for c in f)]
    for src in p.images:
        path = os.path.join(outdir, src)
        if os.path.dirname(src) or not os.path.isfile(path):
            problems.append(f"image {src} not beside index.html")
            continue
        why = check_svg(path) if src.endswith(".svg") else check_png(path)
        if why:
            problems.append(f"image {src}: {why}")
    unused = set(n for n in os.listdir(outdir) if n.endswith((".png", ".svg"))) - set(p.images)
    problems += [f"image {n} not in the page" for n in sorted(unused)]
    if not p.images:
        problems.append("no images")
    return problems, (len(p.sections), len(p.images), len(p.findings))


def main():
    if len(sys.argv) < 2:
        print("usage: check.py DIR...", file=sys.stderr)
        return 2
    rc = 0
    for outdir in sys.argv[1:]:
        problems, counts = check(outdir)
        for m in problems:
            print(f"report check: {outdir}: {m}")
        if problems:
            rc = 1
        else:
            print(f"report ok: {outdir}: {counts[0]} sections, {counts[1]} images, "
                  f"{counts[2]} findings")
    return rc


if __name__ == "__main__":
    sys.exit(main())
