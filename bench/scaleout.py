#!/usr/bin/env python3
"""bench/scaleout.py: the figures of bench/run.sh's scale-out step.

  scaleout.py gaps BOOTSTRAP SOURCE BLUE FEED_START_MS JOIN_MS LEAVE_MS
                   MOVED_JOIN MOVED_LEAVE [WINDOW_MS]

The pause of a scale event. BLUE was created with
message.timestamp.type=LogAppendTime, so each of its records carries the
time the broker appended it, i.e. when the proxy's producer delivered it
(gate-proxy itself stamps a colour record with its event time, which says
nothing about when it was routed). Per partition of BLUE the records are
read in offset order (read_committed) and the gap between two consecutive
appends is taken; the pause of an event at E is, per partition, the
longest gap that overlaps [E, E + WINDOW_MS] (WINDOW_MS 10000). The
source is fed at a steady rate into every partition, so a gap is a time
the proxy routed nothing on that partition. MOVED_* are the partitions
(comma-separated) assigned to a member after the event, from the members'
logs. Also checks the run: every "id" the source holds appears in BLUE
exactly once. Prints one line:
  join_moved=P,.. join_max_gap_ms=A join_unmoved_max_gap_ms=B leave_moved=..
  leave_max_gap_ms=C leave_unmoved_max_gap_ms=D steady_max_gap_ms=S
  records=N missing=M duplicated=D
(steady: the longest gap of any partition from FEED_START_MS + 3 s to JOIN_MS).

  scaleout.py summary RESULTS

The median over rounds of the scale-out lines of a results file, the
CPU per record at 3 and 2 instances over 1, and whether any pause round
lost or duplicated records."""
import re
import statistics
import subprocess
import sys

ID = re.compile(rb'"id":(-?\d+)')


def read(bootstrap, topic):
    out = subprocess.run(
        ["kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
         "-X", "isolation.level=read_committed", "-f", "%p %o %T %s\n"],
        check=True, capture_output=True).stdout
    parts, ids = {}, {}
    for line in out.splitlines():
        p, o, t, v = line.split(b" ", 3)
        parts.setdefault(int(p), []).append((int(o), int(t)))
        m = ID.search(v)
        if m:
            i = int(m.group(1))
            ids[i] = ids.get(i, 0) + 1
    for p in parts:
        parts[p].sort()
    return parts, ids


def gaps_in(times, lo, hi):
    """the longest gap between consecutive times that overlaps [lo, hi]"""
    g = 0
    for a, b in zip(times, times[1:]):
        if b >= lo and a <= hi:
            g = max(g, b - a)
    return g


def plist(s):
    return sorted({int(x) for x in s.split(",") if x != ""})


def gaps(argv):
    bootstrap, source, blue = argv[0], argv[1], argv[2]
    feed0, join, leave = int(argv[3]), int(argv[4]), int(argv[5])
    moved = {"join": plist(argv[6]), "leave": plist(argv[7])}
    window = int(argv[8]) if len(argv) > 8 else 10000
    parts, ids = read(bootstrap, blue)
    _, src_ids = read(bootstrap, source)
    times = {p: [t for _, t in v] for p, v in parts.items()}
    out = []
    for name, e in (("join", join), ("leave", leave)):
        per = {p: gaps_in(t, e, e + window) for p, t in times.items()}
        mv = [per.get(p, 0) for p in moved[name]]
        um = [g for p, g in per.items() if p not in moved[name]]
        out.append("%s_moved=%s %s_max_gap_ms=%d %s_unmoved_max_gap_ms=%d" % (
            name, ",".join(map(str, moved[name])) or "none", name, max(mv or [0]), name,
            max(um or [0])))
    steady = max(gaps_in(t, feed0 + 3000, join) for t in times.values())
    missing = sum(1 for i in src_ids if i not in ids)
    dup = sum(c - 1 for c in ids.values() if c > 1) + sum(1 for i in ids if i not in src_ids)
    out.append("steady_max_gap_ms=%d records=%d missing=%d duplicated=%d" % (
        steady, sum(ids.values()), missing, dup))
    print(" ".join(out))


def kvs(line):
    return dict(p.split("=", 1) for p in line.split() if "=" in p)


def summary(argv):
    runs, pauses, agrees = {}, [], {}
    for line in open(argv[0]):
        f = line.split()
        if len(f) < 2:
            continue
        if f[0] == "scaleout":
            kv = kvs(line)
            runs.setdefault(int(kv["instances"]), []).append(kv)
        elif f[0] == "scalepause":
            pauses.append(kvs(line))
        elif f[0] == "scaleagree" and "agree_ms" in line:
            kv = kvs(line)
            agrees.setdefault(kv["instances"], []).append(kv)
    med = {}
    print("scale-out: median of %s round(s), 100 B records, 12 partitions, exactly-once, "
          "gate.membership=group" % (",".join(str(len(v)) for v in runs.values()) or "0"))
    for k in sorted(runs):
        m = {x: statistics.median(float(r[x]) for r in runs[k])
             for x in ("rate", "cpu_s_per_m", "cpu_total_s_per_m", "rss_mb")}
        med[k] = m
        print("scaleout: instances=%d rate=%.0f cpu_s_per_m=%.2f cpu_total_s_per_m=%.2f "
              "rss_mb=%.1f rounds=%d" % (k, m["rate"], m["cpu_s_per_m"],
                                         m["cpu_total_s_per_m"], m["rss_mb"], len(runs[k])))
    if 1 in med:
        for k in sorted(med):
            if k > 1:
                print("scaleout: cpu_per_record_%d_over_1=%.3f cpu_total_per_record_%d_over_1=%.3f"
                      % (k, med[k]["cpu_s_per_m"] / med[1]["cpu_s_per_m"], k,
                         med[k]["cpu_total_s_per_m"] / med[1]["cpu_total_s_per_m"]))
    if pauses:
        keys = ("join_max_gap_ms", "join_unmoved_max_gap_ms", "leave_max_gap_ms",
                "leave_unmoved_max_gap_ms", "steady_max_gap_ms")
        print("scalepause: median of %d round(s): %s" % (len(pauses), " ".join(
            "%s=%.0f" % (x, statistics.median(float(p[x]) for p in pauses)) for x in keys)))
        bad = [p for p in pauses if int(p["missing"]) or int(p["duplicated"])]
        print("scalepause: exactly-once broken in %d of %d round(s): missing=%s duplicated=%s"
              % (len(bad), len(pauses), ",".join(p["missing"] for p in pauses),
                 ",".join(p["duplicated"] for p in pauses)) if bad else
              "scalepause: every record in blue exactly once in all %d round(s)" % len(pauses))

    for k in sorted(agrees, key=lambda x: (x != "assign", x)):
        a = agrees[k]
        print("scaleagree: instances=%s agree_ms=%.0f close_ms=%.0f rounds=%d (agree_ms %s)"
              % (k, statistics.median(float(r["agree_ms"]) for r in a),
                 statistics.median(float(r["close_ms"]) for r in a), len(a),
                 ",".join(r["agree_ms"] for r in a)))


if __name__ == "__main__":
    {"gaps": gaps, "summary": summary}[sys.argv[1]](sys.argv[2:])
