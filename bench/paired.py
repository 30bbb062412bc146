#!/usr/bin/env python3
"""bench/paired.py: ratios of two variants taken round by round.

On a host whose speed changes from one second to the next (another
tenant on the same cores: a fixed loop here ran in 69-151 ms from one
run to the next), the minimum or the median of each variant over the
rounds compares runs made at different speeds.  Within one round the
variants run back to back, a fraction of a second apart, so the ratio of
two of them in the same round is mostly free of that drift; this prints
the median of those ratios, with the quartiles, for each pair asked for.

Usage: bench/paired.py ROUNDS.csv A/B [C/D ...]
  ROUNDS.csv: bench/out/matrix-*-rounds.csv (workload,variant,round,ms)
  A, B: variant ids as in that file (e.g. typed/profile off/profile plain)
"""
import csv
import statistics
import sys


def quantile(xs, q):
    """Linear interpolation between order statistics (as percentile_cont)."""
    xs = sorted(xs)
    if not xs:
        return float('nan')
    pos = q * (len(xs) - 1)
    lo = int(pos)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (pos - lo)


def main(argv):
    if len(argv) < 3:
        sys.stderr.write(__doc__)
        return 2
    runs = {}
    with open(argv[1], newline='') as f:
        for row in csv.reader(f):
            if len(row) != 4:
                continue
            w, v, r, ms = row
            runs.setdefault(w, {}).setdefault(int(r), {})[v] = float(ms)
    print('| workload | ratio | rounds | median | quartiles | ratio of minimums |')
    print('|---|---|---:|---:|---|---:|')
    for pair in argv[2:]:
        if pair.count('/') < 1:
            sys.stderr.write('paired.py: a pair is A/B, got %s\n' % pair)
            return 2
        # variant ids contain a slash themselves: split at the middle one
        parts = pair.split('/')
        if len(parts) == 4:
            a, b = parts[0] + '/' + parts[1], parts[2] + '/' + parts[3]
        elif len(parts) == 3 and parts[2] == 'plain':
            a, b = parts[0] + '/' + parts[1], 'plain'
        elif len(parts) == 2:
            a, b = parts
        else:
            sys.stderr.write('paired.py: cannot split %s\n' % pair)
            return 2
        for w in sorted(runs):
            ratios = [rr[a] / rr[b] for rr in runs[w].values()
                      if a in rr and b in rr and rr[b] > 0]
            if not ratios:
                continue
            mins = (min(rr[a] for rr in runs[w].values() if a in rr) /
                    min(rr[b] for rr in runs[w].values() if b in rr))
            print('| %s | %s ÷ %s | %d | %.3f | %.3f-%.3f | %.3f |' % (
                w, a, b, len(ratios), statistics.median(ratios),
                quantile(ratios, 0.25), quantile(ratios, 0.75), mins))
    return 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
