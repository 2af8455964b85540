#!/usr/bin/env python3
"""bench/summary.py RESULTS: the tables, the plot and the summary line of a
make bench run (RESULTS: the results-*.txt that bench/run.sh writes)."""
import os
import statistics
import sys

CONTENDERS = ["proxy_eos", "proxy_eos_metrics", "proxy_alo", "limit", "streams_eos", "kcat"]
# An A/B run (bench/run.sh, BENCH_BASE_BIN): the same contenders on a base build.
BASE = ["proxy_eos_base", "proxy_alo_base"]
LABELS = {"proxy_eos": "gate-proxy, exactly-once (cutover half-way)",
          "proxy_eos_metrics": "the same, /metrics scraped every second",
          "proxy_alo": "gate-proxy, at-least-once",
          "limit": "librdkafka passthrough, exactly-once (the limit)",
          "streams_eos": "Kafka Streams, exactly_once_v2 (the peer)",
          "kcat": "kcat consume piped to kcat produce, at-least-once",
          "proxy_eos_base": "base build: gate-proxy, exactly-once (cutover half-way)",
          "proxy_alo_base": "base build: gate-proxy, at-least-once"}


def parse(path):
    rows = []
    for line in open(path):
        parts = line.split()
        if len(parts) < 2:
            continue
        kv = {}
        for p in parts[2:]:
            if "=" in p:
                k, v = p.split("=", 1)
                kv[k] = v
        rows.append((parts[0], parts[1], kv))
    return rows


def num(kv, k):
    try:
        return float(kv[k])
    except (KeyError, ValueError):
        return float("nan")


def med(xs):
    xs = [x for x in xs if x == x]
    return statistics.median(xs) if xs else float("nan")


def svg(path, sizes, main):
    w, h, left, bar = 760, 70 + 26 * len(CONTENDERS) * len(sizes), 330, 18
    rates = {(s, c): med([num(kv, "rate") for cc, kv in main.get(s, []) if cc == c])
             for s in sizes for c in CONTENDERS}
    top = max([r for r in rates.values() if r == r] + [1])
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif" font-size="12">' % (w, h),
           '<text x="10" y="20" font-size="14">Throughput, records/s (make bench)</text>']
    y = 40
    colours = {"proxy_eos": "#2b6cb0", "proxy_eos_metrics": "#4a7fc1", "proxy_alo": "#63b3ed", "limit": "#718096",
               "streams_eos": "#dd6b20", "kcat": "#a0aec0"}
    for s in sizes:
        out.append('<text x="10" y="%d" font-weight="bold">%s-byte records</text>' % (y + 12, s))
        y += 20
        for c in CONTENDERS:
            r = rates[(s, c)]
            if r != r:
                continue
            bw = (w - left - 90) * r / top
            out.append('<text x="10" y="%d">%s</text>' % (y + 13, LABELS[c]))
            out.append('<rect x="%d" y="%d" width="%.0f" height="%d" fill="%s"/>'
                       % (left, y, bw, bar, colours[c]))
            out.append('<text x="%.0f" y="%d">%s</text>' % (left + bw + 5, y + 13, f"{r:,.0f}"))
            y += bar + 6
        y += 6
    out.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(out).replace('height="%d"' % h, 'height="%d"' % (y + 10), 1))


