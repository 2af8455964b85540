package gateproxy.e2e;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * Compares what a job wrote through a hand-over with what the same job wrote
 * uninterrupted. Each output line has an identity (the record id; the key and
 * window start; the key and record id) and a value:
 * <ul>
 * <li>missing: an identity of the reference that the hand-over never wrote;</li>
 * <li>duplicated: each further copy of an identity the hand-over wrote;</li>
 * <li>partial: an identity written with another value (a window with part of
 * its records, a running total that missed some);</li>
 * <li>extra: an identity the reference never wrote.</li>
 * </ul>
 */
public final class Check {
    public long outputs, missing, duplicated, partial, extra;
    /** For RUNNING: per key, record id to (reference total - hand-over total). */
    public final Map<String, TreeMap<Long, Long>> deficits = new TreeMap<>();

    static String identity(Jobs.Kind kind, String[] f) {
        switch (kind) {
        case STATELESS: return f[1];
        default: return f[1] + "," + f[2];
        }
    }

    public static Check compare(Jobs.Kind kind, List<String> ref, List<String> got) {
        Check c = new Check();
        Map<String, String> want = new HashMap<>();
        for (String line : ref) {
            String[] f = line.split(",");
            if (want.put(identity(kind, f), line) != null)
                throw new IllegalStateException("the reference wrote " + line + " twice");
        }
        Map<String, List<String>> have = new HashMap<>();
        for (String line : got)
            have.computeIfAbsent(identity(kind, line.split(",")), k -> new ArrayList<>()).add(line);
        c.outputs = got.size();
        for (var e : want.entrySet()) {
            List<String> h = have.get(e.getKey());
            if (h == null) {
                c.missing++;
                continue;
            }
            c.duplicated += h.size() - 1;
            boolean exact = false;
            for (String line : h)
                exact |= line.equals(e.getValue());
            if (!exact) {
                c.partial++;
                if (kind == Jobs.Kind.RUNNING) {
                    String[] w = e.getValue().split(","), g = h.get(0).split(",");
                    c.deficits.computeIfAbsent(w[1], k -> new TreeMap<>())
                            .put(Long.parseLong(w[2]), Long.parseLong(w[3]) - Long.parseLong(g[3]));
                }
            }
        }
        for (String id : have.keySet())
            if (!want.containsKey(id))
                c.extra++;
        return c;
    }

    public boolean exact() { return missing == 0 && duplicated == 0 && partial == 0 && extra == 0; }

    /**
     * For a running total carried over by intermediate savepoints: true when
     * every difference is a total that is short, never long, and per key the
     * shortfall only grows, in at most {@code hops} steps (one per savepoint
     * that missed records before its T).
     */
    public boolean onlyShortBySavepointGaps(int hops) {
        for (TreeMap<Long, Long> d : deficits.values()) {
            long last = 0;
            int steps = 0;
            for (long v : d.values()) {
                if (v <= 0 || v < last)
                    return false;
                if (v != last)
                    steps++;
                last = v;
            }
            if (steps > hops)
                return false;
        }
        return true;
    }

    public long maxDeficit() {
        long m = 0;
        for (TreeMap<Long, Long> d : deficits.values())
            for (long v : d.values())
                m = Math.max(m, v);
        return m;
    }

    @Override
    public String toString() {
        return "outputs=" + outputs + " missing=" + missing + " duplicated=" + duplicated
                + " partial=" + partial + " extra=" + extra;
    }
}
