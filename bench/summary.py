#!/usr/bin/env python3
"""bench/summary.py RESULTS: the tables, the plot and the summary lines of a
make bench run (RESULTS: the results-*.txt that bench/run.sh writes).

  bench:        the medians of the repeats (the first size of the run)
  bench-spread: each of those figures again, its spread (min-max of the
                repeats) beside it; a ratio whose spread reaches the goal
                it is held against says it is not distinguishable from it
  bench-long:   the long run (BENCH_LONG_MINUTES), each figure beside its goal

A ratio is taken repeat by repeat (gate-proxy's rate in repeat i over the
limit's in repeat i, which ran next to it), and its median and spread are
those of the per-repeat ratios."""
import os
import statistics
import sys

CONTENDERS = ["proxy_eos", "proxy_eos_metrics", "proxy_alo", "limit", "streams_eos", "kcat"]
# The goal each ratio is held against (issue 26, and the 2 % budget of
# /metrics): (goal, "above" or "below" is met)
GOALS = {"ratio_limit": (0.95, "above"), "ratio_peer": (1.0, "above"),
         "cpu_ratio_peer": (0.25, "below"), "ratio_metrics": (0.98, "above"),
         "rss_mb": (30.0, "below")}
RSS_GOAL_MB = 30.0
# An A/B run (bench/run.sh, BENCH_BASE_BIN): the same contenders on a base build.
BASE = ["proxy_eos_base", "proxy_alo_base", "limit_base"]
LABELS = {"proxy_eos": "gate-proxy, exactly-once (cutover half-way)",
          "proxy_eos_metrics": "the same, /metrics scraped every second",
          "proxy_alo": "gate-proxy, at-least-once",
          "limit": "librdkafka passthrough, exactly-once (the limit)",
          "streams_eos": "Kafka Streams, exactly_once_v2 (the peer)",
          "kcat": "kcat consume piped to kcat produce, at-least-once",
          "proxy_eos_base": "base build: gate-proxy, exactly-once (cutover half-way)",
          "proxy_alo_base": "base build: gate-proxy, at-least-once",
          "limit_base": "base build: librdkafka passthrough, exactly-once"}


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


def spread(xs):
    xs = [x for x in xs if x == x]
    return (min(xs), max(xs)) if xs else (float("nan"), float("nan"))


def paired(main, s, a, b, key, op):
    """op(a's figure, b's figure) repeat by repeat, over the repeats both ran"""
    fa = {kv.get("round"): num(kv, key) for c, kv in main.get(s, []) if c == a}
    fb = {kv.get("round"): num(kv, key) for c, kv in main.get(s, []) if c == b}
    return [op(fa[r], fb[r]) for r in sorted(set(fa) & set(fb), key=int) if fb[r] > 0]


def verdict(name, xs, fmt):
    """MEDIAN (spread LO–HI: what the spread says against the goal)"""
    m, (lo, hi) = med(xs), spread(xs)
    text = f"{m:{fmt}} (spread {lo:{fmt}}–{hi:{fmt}}"
    if name in GOALS and m == m:
        g, side = GOALS[name]
        if len([x for x in xs if x == x]) < 2:
            text += f": one repeat, no spread; goal {'≥' if side == 'above' else '≤'} {g:{fmt}}"
        elif lo <= g <= hi:
            text += f": not distinguishable from {g:{fmt}}"
        else:
            above = lo > g
            met = above == (side == "above")
            text += f": {'above' if above else 'below'} {g:{fmt}}, goal {'met' if met else 'not met'}"
    return text + ")"