def main():
    rows = parse(sys.argv[1])
    main_rows = {}
    # A line: TABLE CONTENDER key=value... (size=, round=, then the figures)
    for table, c, kv in rows:
        if table == "main":
            main_rows.setdefault(kv.get("size"), []).append((c, kv))
    sizes = sorted(main_rows, key=lambda s: int(s))
    print("## Throughput (median of the rounds)\n")
    print("| contender | size | records/s | CPU s per million | peak RSS MB |")
    print("|---|---|---|---|---|")
    agg = {}
    for s in sizes:
        for c in CONTENDERS + BASE:
            kvs = [kv for cc, kv in main_rows[s] if cc == c]
            if not kvs:
                continue
            r = med([num(kv, "rate") for kv in kvs])
            cpu = med([num(kv, "cpu_s_per_m") for kv in kvs])
            rss = max(num(kv, "rss_mb") for kv in kvs)
            agg[(c, s)] = (r, cpu, rss)
            print(f"| {LABELS[c]} | {s} B | {r:,.0f} | {cpu:.2f} | {rss:.1f} |")
    lat = {c: kv for t, c, kv in rows if t == "latency"}
    if lat:
        print("\n## End-to-end latency (source append to colour append)\n")
        print("| contender | records | p50 ms | p99 ms | max ms | after the first 2 s: p50 ms | p99 ms | max ms |")
        print("|---|---|---|---|---|---|---|---|")
        for c in CONTENDERS:
            if c in lat:
                kv = lat[c]
                print(f"| {LABELS[c].replace(' (cutover half-way)', '')} | {kv.get('n')} | {kv.get('p50_ms')} | {kv.get('p99_ms')} | {kv.get('max_ms')} "
                      f"| {kv.get('ss_p50_ms')} | {kv.get('ss_p99_ms')} | {kv.get('ss_max_ms')} |")
    for table, title, key in (("partitions", "Throughput by partitions (100-byte records)", "partitions"),
                              ("sizes", "Throughput by record size", "size"),
                              ("memory", "Memory by record count (gate-proxy, exactly-once)", "dataset")):
        sel = [(c, kv) for t, c, kv in rows if t == table]
        if not sel:
            continue
        print(f"\n## {title}\n")
        print(f"| contender | {key} | records/s | MB/s | CPU s per million | peak RSS MB |")
        print("|---|---|---|---|---|---|")
        for c, kv in sel:
            mbs = num(kv, "rate") * (int(kv.get("size", 100)) + 40) / 1e6 if table == "sizes" else num(kv, "rate") * 140 / 1e6
            print(f"| {c} | {kv.get(key, '')} | {num(kv, 'rate'):,.0f} | {mbs:.1f} | {num(kv, 'cpu_s_per_m'):.2f} | {num(kv, 'rss_mb'):.1f} |")
    ab(main_rows, sizes)
    if sizes:
        s = sizes[0]
        g = lambda c, i: agg.get((c, s), (float("nan"),) * 3)[i]
        r1, rm, r2, r3, r4, r5 = (g(c, 0) for c in CONTENDERS)
        c1, c4 = g("proxy_eos", 1), g("streams_eos", 1)
        rss = max([v[2] for (c, _), v in agg.items() if c.startswith("proxy")] + [0])
        # the steady state's p99 (bench/latency.py: after the feed's first 2 s)
        p99 = lat.get("proxy_eos", {}).get("ss_p99_ms", "nan")
        svg(os.path.join(os.path.dirname(sys.argv[1]) or ".", "throughput.svg"), sizes, main_rows)
        print()
        print(f"bench: proxy_eos={r1:.0f} proxy_alo={r2:.0f} limit={r3:.0f} streams_eos={r4:.0f} "
              f"kcat={r5:.0f} ratio_limit={r1 / r3:.2f} ratio_peer={r1 / r4:.2f} "
              f"cpu_ratio_peer={c1 / c4:.2f} rss_mb={rss:.1f} p99_ms={p99} "
              f"metrics={rm:.0f} ratio_metrics={rm / r1:.3f}")


def ab(main_rows, sizes):
    """This build over the base build, round by round, beside the spread of
    each build's own rounds (max / min rate): a ratio below 1 by more than
    that spread is a slowdown the noise does not explain."""
    lines = []
    for s in sizes:
        for mode in ("eos", "alo"):
            this = {kv.get("round"): num(kv, "rate") for c, kv in main_rows[s] if c == f"proxy_{mode}"}
            base = {kv.get("round"): num(kv, "rate") for c, kv in main_rows[s] if c == f"proxy_{mode}_base"}
            rounds = sorted(set(this) & set(base), key=int)
            if not rounds:
                continue
            ratios = [this[r] / base[r] for r in rounds]
            spread = lambda xs: max(xs) / min(xs) if xs and min(xs) > 0 else float("nan")
            lines.append(f"ab: size={s} mode={mode} rounds={len(rounds)} "
                         f"ratio_median={med(ratios):.3f} ratios={','.join(f'{x:.3f}' for x in ratios)} "
                         f"this_median={med(list(this.values())):.0f} base_median={med(list(base.values())):.0f} "
                         f"spread_this={spread(list(this.values())):.3f} spread_base={spread(list(base.values())):.3f}")
    if lines:
        print("\n## This build against the base build (BENCH_BASE_BIN)\n")
        for l in lines:
            print(l)


main()
