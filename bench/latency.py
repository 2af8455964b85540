#!/usr/bin/env python3
"""bench/latency.py BOOTSTRAP SOURCE OUT... : end-to-end latency of a run.

Every topic was created with message.timestamp.type=LogAppendTime, so a
record's timestamp is the broker's append time. A record is matched by the
"id" of its JSON value; latency = append to an output topic - append to
the source. Prints: n=N p50_ms=A p99_ms=B max_ms=C (read_committed)."""
import re
import subprocess
import sys

ID = re.compile(rb'"id":(-?\d+)')


def read(bootstrap, topic):
    out = subprocess.run(
        ["kcat", "-C", "-b", bootstrap, "-t", topic, "-o", "beginning", "-e", "-q",
         "-X", "isolation.level=read_committed", "-f", "%T %s\n"],
        check=True, capture_output=True).stdout
    ts = {}
    for line in out.splitlines():
        t, _, v = line.partition(b" ")
        m = ID.search(v)
        if m:
            ts[int(m.group(1))] = int(t)
    return ts


def main():
    bootstrap, source, outs = sys.argv[1], sys.argv[2], sys.argv[3:]
    src = read(bootstrap, source)
    lat = []
    for o in outs:
        for i, t in read(bootstrap, o).items():
            if i in src:
                lat.append(t - src[i])
    if not lat:
        print("n=0 p50_ms=0 p99_ms=0 max_ms=0")
        return 1
    lat.sort()
    q = lambda f: lat[min(len(lat) - 1, int(f * len(lat)))]
    print("n=%d p50_ms=%d p99_ms=%d max_ms=%d sent=%d" % (len(lat), q(0.5), q(0.99), lat[-1], len(src)))
    return 0


sys.exit(main())
