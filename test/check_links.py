#!/usr/bin/env python3
"""Check the relative links of fasttime's documentation.

For README.md and every docs/*.md, each relative link must resolve:

    [text](path)            the file (or directory) exists, relative to
                            the markdown file (a leading / means the
                            repository's top directory)
    [text](path#anchor)     and, for a markdown target, the anchor is the
                            slug of one of its headings
    [text](#anchor)         a heading of the same file

Images (![alt](path)) and reference definitions ([name]: path) count as
links.  Links with a scheme (http:, https:, mailto:, ...) are not
checked, nor anything inside fenced code blocks or inline code.  An
anchor on a file that is not markdown (src/x.c#L10) is not checked.

Anchors follow GitHub's slug rules: the heading's text as rendered,
lowercased, every character that is not a letter, a digit, a space, '-'
or '_' dropped, spaces turned into '-'; a slug seen before in the same
file gets -1, -2, ... appended.  Explicit <a name="x"> / id="x" anchors
count too.

    test/check_links.py [--root DIR] [FILE.md ...]
    test/check_links.py --self-test

Prints "ok - FILE" or "not ok - FILE" with the broken links listed
below it, one line per file, and ends with "N passed, N failed" (files).
Exits 1 if any file failed.  --self-test builds a small tree with good
and broken links in a temporary directory and checks that the checker
passes the good ones and catches every broken one; it ends with the same
kind of line, counting its checks.

Standard library only.
"""
import glob
import os
import re
import sys
import tempfile
import urllib.parse

FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")
ATX = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?(?:[ \t]+#+)?[ \t]*$")
SETEXT = re.compile(r"^ {0,3}(=+|-+)[ \t]*$")
# inline links and images; the text may hold one level of [brackets]
# (an image inside a link)
INLINE = re.compile(
    r"(!?)\[((?:[^\[\]\\]|\\.|\[(?:[^\[\]\\]|\\.)*\])*)\]"
    r"\(\s*(<[^>\n]*>|[^\s()]*(?:\([^\s()]*\)[^\s()]*)*)"
    r"(?:\s+(?:\"[^\"]*\"|'[^']*'|\([^)]*\)))?\s*\)")
REFDEF = re.compile(r"^ {0,3}\[([^\]]+)\]:\s*(<[^>]*>|\S+)")
SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
HTML_ANCHOR = re.compile(r"<a\s[^>]*\b(?:name|id)\s*=\s*[\"']([^\"']+)[\"']",
                         re.IGNORECASE)
HTML_ID = re.compile(r"<[A-Za-z][^>]*\bid\s*=\s*[\"']([^\"']+)[\"']")
CODE_SPAN = re.compile(r"(`+)(.+?)\1", re.DOTALL)


def _outside_code(text, fn):
    """Apply fn to the parts of a line outside inline code spans; code
    spans are passed on as their content (keep_code) or dropped."""
    out = []
    pos = 0
    for m in CODE_SPAN.finditer(text):
        out.append(fn(text[pos:m.start()]))
        out.append(("\0code\0", m.group(2)))
        pos = m.end()
    out.append(fn(text[pos:]))
    return out


def heading_text(raw):
    """The text a heading renders to: code spans keep their content,
    links and images their text, HTML tags and emphasis markers go."""
    def plain(s):
        s = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", s)   # links, images
        s = re.sub(r"<[^>]+>", "", s)                       # HTML tags
        # emphasis with underscores: _x_ and __x__, not snake_case
        s = re.sub(r"(?<![A-Za-z0-9])_+|_+(?![A-Za-z0-9])", "", s)
        return s.replace("\\", "")
    parts = _outside_code(raw, plain)
    return "".join(p[1] if isinstance(p, tuple) else p for p in parts).strip()


def slug(text):
    """GitHub's slug of a heading's rendered text (before de-duplication)."""
    text = text.strip().lower()
    kept = "".join(c for c in text if c.isalnum() or c in "-_ ")
    return kept.replace(" ", "-")


def fenced_mask(lines):
    """True for each line that is part of a fenced code block."""
    mask = []
    fence = None
    for line in lines:
        m = FENCE.match(line)
        if fence is None:
            if m:
                fence = m.group(1)
                mask.append(True)
            else:
                mask.append(False)
        else:
            mask.append(True)
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) \
                    and line.strip() == m.group(1):
                fence = None
    return mask


