#!/usr/bin/env python3
"""test/tsc_explained.py WATCH_LOG MARK < TEXT

Are fasttime's reports of a clock disagreement in TEXT (client stderr or a
server log) the machine's doing?  A report is a WARNING or LOG line saying
"(fasttime: )the TSC disagreed with clock_gettime": a WARNING to the client
of EXPLAIN, a LOG line for auto_explain's queries, parallel workers and
later disagreements.  WATCH_LOG is test/tsc_watch.c's log, MARK a byte offset
into it taken before the statements that produced TEXT ran.

Exit 0, printing a one-line explanation, when TEXT has at least one
report, every WARNING in it is such a report, and the disagreement each
report gives (the TSC's advance less
clock_gettime's, from its DETAIL) equals, within 1 ms + 1 %, the sum of
some of the jumps the witness logged after MARK.  Exit 1, printing why,
otherwise: no witness, no jump witnessed, another WARNING, or a
disagreement no witnessed jump accounts for.  A machine whose TSC never
jumps logs no jump, so there every WARNING stays a failure.
"""
import itertools
import re
import sys

REPORT = re.compile(r"(WARNING|LOG): +(fasttime: )?the TSC disagreed with clock_gettime")
DETAIL = re.compile(r"Over (-?[0-9.]+) ms of clock_gettime time, the TSC advanced (-?[0-9.]+) ms")


def main():
    if len(sys.argv) != 3:
        print("usage: tsc_explained.py WATCH_LOG MARK < TEXT", file=sys.stderr)
        return 2
    text = sys.stdin.read()
    # "fasttime: the TSC disagreed with clock_gettime during ..." (a
    # WARNING, or a first LOG line) and "the TSC disagreed with
    # clock_gettime during a query again" (LOG), each with its DETAIL
    lines = text.splitlines()
    reports = [l for l in lines if REPORT.search(l)]
    if not reports:
        print("no report of a TSC disagreement to explain")
        return 1
    other = [l for l in lines if "WARNING:" in l and not REPORT.search(l)]
    if other:
        print("a WARNING other than the TSC disagreement: " + other[0].strip())
        return 1
    disagreements = [float(b) - float(a) for a, b in DETAIL.findall(text)]
    if len(disagreements) < len(reports):
        print("a TSC-disagreement report without its DETAIL")
        return 1
    try:
        with open(sys.argv[1], "rb") as f:
            f.seek(int(sys.argv[2]))
            lines = f.read().decode(errors="replace").splitlines()
    except (OSError, ValueError) as e:
        print("no witness of the machine's TSC (%s)" % e)
        return 1
    jumps = []
    for l in lines:
        p = l.split()
        if len(p) == 3 and p[0] == "jump":
            jumps.append(float(p[2]) / 1e6)
    if not jumps:
        print("the witness saw no jump of the machine's TSC")
        return 1
    # sums of subsets of the witnessed jumps (a query holds some of them)
    if len(jumps) <= 14:
        sums = {round(sum(c), 3) for r in range(1, len(jumps) + 1)
                for c in itertools.combinations(jumps, r)}
    else:
        sums = set()
    for d in disagreements:
        tol = 1.0 + 0.01 * abs(d)
        if sums:
            ok = any(abs(d - s) <= tol for s in sums)
        else:
            same = sum(j for j in jumps if (j > 0) == (d > 0))
            ok = abs(d) <= abs(same) + tol and (d > 0) == (same > 0)
        if not ok:
            print("a disagreement of %.3f ms that the witnessed jumps (%s ms) do not account for"
                  % (d, ", ".join("%.3f" % j for j in jumps)))
            return 1
    print("the machine's TSC jumped %s ms during the run (witnessed outside the server), "
          "and fasttime's WARNING reported it (%s ms)"
          % (", ".join("%.3f" % j for j in jumps), ", ".join("%.3f" % d for d in disagreements)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
