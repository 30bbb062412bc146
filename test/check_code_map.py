#!/usr/bin/env python3
"""Check the map of the code in docs/how-it-works.md against src/.

The section "## Map of the code" has a table, one row per file of src/
(a .c and its .h share a row, written `name.c/.h`):

    | file | what it owns | uses |

and "uses" must list exactly the src/ headers that the row's files
#include, from their own #include lines, leaving out the row's own header
and compat.h (which every server file includes).  Headers outside src/
(PostgreSQL's, the fault build's test/fault/fault_injection.h) are not
uses.  The check also wants every src/ file in exactly one row, no row for
a file that is gone, and no circle among the rows' uses.

    test/check_code_map.py            check; "ok"/"not ok" lines, then
                                      "N passed, N failed"; exit 1 if any
                                      failed
    test/check_code_map.py --fix      rewrite every row's "uses" from the
                                      #include lines (a new file still
                                      needs a row written by hand: its
                                      "what it owns")
    test/check_code_map.py --self-test  break a copy of the map and src/
                                      and check that each break is caught

Run by test/stage_docs.sh.  Standard library only.
"""
import os
import re
import shutil
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOC = os.path.join("docs", "how-it-works.md")
HEADING = "## Map of the code"
NOT_USES = {"compat.h"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"/]+)"', re.M)
NONE = "--"


def map_rows(text):
    """[(line index, [cells])] of the table rows of the map section."""
    lines = text.split("\n")
    try:
        start = lines.index(HEADING)
    except ValueError:
        return None, lines
    rows = []
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("## "):
            break
        if not lines[i].startswith("|"):
            continue
        cells = [c.strip() for c in lines[i].strip().strip("|").split("|")]
        if len(cells) != 3 or cells[0] == "file" or set(cells[0]) <= set("-: "):
            continue
        rows.append((i, cells))
    return rows, lines


def row_files(cell):
    """The src/ files a row's first cell names: `x.c/.h` is x.c and x.h."""
    m = re.fullmatch(r"`([a-z_0-9]+)\.(c|h)(?:/\.(h))?`", cell)
    if not m:
        return None
    return [m.group(1) + "." + m.group(2)] + ([m.group(1) + ".h"] if m.group(3) else [])


def spans(cell):
    return [] if cell == NONE else re.findall(r"`([^`]+)`", cell)


def src_files(root):
    return sorted(f for f in os.listdir(os.path.join(root, "src"))
                  if f.endswith((".c", ".h")))


def includes(root, name):
    with open(os.path.join(root, "src", name), encoding="utf-8") as f:
        return set(INCLUDE.findall(f.read()))


def computed_uses(root, files, present):
    uses = set()
    for name in files:
        if name in present:
            uses |= includes(root, name)
    return {h for h in uses if h in present and h not in files and h not in NOT_USES}


def check(root, out=print):
    results = []

    def rep(ok, what, detail=""):
        results.append(ok)
        out("%s - %s" % ("ok" if ok else "not ok", what))
        if not ok and detail:
            for l in str(detail).split("\n"):
                out("#   " + l)

    with open(os.path.join(root, DOC), encoding="utf-8") as f:
        rows, _ = map_rows(f.read())
    if not rows:
        rep(False, "%s has a \"%s\" table (file | what it owns | uses)" % (DOC, HEADING))
        return results
    present = set(src_files(root))
    seen = {}
    graph = {}
    bad_cells = []
    for i, (file_cell, _, uses_cell) in rows:
        files = row_files(file_cell)
        if files is None:
            bad_cells.append("line %d: %s is not `name.c`, `name.h` or `name.c/.h`" % (i + 1, file_cell))
            continue
        for name in files:
            seen.setdefault(name, []).append(i + 1)
        want = computed_uses(root, files, present)
        have = set(spans(uses_cell))
        graph[files[0]] = (files, want)
        rep(have == want and all(n in present for n in files),
            "%s: uses %s" % (file_cell, ", ".join(sorted(want)) or NONE),
            "\n".join(
                ["the map says %s" % (", ".join(sorted(have)) or NONE)] +
                ["%s is not in src/" % n for n in files if n not in present] +
                (["(test/check_code_map.py --fix rewrites the uses)"] if have != want else [])))
    rep(not bad_cells, "every row names its files as `name.c`, `name.h` or `name.c/.h`",
        "\n".join(bad_cells))
    missing = sorted(present - set(seen))
    twice = sorted("%s (lines %s)" % (n, ", ".join(map(str, l))) for n, l in seen.items() if len(l) > 1)
    rep(not missing and not twice, "every src/ file has exactly one row",
        "\n".join(["no row: " + n for n in missing] + ["more than one row: " + n for n in twice]))

    # no circle: a row's uses, followed, never come back to it
    owner = {n: key for key, (files, _) in graph.items() for n in files}
    state = {}
    circle = []

    def visit(key, path):
        state[key] = 1
        for h in sorted(graph[key][1]):
            nxt = owner.get(h)
            if nxt is None or circle:
                continue
            if state.get(nxt) == 1:
                circle.extend(path[path.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, path + [nxt])
        state[key] = 2

    for key in sorted(graph):
        if key not in state and not circle:
            visit(key, [key])
    rep(not circle, "the uses run one way (no circle)", " -> ".join(circle))
    return results


def fix(root):
    path = os.path.join(root, DOC)
    with open(path, encoding="utf-8") as f:
        rows, lines = map_rows(f.read())
    if not rows:
        print("no \"%s\" table in %s" % (HEADING, DOC))
        return 1
    present = set(src_files(root))
    for i, (file_cell, owns, _) in rows:
        files = row_files(file_cell)
        if files is None:
            continue
        want = sorted(computed_uses(root, files, present))
        lines[i] = "| %s | %s | %s |" % (file_cell, owns,
                                         ", ".join("`%s`" % h for h in want) or NONE)
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines))
    listed = {n for _, (c, _, _) in rows for n in (row_files(c) or [])}
    for n in sorted(present - listed):
        print("%s has no row: add one by hand (what it owns), then run --fix again" % n)
    return 0