def anchors_of(path, cache):
    """The set of anchors a markdown file defines."""
    if path in cache:
        return cache[path]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    mask = fenced_mask(lines)
    seen = {}
    anchors = set()

    def add(text):
        base = slug(heading_text(text))
        s = base
        n = seen.get(base, 0)
        while s in anchors:
            n += 1
            s = "%s-%d" % (base, n)
        seen[base] = n
        anchors.add(s)

    prev = None
    for i, line in enumerate(lines):
        if mask[i]:
            prev = None
            continue
        for m in HTML_ANCHOR.finditer(line):
            anchors.add(m.group(1))
        for m in HTML_ID.finditer(line):
            anchors.add(m.group(1))
        m = ATX.match(line)
        if m:
            add(m.group(2) or "")
            prev = None
            continue
        m = SETEXT.match(line)
        if m and prev is not None and prev.strip() and not ATX.match(prev) \
                and "|" not in prev and not re.match(r"^ {0,3}([-*+]|\d+[.)])\s", prev):
            add(prev.strip())
            prev = None
            continue
        prev = line
    cache[path] = anchors
    return anchors


def links_of(path):
    """(line number, shown text, target) of every link outside code."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    mask = fenced_mask(lines)
    found = []

    def scan(text, lineno):
        for m in INLINE.finditer(text):
            target = m.group(3)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            shown = "%s[%s](%s)" % (m.group(1), m.group(2), m.group(3))
            found.append((lineno, shown, target))
            scan(m.group(2), lineno)          # an image inside a link

    for i, line in enumerate(lines):
        if mask[i]:
            continue
        m = REFDEF.match(line)
        if m:
            target = m.group(2)
            if target.startswith("<") and target.endswith(">"):
                target = target[1:-1]
            found.append((i + 1, "[%s]: %s" % (m.group(1), m.group(2)), target))
            continue
        parts = _outside_code(line, lambda s: s)
        text = " ".join(p for p in parts if not isinstance(p, tuple))
        scan(text, i + 1)
    return found


def check_file(path, root, cache):
    """The broken links of one markdown file, as messages."""
    broken = []
    here = os.path.dirname(path)
    for lineno, shown, target in links_of(path):
        if not target or SCHEME.match(target) or target.startswith("//"):
            continue
        ref, _, anchor = target.partition("#")
        ref = urllib.parse.unquote(ref)
        anchor = urllib.parse.unquote(anchor)
        if ref == "":
            dest = path
        elif ref.startswith("/"):
            dest = os.path.normpath(os.path.join(root, ref.lstrip("/")))
        else:
            dest = os.path.normpath(os.path.join(here, ref))
        shown_dest = os.path.relpath(dest, root)
        if not os.path.exists(dest):
            broken.append("line %d: %s: %s does not exist" % (lineno, shown, shown_dest))
            continue
        if "#" not in target:
            continue
        if not (os.path.isfile(dest) and dest.lower().endswith((".md", ".markdown"))):
            continue
        if anchor not in anchors_of(dest, cache):
            broken.append("line %d: %s: no heading with anchor \"#%s\" in %s"
                          % (lineno, shown, anchor, shown_dest))
    return broken


def default_files(root):
    files = []
    if os.path.exists(os.path.join(root, "README.md")):
        files.append(os.path.join(root, "README.md"))
    files += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    return files


def run(root, files, out=sys.stdout):
    """Check files; print the report; return (passed, failed, {file: broken})."""
    cache = {}
    passed = failed = 0
    result = {}
    for path in files:
        name = os.path.relpath(path, root)
        try:
            broken = check_file(path, root, cache)
        except (OSError, UnicodeDecodeError) as e:
            broken = ["cannot read: %s" % e]
        result[name] = broken
        if broken:
            failed += 1
            print("not ok - %s" % name, file=out)
            for b in broken:
                print("#   %s" % b, file=out)
        else:
            passed += 1
            print("ok - %s" % name, file=out)
    print("%d passed, %d failed" % (passed, failed), file=out)
    return passed, failed, result


# ---------------------------------------------------------------------------
# --self-test: the checker must catch what it is there to catch

SELF_TEST_TREE = {
    "README.md": """\
# Demo project

