#!/usr/bin/env python3
"""bench/latency.py BOOTSTRAP SOURCE OUT... : end-to-end latency of a run.

Every topic was created with message.timestamp.type=LogAppendTime, so a
record's timestamp is the broker's append time. A record is matched by the
"id" of its JSON value; latency = append to an output topic - append to
the source (both read read_committed). Prints
  n=N p50_ms=A p99_ms=B max_ms=C sent=S warm_ms=W ss_n=N2 ss_p50_ms=.. ss_p99_ms=.. ss_max_ms=..
the first four over every record, the ss_ ones over the records appended
to the source after the first W ms of the feed (the steady state: the
first records into a new topic meet the broker's and the clients'
start-up, which a long-running pipeline pays once)."""
import re
import subprocess
import sys

ID = re.compile(rb'"id":(-?\d+)')


def read(bootstrap, topic):
    # read as it comes: a long run's topics hold millions of records
    p = subprocess.Popen(
        ["kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
         "-X", "isolation.level=read_committed", "-f", "%T %s\n"],
        stdout=subprocess.PIPE)
    ts = {}
    for line in p.stdout:
        t, _, v = line.partition(b" ")
        m = ID.search(v)
        if m:
            ts[int(m.group(1))] = int(t)
    if p.wait() != 0:
        raise subprocess.CalledProcessError(p.returncode, "kcat -C -t " + topic)
    return ts


WARM_MS = 2000


def figures(lat):
    lat = sorted(lat)
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
    return len(lat), q(0.5), q(0.99), lat[-1]


def main():
    bootstrap, source, outs = sys.argv[1], sys.argv[2], sys.argv[3:]
    src = read(bootstrap, source)
    pairs = []
    for o in outs:
        for i, t in read(bootstrap, o).items():
            if i in src:
                pairs.append((src[i], t - src[i]))
    if not pairs:
        print("n=0 p50_ms=0 p99_ms=0 max_ms=0")
        return 1
    start = min(src.values())
    steady = [l for t, l in pairs if t - start >= WARM_MS]
    print("n=%d p50_ms=%d p99_ms=%d max_ms=%d" % figures([l for _, l in pairs]), end="")
    print(" sent=%d warm_ms=%d" % (len(src), WARM_MS), end="")
    if steady:
        print(" ss_n=%d ss_p50_ms=%d ss_p99_ms=%d ss_max_ms=%d" % figures(steady))
    else:
        print()
    return 0


sys.exit(main())