def self_test():
    results = []

    def expect(what, mutate, caught):
        tmp = tempfile.mkdtemp(prefix="ft-code-map-")
        try:
            for d in ("src", "docs"):
                shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d))
            mutate(tmp)
            failed = not all(check(tmp, out=lambda s: None))
            ok = failed == caught
            results.append(ok)
            print("%s - self-test: %s %s" % ("ok" if ok else "not ok", what,
                                             "is caught" if caught else "passes"))
        finally:
            shutil.rmtree(tmp)

    def edit(rel, old, new):
        def f(tmp):
            p = os.path.join(tmp, rel)
            with open(p, encoding="utf-8") as fh:
                s = fh.read()
            assert old in s, (rel, old)
            with open(p, "w", encoding="utf-8") as fh:
                fh.write(s.replace(old, new, 1))
        return f

    def add_file(tmp):
        with open(os.path.join(tmp, "src", "newfile.c"), "w") as fh:
            fh.write('#include "ticks.h"\n')

    def add_circle(tmp):
        with open(os.path.join(tmp, "src", "ticks.h"), "a") as fh:
            fh.write('\n#include "clock_state.h"\n')
        fix(tmp)

    expect("the map as it is", lambda tmp: None, False)
    expect("an #include the map does not list",
           edit("src/clock_decide.c", '#include "ticks.h"', '#include "ticks.h"\n#include "usage.h"'), True)
    expect("a use the map lists that no #include makes",
           edit(DOC, "| `clock_facts.h`, `ticks.h` |\n| `ticks.h`",
                "| `clock_facts.h`, `ticks.h`, `usage.h` |\n| `ticks.h`"), True)
    expect("a row whose file cell is not a file name",
           edit(DOC, "| `prof_frame.h` |", "| prof_frame |"), True)
    expect("a src/ file with no row", add_file, True)
    expect("a row for a file that is gone",
           lambda tmp: os.remove(os.path.join(tmp, "src", "explain_option.c")), True)
    expect("a circle among the uses, even with the uses rewritten by --fix", add_circle, True)
    expect("an include of compat.h, which is not a use",
           edit("src/clock_decide.c", '#include "ticks.h"', '#include "ticks.h"\n#include "compat.h"'), False)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


def main():
    if sys.argv[1:] == ["--fix"]:
        return fix(ROOT)
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if sys.argv[1:]:
        print(__doc__)
        return 2
    results = check(ROOT)
    print("%d passed, %d failed" % (results.count(True), results.count(False)))
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