Good links: [guide](docs/guide.md), [usage](docs/guide.md#usage-notes),
[second install](#install--run-1), [first install](#install--run),
[option](docs/guide.md#clock_source-option), [tree](docs/),
![chart](img/chart.png), [external](https://host.invalid/x),
[mail](mailto:someone@host.invalid), [spaced](<docs/guide.md>),
[titled](docs/guide.md#usage-notes "Usage"), [parenthesised](img/b_(1).png).

## Install & run

## Install & run

Setext heading
--------------

[setext](#setext-heading)

```sh
# a link inside a fence is not checked: [x](missing-in-fence.md)
```

Inline code is not checked either: `[y](missing-in-code.md)`.
""",
    "docs/guide.md": """\
# Guide

[back](../README.md#demo-project), [self](#clock_source-option),
[root-relative](/README.md#install--run),
[source line](../img/chart.png#L3)

## Usage notes

### `CLOCK_SOURCE` option
""",
    "docs/broken.md": """\
# Broken

[missing file](nothere.md)
[missing anchor](guide.md#no-such-heading)
[missing local anchor](#also-missing)
[third duplicate](../README.md#install--run-2)
![missing image](../img/missing.png)

[gone]: gone.md

```
[fenced](fenced-missing.md)
```
""",
    "img/chart.png": "not really a PNG\n",
    "img/b_(1).png": "not really a PNG either\n",
}

SELF_TEST_BROKEN = [
    "nothere.md",
    "#no-such-heading",
    "#also-missing",
    "#install--run-2",
    "missing.png",
    "gone.md",
]

SELF_TEST_SLUGS = [
    ("Quick start", "quick-start"),
    ("PostgreSQL 18: `EXPLAIN (ANALYZE, CLOCK_SOURCE)`",
     "postgresql-18-explain-analyze-clock_source"),
    ("Profiled timing's accuracy", "profiled-timings-accuracy"),
    ("Clock cost (earlier benchmark, `bench/clock_cost.sh`)",
     "clock-cost-earlier-benchmark-benchclock_costsh"),
    ("fasttime_overhead: is per-node timing affordable here?",
     "fasttime_overhead-is-per-node-timing-affordable-here"),
    ("Install & run", "install--run"),
    ("Unit tests (no server)", "unit-tests-no-server"),
    ("See [the guide](docs/guide.md)", "see-the-guide"),
]


def self_test():
    passed = failed = 0

    def check(ok, what, detail=""):
        nonlocal passed, failed
        if ok:
            passed += 1
            print("ok - self-test: %s" % what)
        else:
            failed += 1
            print("not ok - self-test: %s" % what)
            if detail:
                for line in detail.rstrip("\n").split("\n"):
                    print("#   %s" % line)

    for text, want in SELF_TEST_SLUGS:
        got = slug(heading_text(text))
        check(got == want, "slug of %r is %r" % (text, want), "got %r" % got)

    with tempfile.TemporaryDirectory(prefix="check_links.") as root:
        for rel, content in SELF_TEST_TREE.items():
            p = os.path.join(root, rel)
            os.makedirs(os.path.dirname(p), exist_ok=True)
            with open(p, "w", encoding="utf-8") as f:
                f.write(content)

        class Sink:
            def __init__(self):
                self.text = ""

            def write(self, s):
                self.text += s

        sink = Sink()
        files = default_files(root)
        check([os.path.relpath(f, root) for f in files] ==
              ["README.md", "docs/broken.md", "docs/guide.md"],
              "README.md and docs/*.md are the files checked",
              "\n".join(files))
        p, f, result = run(root, files, out=sink)
        check(result.get("README.md") == [],
              "good links, duplicate and setext anchors pass; fenced, inline-code and external links are skipped",
              "\n".join(result.get("README.md", ["README.md not checked"])))
        check(result.get("docs/guide.md") == [],
              "relative, root-relative and code-span heading anchors pass",
              "\n".join(result.get("docs/guide.md", ["docs/guide.md not checked"])))
        broken = result.get("docs/broken.md", [])
        for needle in SELF_TEST_BROKEN:
            check(any(needle in b for b in broken),
                  "broken link caught: %s" % needle, "\n".join(broken))
        check(len(broken) == len(SELF_TEST_BROKEN),
              "exactly %d broken links in docs/broken.md (the fenced one is not counted)"
              % len(SELF_TEST_BROKEN), "\n".join(broken))
        lines = sink.text.rstrip("\n").split("\n")
        check((p, f) == (2, 1) and lines[-1] == "2 passed, 1 failed",
              "report ends with \"2 passed, 1 failed\"", sink.text)
        check("not ok - docs/broken.md" in lines and "ok - README.md" in lines,
              "one ok / not ok line per file", sink.text)

    print("%d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


def main(argv):
    args = argv[1:]
    if "--self-test" in args:
        return self_test()
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    if len(args) >= 2 and args[0] == "--root":
        root = os.path.abspath(args[1])
        args = args[2:]
    if any(a.startswith("-") for a in args):
        print("usage: test/check_links.py [--root DIR] [FILE.md ...] | --self-test",
              file=sys.stderr)
        return 2
    files = [os.path.abspath(a) for a in args] or default_files(root)
    if not files:
        print("not ok - no README.md or docs/*.md under %s" % root)
        print("0 passed, 1 failed")
        return 1
    _, failed, _ = run(root, files)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