def long_line(kv):
    """bench-long: the long run's figures, each beside its goal"""
    commit = num(kv, "commit_ms")
    rss_max, p99 = num(kv, "rss_max_mb"), num(kv, "ss_p99_ms")
    goal_ms = commit + 5
    met = lambda ok: "met" if ok else "not met"
    sent, want = num(kv, "sent"), num(kv, "rate") * num(kv, "minutes") * 60
    return (f"bench-long: minutes={kv.get('minutes')} rate={kv.get('rate')} sent={kv.get('sent')} "
            f"routed={kv.get('n')} rss_samples={kv.get('rss_samples')} "
            f"rss_min_mb={kv.get('rss_min_mb')} rss_max_mb={kv.get('rss_max_mb')} "
            f"(goal ≤ {RSS_GOAL_MB:.0f} MB: {met(rss_max <= RSS_GOAL_MB)}) "
            f"rss_first_minute_max_mb={kv.get('rss_first_minute_max_mb')} "
            f"rss_last_minute_max_mb={kv.get('rss_last_minute_max_mb')} "
            f"p99_ms={kv.get('ss_p99_ms')} (after the first 2 s; goal ≤ commit interval "
            f"{commit:.0f} + 5 = {goal_ms:.0f} ms: {met(p99 <= goal_ms)}) "
            f"p50_ms={kv.get('ss_p50_ms')} max_ms={kv.get('ss_max_ms')} "
            f"p99_all_ms={kv.get('p99_ms')} max_all_ms={kv.get('max_ms')}"
            + ("" if sent == want and num(kv, "n") == sent else
               f" (incomplete: {want:.0f} to send, {sent:.0f} in the source, {num(kv, 'n'):.0f} routed)"))


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
    if sizes:
        print("## Throughput (median of the repeats, min–max beside it)\n")
        print("| contender | size | repeats | records/s | min–max | CPU s per million | min–max "
              "| peak RSS MB | min–max |")
        print("|---|---|---|---|---|---|---|---|---|")
    agg = {}
    for s in sizes:
        for c in CONTENDERS + BASE:
            kvs = [kv for cc, kv in main_rows[s] if cc == c]
            if not kvs:
                continue
            rates = [num(kv, "rate") for kv in kvs]
            cpus = [num(kv, "cpu_s_per_m") for kv in kvs]
            rsss = [num(kv, "rss_mb") for kv in kvs]
            r, cpu, rss = med(rates), med(cpus), med(rsss)
            agg[(c, s)] = (r, cpu, rss, max(rsss))
            (rl, rh), (cl, ch), (ml, mh) = spread(rates), spread(cpus), spread(rsss)
            print(f"| {LABELS[c]} | {s} B | {len(kvs)} | {r:,.0f} | {rl:,.0f}–{rh:,.0f} "
                  f"| {cpu:.2f} | {cl:.2f}–{ch:.2f} | {rss:.1f} | {ml:.1f}–{mh:.1f} |")
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
    longs = [kv for t, c, kv in rows if t == "long"]
    if sizes:
        s = sizes[0]
        g = lambda c, i: agg.get((c, s), (float("nan"),) * 4)[i]
        r1, rm, r2, r3, r4, r5 = (g(c, 0) for c in CONTENDERS)
        c1, c4 = g("proxy_eos", 1), g("streams_eos", 1)
        rss = g("proxy_eos", 2)
        rss_max = max([v[3] for (c, _), v in agg.items() if c.startswith("proxy")] + [0])
        # the steady state's p99 (bench/latency.py: after the feed's first 2 s)
        p99 = lat.get("proxy_eos", {}).get("ss_p99_ms", "nan")
        rate = lambda a, b: a / b
        ratios = {"ratio_limit": paired(main_rows, s, "proxy_eos", "limit", "rate", rate),
                  "ratio_peer": paired(main_rows, s, "proxy_eos", "streams_eos", "rate", rate),
                  "cpu_ratio_peer": paired(main_rows, s, "proxy_eos", "streams_eos", "cpu_s_per_m", rate),
                  "ratio_metrics": paired(main_rows, s, "proxy_eos_metrics", "proxy_eos", "rate", rate)}
        rq = {k: med(v) for k, v in ratios.items()}
        repeats = max([len([1 for cc, _ in main_rows[s] if cc == c]) for c in CONTENDERS] + [0])
        svg(os.path.join(os.path.dirname(sys.argv[1]) or ".", "throughput.svg"), sizes, main_rows)
        print()
        print(f"bench: size={s} repeats={repeats} proxy_eos={r1:.0f} proxy_alo={r2:.0f} limit={r3:.0f} "
              f"streams_eos={r4:.0f} kcat={r5:.0f} ratio_limit={rq['ratio_limit']:.2f} "
              f"ratio_peer={rq['ratio_peer']:.2f} cpu_proxy_eos={c1:.2f} cpu_streams_eos={c4:.2f} "
              f"cpu_ratio_peer={rq['cpu_ratio_peer']:.2f} rss_mb={rss:.1f} rss_max_mb={rss_max:.1f} "
              f"p99_ms={p99} metrics={rm:.0f} ratio_metrics={rq['ratio_metrics']:.3f}")
        col = lambda c, key: [num(kv, key) for cc, kv in main_rows[s] if cc == c]
        figs = []
        for name, c, key, fmt in (("proxy_eos", "proxy_eos", "rate", ".0f"),
                                  ("limit", "limit", "rate", ".0f"),
                                  ("streams_eos", "streams_eos", "rate", ".0f")):
            if col(c, key):
                figs.append(f"{name}={verdict(name, col(c, key), fmt)}")
        for name, fmt in (("ratio_limit", ".2f"), ("ratio_peer", ".2f")):
            if ratios[name]:
                figs.append(f"{name}={verdict(name, ratios[name], fmt)}")
        for name, c in (("cpu_proxy_eos", "proxy_eos"), ("cpu_streams_eos", "streams_eos")):
            if col(c, "cpu_s_per_m"):
                figs.append(f"{name}={verdict(name, col(c, 'cpu_s_per_m'), '.2f')}")
        if ratios["cpu_ratio_peer"]:
            figs.append(f"cpu_ratio_peer={verdict('cpu_ratio_peer', ratios['cpu_ratio_peer'], '.2f')}")
        if col("proxy_eos", "rss_mb"):
            figs.append(f"rss_mb={verdict('rss_mb', col('proxy_eos', 'rss_mb'), '.1f')}")
        if ratios["ratio_metrics"]:
            figs.append(f"ratio_metrics={verdict('ratio_metrics', ratios['ratio_metrics'], '.3f')}")
        print(f"bench-spread: size={s} repeats={repeats} spread=min–max " + " ".join(figs))
    for kv in longs:
        if not sizes:
            print()
        print(long_line(kv))


def ab(main_rows, sizes):
    """This build over the base build, round by round, beside the spread of
    each build's own rounds (max / min rate): a ratio below 1 by more than
    that spread is a slowdown the noise does not explain."""
    lines = []
    for s in sizes:
        for mode, name in (("eos", "proxy_eos"), ("alo", "proxy_alo"), ("limit", "limit")):
            this = {kv.get("round"): num(kv, "rate") for c, kv in main_rows[s] if c == name}
            base = {kv.get("round"): num(kv, "rate") for c, kv in main_rows[s] if c == f"{name}_base"}
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
