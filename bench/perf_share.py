#!/usr/bin/env python3
"""bench/perf_share.py: the cost of one variant against another, from
their profiles rather than their times.

On a host whose speed drifts from second to second (docs/performance.md,
Method), two timed runs of the same code can differ by 10 %.  A profile's
*shares* do not depend on the host's speed: if the work outside fasttime
is the same in two variants (the same plan, the same rows), the share of
the samples it holds tells how long each variant took relative to it.
So, for two perf.data files of the same workload (bench/profile.sh, via
bench/matrix.sh --profile-variants), this prints

    estimate(A / B) = reference share in B / reference share in A

where the reference is every sample in the postgres binary outside the
timer-signal path (the timeout handler, latch, timestamp and itimer
functions): the executor's own work, which both variants do alike.  What
A adds -- fasttime's wrapper, the kernel's signal delivery, the tick --
is outside the reference and shows as the estimate above 1.  It also
prints each side's shares by part (fasttime, kernel, libc, reference,
signal path), which is the profile of what a variant adds.

Not a timing: it assumes the reference work costs the same in both, which
cache effects of the added code can break by a little.  Use it beside the
paired timings, not instead of them.

Usage: bench/perf_share.py A.data B.data [more pairs...]
"""
import re
import subprocess
import sys

SIGNAL_PATH = re.compile(
    r"(handle_sig_alarm|schedule_alarm|SetLatch|WakeupMyProc|"
    r"GetCurrentTimestamp|enable_timeout|disable_timeout|"
    r"get_timeout|timeout|itimer|sigprocmask|pqsignal|wrapper_handler)")


def parts(path):
    out = subprocess.run(
        ["perf", "report", "-i", path, "--stdio", "--no-children",
         "--sort", "dso,sym", "-g", "none", "--percent-limit", "0"],
        capture_output=True, text=True, check=True).stdout
    share = {"fasttime": 0.0, "kernel": 0.0, "libc": 0.0, "signal path": 0.0,
             "reference": 0.0, "other": 0.0}
    for line in out.splitlines():
        m = re.match(r"\s*([0-9.]+)%\s+(\S+)\s+\[(.)\]\s+(\S+)", line)
        if not m:
            continue
        pct, dso, kind, sym = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        if kind == "k" or "kernel" in dso:
            share["kernel"] += pct
        elif "fasttime" in dso:
            share["fasttime"] += pct
        elif dso.startswith("libc"):
            share["libc"] += pct
        elif dso == "postgres":
            share["signal path" if SIGNAL_PATH.search(sym) else "reference"] += pct
        else:
            share["other"] += pct
    return share


def main(argv):
    if len(argv) < 2 or len(argv) % 2:
        sys.exit(__doc__.split("\n\n")[-1])
    print("| A | B | estimate A / B | A: fasttime, kernel, libc, signal, reference | B: the same |")
    print("|---|---|---:|---|---|")
    for a, b in zip(argv[::2], argv[1::2]):
        pa, pb = parts(a), parts(b)

        def fmt(p):
            return ", ".join("%.1f" % p[k] for k in
                             ("fasttime", "kernel", "libc", "signal path", "reference"))
        print("| %s | %s | %.3f | %s | %s |" % (
            a.rsplit("/", 1)[-1], b.rsplit("/", 1)[-1],
            pb["reference"] / pa["reference"], fmt(pa), fmt(pb)))


if __name__ == "__main__":
    main(sys.argv[1:])
