#!/usr/bin/env python3
"""bench/oltp.py RAW.csv SETTINGS.tsv HEADER.md > report.md

The Markdown report of bench/oltp.sh (which see): per shape, protocol and
client count, per mode (and build), the median CPU microseconds per
transaction over the rounds with [min-max], the medians of the per-round
ratios to `stock` and to `off` (same round, same build) with [min-max],
the B/A ratio per round where two builds ran, and the median tps.  Then
overviews (ratio to stock, ratio to off) of all shapes at once, and what
SHOW gave for each mode's settings.
"""
import collections
import csv
import statistics as st
import sys

ORDER = ["off", "stock", "default", "exact", "profile", "notiming",
         "stocknotiming", "stockbuf", "exactbuf", "profilebuf"]


def spread(xs, fmt):
    xs = sorted(xs)
    if not xs:
        return "-"
    if len(xs) == 1:
        return fmt.format(xs[0])
    return (fmt.format(st.median(xs)) + " [" + fmt.format(xs[0]) + "–"
            + fmt.format(xs[-1]) + "]")


def main():
    raw, settings, header = sys.argv[1:4]
    cpu = {}   # (group, mode, build, round) -> us/xact
    norm = {}  # the same / pgbench's own CPU per transaction
    tps = collections.defaultdict(list)
    others = collections.defaultdict(list)
    failed = []
    set_aside = 0
    groups, modes, builds, rounds = [], [], [], set()
    reader = csv.DictReader(open(raw))
    mixed = "net_us" in reader.fieldnames
    key = "net_us" if mixed else "cpu_us_per_xact"
    for row in reader:
        g = (row["shape"], row["protocol"], int(row["clients"]))
        m, b, r = row["mode"], row["build"], int(row["round"])
        if g not in groups:
            groups.append(g)
        if m not in modes:
            modes.append(m)
        if b not in builds:
            builds.append(b)
        rounds.add(r)
        if row.get("kept", "1") == "0":
            set_aside += 1
            continue
        if not row[key]:
            failed.append(row)
            continue
        cpu[(g, m, b, r)] = float(row[key])
        if row.get("pgbench_ms") and float(row["pgbench_ms"]) > 0:
            norm[(g, m, b, r)] = (cpu[(g, m, b, r)] * int(row["xacts"])
                                  / (1000 * float(row["pgbench_ms"])))
        if row["tps"]:
            tps[(g, m, b)].append(float(row["tps"]))
        if row.get("others_cpus"):
            others[(g, m, b)].append(float(row["others_cpus"]))
    modes.sort(key=lambda m: ORDER.index(m) if m in ORDER else len(ORDER))
    builds.sort()
    rounds = sorted(rounds)

    def ratios(g, m, b, base_m, base_b, d=cpu):
        return [d[(g, m, b, r)] / d[(g, base_m, base_b, r)] for r in rounds
                if (g, m, b, r) in d and (g, base_m, base_b, r) in d]

    out = [open(header).read().rstrip(), ""]
    if mixed:
        out.append("MIXED METHOD: the column headed \"CPU µs/xact\" holds each "
                   "mode's transaction latency (pgbench's transaction "
                   "log; the mean of the fastest 90 %), the set_config "
                   "statement that starts every transaction included (the "
                   "same in every mode: it dilutes the ratios), in µs: with "
                   "one client, the backend's time for the transaction plus "
                   "the client's and the socket's, the same in every mode. The "
                   "modes ran interleaved per transaction in one pgbench run "
                   "per round (bench/oltp.sh, \"The mixed method\"); tps "
                   "and others are the whole run's. Read the rest of this "
                   "paragraph with that in mind.")
        out.append("")
    out.append("CPU = the backends' user + system time per transaction, in µs "
               "(the postmaster's cutime + cstime over the run / pgbench's "
               "transactions); median over the rounds [min–max]. Ratios are "
               "taken per round (same round, same build), then their median "
               "[min–max]. tps: median, for orientation only (shared host). "
               "others: the CPUs the rest of the machine kept busy during the "
               "runs (median; /proc/stat less the backends and pgbench). "
               "min / min stock: the mode's lowest CPU per transaction over the "
               "rounds over stock's lowest: a busy host only adds CPU per "
               "transaction (its jobs evict the backend's caches), so the "
               "least disturbed run of each mode is the other estimate.")
    out.append("")
    if set_aside:
        out.append(f"{set_aside} runs were set aside and run again (the rest of "
                   "the machine too busy: FT_OLTP_MAX_OTHERS); raw.csv has them "
                   "with kept = 0.")
        out.append("")
    if failed:
        out.append(f"**{len(failed)} runs failed** (no transactions or pgbench "
                   "error; see run.log): " + ", ".join(
                       f"round {f['round']} {f['shape']} {f['protocol']} "
                       f"c{f['clients']} {f['mode']} {f['build']}" for f in failed[:10]))
        out.append("")

    for g in groups:
        shape, proto, clients = g
        out.append(f"## {shape}, {proto}, {clients} client{'s' if clients > 1 else ''}")
        out.append("")
        head = "| mode | build | CPU µs/xact | / stock | / off | min / min stock |"
        sep = "|---|---|---|---|---|---|"
        if len(builds) > 1:
            head += " B / A |"
            sep += "---|"
        head += " tps | others |"
        sep += "---|---|"
        out += [head, sep]
        for m in modes:
            for b in builds:
                xs = [cpu[(g, m, b, r)] for r in rounds if (g, m, b, r) in cpu]
                line = f"| {m} | {b} | {spread(xs, '{:.1f}')} | "
                line += (spread(ratios(g, m, b, "stock", b), "{:.3f}")
                         if "stock" in modes else "-") + " | "
                line += (spread(ratios(g, m, b, "off", b), "{:.3f}")
                         if "off" in modes else "-") + " |"
                xs0 = [cpu[(g, "stock", b, r)] for r in rounds if (g, "stock", b, r) in cpu]
                line += f" {min(xs) / min(xs0):.3f} |" if xs and xs0 else " - |"
                if len(builds) > 1:
                    line += " " + (spread(ratios(g, m, b, m, builds[0]), "{:.3f}")
                                   if b != builds[0] else "") + " |"
                t = tps.get((g, m, b), [])
                line += f" {st.median(t):.0f} |" if t else " - |"
                o = others.get((g, m, b), [])
                line += f" {st.median(o):.2f} |" if o else " - |"
                out.append(line)
        out.append("")

    for base in ("stock", "off"):
        if base not in modes:
            continue
        for b in builds:
            out.append(f"## Overview: CPU per transaction / {base} (median of the "
                       f"per-round ratios){', build ' + b if len(builds) > 1 else ''}")
            out.append("")
            out.append("| shape | protocol | clients | " + " | ".join(modes) + " |")
            out.append("|---|---|---|" + "---|" * len(modes))
            for g in groups:
                cells = []
                for m in modes:
                    rs = ratios(g, m, b, base, b)
                    cells.append(f"{st.median(rs):.3f}" if rs else "-")
                out.append(f"| {g[0]} | {g[1]} | {g[2]} | " + " | ".join(cells) + " |")
            out.append("")
    if "stock" in modes and norm:
        for b in builds:
            out.append("## Cross-check: / stock, each run's backend CPU divided by "
                       "pgbench's own CPU in that run (median of the per-round "
                       f"ratios [min–max]){', build ' + b if len(builds) > 1 else ''}")
            out.append("")
            out.append("pgbench does the same work per transaction in every mode, "
                       "so its CPU per transaction moves only with the host "
                       "(caches, the other jobs): where it is large enough to "
                       "measure (select, tpcb) this ratio cancels that drift; "
                       "where the backend does most of the work (lookups, "
                       "updates) pgbench's share is small and noisy.")
            out.append("")
            out.append("| shape | protocol | clients | " + " | ".join(modes) + " |")
            out.append("|---|---|---|" + "---|" * len(modes))
            for g in groups:
                cells = [spread(ratios(g, m, b, "stock", b, norm), "{:.3f}") for m in modes]
                out.append(f"| {g[0]} | {g[1]} | {g[2]} | " + " | ".join(cells) + " |")
            out.append("")
    if len(builds) > 1:
        out.append(f"## Overview: CPU per transaction, build {builds[1]} / "
                   f"{builds[0]} (median of the per-round ratios)")
        out.append("")
        out.append("| shape | protocol | clients | " + " | ".join(modes) + " |")
        out.append("|---|---|---|" + "---|" * len(modes))
        for g in groups:
            cells = []
            for m in modes:
                rs = ratios(g, m, builds[1], m, builds[0])
                cells.append(f"{st.median(rs):.3f}" if rs else "-")
            out.append(f"| {g[0]} | {g[1]} | {g[2]} | " + " | ".join(cells) + " |")
        out.append("")

    # what SHOW gave per mode
    shown = collections.OrderedDict()
    names = []
    for row in csv.DictReader(open(settings), delimiter="\t"):
        key = (row["build"], row["mode"])
        shown.setdefault(key, {})[row["setting"]] = row["value"]
        if row["setting"] not in names:
            names.append(row["setting"])
    if shown:
        out.append("## Settings in effect (SHOW under each mode's PGOPTIONS)")
        out.append("")
        short = [n.replace("auto_explain.", "ae.").replace("fasttime.", "ft.") for n in names]
        out.append("| build | mode | " + " | ".join(short) + " |")
        out.append("|---|---|" + "---|" * len(names))
        for (b, m), vals in shown.items():
            out.append(f"| {b} | {m} | " + " | ".join(vals.get(n, "") for n in names) + " |")
        out.append("")
    print("\n".join(out))


if __name__ == "__main__":
    main()
