package gateproxy.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.JobID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * An abandoned hand-over with a real Flink job: the running total behind
 * gate-proxy (the exact path's CLI and control file, one instance), blue
 * running, {@code gate-proxy cutover --to green}, records at or after T
 * routed to green, then {@code gate-proxy abort}: blue survives. Green's job
 * (started from a savepoint of blue, as a new deployment is) is cancelled
 * and its output thrown away. The records already routed to green (event
 * time at or after T, from the split to the abort) must still reach blue,
 * in their order, before any later record: the survivor's output must be
 * the output of the same job run once, uninterrupted, over the same source.
 *
 * <pre>
 *   Abort --bootstrap HOST:PORT --bin gate-proxy --work DIR [--kills on|off] [--redeliver true|false]
 * </pre>
 *
 * Two cases at once, each a pipeline of its own (own source topic, proxy,
 * control file, jobs) fed the same records:
 * <ul>
 * <li>{@code before-close}: abort during the split ({@code gate.lateness.ms}
 * of 10 minutes, so the old side cannot close first);</li>
 * <li>{@code after-close}: abort after CLEAR_TO_TEARDOWN, blue still running
 * (the operator rolls back instead of tearing blue down).</li>
 * </ul>
 * {@code --kills on} (default) SIGKILLs and restarts each proxy once between
 * T and the abort and once when it has taken the abort up.
 * {@code --redeliver} sets the proxy's {@code gate.abort.redeliver} (unset:
 * the proxy's default). Prints per case
 * {@code e2e: path=abort job=running abort=CASE records=N outputs=M missing=0 duplicated=0 partial=0 extra=0 T=T green=G redelivered=R}
 * (G: the records in green's topic; R: those the proxy says it re-delivered,
 * its {@code gate-proxy.redelivery}) and exits 0 only if both cases
 * reproduce the uninterrupted job, blue's topic holds every source record
 * once, each key in source order, and R = G.
 */
public final class Abort {
    static final int PARTITIONS = 2, KEYS = 8;
    static final long TICK_MS = 50, BOUND_MS = 500, WINDOW_MS = 2000;
    /** Records routed to green before the abort, at least (about 1 s of traffic). */
    static final long MIN_GREEN = 100;

    /** One pipeline and its jobs. */
    final class Case {
        final String name, run, source;
        final boolean closeFirst;
        Proxy proxy;
        JobID ref, blue, green;
        long t = -1, greenAtAbort = -1;
        /** The proxy's gate-proxy.redelivery at the end ("" when it has none). */
        String redelivery = "";
        String phaseAtAbort = "";

        Case(String name, String run, boolean closeFirst) {
            this.name = name;
            this.run = run;
            this.closeFirst = closeFirst;
            this.source = run + "-running";
        }

        Jobs.Spec spec(String colour) {
            String src = colour.equals("ref") ? source : source + "." + colour;
            // Green's output is the abandoned job's: kept apart, thrown away.
            String out = source + (colour.equals("ref") ? ".reference" : colour.equals("blue") ? ".out" : ".abandoned");
            Jobs.Spec s = Jobs.Spec.of(Jobs.Kind.RUNNING, bootstrap, run, colour, src, out, true);
            s.windowMs = WINDOW_MS;
            s.boundMs = BOUND_MS;
            s.parallelism = PARTITIONS;
            return s;
        }

        String group() { return run + "-proxy"; }
    }

    final Map<String, String> args;
    final String bootstrap;
    final Path work;
    final Kafka kafka;
    final boolean kills;
    final List<Case> cases = new ArrayList<>();

    Abort(Map<String, String> args) {
        this.args = args;
        bootstrap = need("bootstrap");
        work = Path.of(need("work"));
        kafka = new Kafka(bootstrap);
        kills = !"off".equals(args.getOrDefault("kills", "on"));
        String run = "e2e-abort-" + Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        cases.add(new Case("before-close", run + "-b", false));
        cases.add(new Case("after-close", run + "-a", true));
    }

    String need(String k) {
        String v = args.get(k);
        if (v == null)
            throw new IllegalArgumentException("--" + k + " is required");
        return v;
    }

    static void say(String s) { Handover.say(s); }

    Proxy proxy(Case c) throws Exception {
        Path cm = work.resolve(c.name + ".cm.json");
        List<String> lines = new ArrayList<>(List.of(
                "kafka.bootstrap.servers=" + bootstrap,
                "kafka.transaction.timeout.ms=10000",
                "gate.pipeline=" + c.run,
                "gate.group.id=" + c.group(),
                "gate.source.topics=" + c.source,
                "gate.event-time=json:ts",
                "gate.topics.create=false",
                "gate.dlq.topic=" + c.run + ".dlq",
                "gate.watermark.out-of-orderness.ms=" + BOUND_MS,
                "gate.watermark.idle.ms=2000",
                "gate.cutoff.align.ms=" + WINDOW_MS,
                // before-close: the old side cannot close within the run
                "gate.lateness.ms=" + (c.closeFirst ? 0 : 600_000),
                "gate.drain.group.blue=" + c.run + "-blue",
                "gate.drain.group.green=" + c.run + "-green",
                "control.file=" + cm));
        if (args.containsKey("redeliver"))
            lines.add("gate.abort.redeliver=" + args.get("redeliver"));
        lines.add("");
        Path conf = work.resolve(c.name + ".conf");
        Files.writeString(conf, String.join("\n", lines));
        return new Proxy(need("bin"), conf, work.resolve("proxy-" + c.name + ".log"),
                List.of("--control", cm.toString()));
    }

    static long num(Map<String, String> m, String k) {
        return Long.parseLong(m.getOrDefault(k, "-1"));
    }

    int run() throws Exception {
        Files.createDirectories(work);
        for (Case c : cases) {
            String s = c.source;
            kafka.createTopics(PARTITIONS, s, s + ".blue", s + ".green", s + ".out", s + ".reference",
                    s + ".abandoned");
            kafka.createTopics(1, c.run + ".dlq");
            c.proxy = proxy(c);
            c.proxy.cli("init", "--force");
            c.proxy.start();
        }
        for (Case c : cases)
            c.proxy.await("the proxy's first status", Duration.ofSeconds(60),
                    m -> m.containsKey("gate-proxy.heartbeat"));

        List<String> sources = new ArrayList<>();
        for (Case c : cases)
            sources.add(c.source);
        Generator gen = new Generator(kafka, sources, PARTITIONS, KEYS, TICK_MS, BOUND_MS);
        try (Cluster flink = new Cluster(work.resolve("flink"), 3 * PARTITIONS * cases.size())) {
            for (Case c : cases) {
                c.ref = flink.submit(c.spec("ref"), null);
                c.blue = flink.submit(c.spec("blue"), null);
            }
            for (Case c : cases) {
                flink.awaitRunning(c.ref, Duration.ofSeconds(120));
                flink.awaitRunning(c.blue, Duration.ofSeconds(120));
            }
            gen.start();
            say("reference and blue jobs running; records flowing into " + sources);
            Thread.sleep(4000);

            for (Case c : cases) {
                c.proxy.cli("cutover", "--to", "green", "--delay-ms", "0");
                // Green as a new deployment starts: from a savepoint of blue,
                // its own source and sink uids, reading its colour's topic.
                c.green = flink.submit(c.spec("green"), flink.savepoint(c.blue));
            }
            for (Case c : cases) {
                Map<String, String> m = c.proxy.await("a cutoff T", Duration.ofSeconds(60),
                        s -> "WATERMARK_SET".equals(s.get("watermark-stage")));
                c.t = Long.parseLong(m.get("watermark-toggle-value"));
                say(c.name + ": T=" + c.t + ", the proxy splits");
                flink.awaitRunning(c.green, Duration.ofSeconds(120));
            }
            if (kills) {
                for (Case c : cases) {
                    c.proxy.killAndRestart();
                    say(c.name + ": proxy SIGKILLed and restarted after T");
                }
            }
            for (Case c : cases) {
                Map<String, String> m;
                if (c.closeFirst) {
                    m = c.proxy.await("CLEAR_TO_TEARDOWN", Duration.ofSeconds(180),
                            s -> "CLEAR_TO_TEARDOWN".equals(s.get("stage")));
                    long g0 = num(m, "gate-proxy.count.green");
                    say(c.name + ": CLEAR_TO_TEARDOWN with " + g0 + " records routed to green; blue keeps running");
                    m = c.proxy.await(MIN_GREEN + " more records to green", Duration.ofSeconds(60),
                            s -> num(s, "gate-proxy.count.green") >= g0 + MIN_GREEN);
                } else {
                    m = c.proxy.await(MIN_GREEN + " records to green", Duration.ofSeconds(60),
                            s -> num(s, "gate-proxy.count.green") >= MIN_GREEN);
                    if (!"TRANSITIONING".equals(m.get("stage")) || !"split".equals(m.get("gate-proxy.phase")))
                        throw new IllegalStateException(c.name + ": the old side closed before the abort: " + m);
                }
                if (Long.parseLong(m.get("watermark-toggle-value")) != c.t)
                    throw new IllegalStateException(c.name + ": T moved: " + m);
                c.greenAtAbort = num(m, "gate-proxy.count.green");
                c.phaseAtAbort = m.get("gate-proxy.phase");
                c.proxy.cli("abort");
                m = c.proxy.await("the proxy's phase aborted", Duration.ofSeconds(60),
                        s -> "aborted".equals(s.get("gate-proxy.phase")));
                say(c.name + ": aborted in phase " + c.phaseAtAbort + " (about " + c.greenAtAbort
                        + " records routed to green); blue survives; aborted-routed="
                        + m.get("gate-proxy.aborted-routed"));
                if (kills) {
                    c.proxy.killAndRestart();
                    say(c.name + ": proxy SIGKILLed and restarted after the abort");
                }
                flink.cancel(c.green);
                c.proxy.cli("finish");
                say(c.name + ": green's job cancelled, output thrown away; finish");
            }
            Thread.sleep(4000);

            gen.stop.set(true);
            gen.join();
            if (gen.failed != null)
                throw gen.failed;
            say("generator stopped after " + gen.sent.get() + " records per source topic");
            for (Case c : cases) {
                awaitProxyConsumed(c);
                // The re-delivery, once every source record is consumed, has
                // ended: no partition still reading again.
                Map<String, String> m = c.proxy.await("the re-delivery's end", Duration.ofSeconds(60),
                        s -> !s.getOrDefault("gate-proxy.redelivery", "").contains("open=")
                                || s.get("gate-proxy.redelivery").contains("open=0"));
                c.redelivery = m.getOrDefault("gate-proxy.redelivery", "");
                say(c.name + ": gate-proxy.redelivery=" + c.redelivery);
            }
            for (Case c : cases) {
                kafka.awaitDrained(c.spec("blue").group, List.of(c.source + ".blue"), Duration.ofSeconds(120));
                kafka.awaitDrained(c.spec("ref").group, List.of(c.source), Duration.ofSeconds(120));
                flink.stop(c.blue, true);
                flink.stop(c.ref, true);
            }
            say("blue and reference jobs drained and stopped");
        } finally {
            gen.stop.set(true);
            Exception stop = null;
            for (Case c : cases) {
                try {
                    if (c.proxy != null && c.proxy.alive())
                        c.proxy.stop();
                } catch (Exception e) {
                    if (stop == null)
                        stop = e;
                }
            }
            if (stop != null)
                throw stop;
        }
        int bad = 0;
        for (Case c : cases)
            bad += verify(c);
        return bad == 0 ? 0 : 1;
    }

    /** Waits until the proxy of C has committed every source record. */
    void awaitProxyConsumed(Case c) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Map<TopicPartition, Long> want = kafka.ends(c.source);
        while (true) {
            var com = kafka.committed(c.group());
            boolean all = true;
            for (var e : want.entrySet())
                all &= com.containsKey(e.getKey()) && com.get(e.getKey()).offset() >= e.getValue();
            if (all)
                return;
            if (!c.proxy.alive())
                throw new IllegalStateException(c.name + ": gate-proxy died (log: " + c.proxy.logName() + ")");
            if (System.nanoTime() > end)
                throw new IllegalStateException(c.name + ": the proxy has not consumed " + want + "; committed " + com);
            Thread.sleep(200);
        }
    }

    static final Pattern SENT = Pattern.compile("\\bsent=(\\d+)");

    /** The checks of one case; returns 1 when it failed. */
    int verify(Case c) throws Exception {
        List<ConsumerRecord<String, String>> src = kafka.readAll(c.source);
        // Blue's topic: every source record once, and per key in source
        // order (the running total is summed in arrival order).
        Map<String, Integer> inBlue = new HashMap<>();
        Map<String, Long> lastId = new HashMap<>();
        long reordered = 0;
        for (ConsumerRecord<String, String> r : kafka.readAll(c.source + ".blue")) {
            inBlue.merge(r.value(), 1, Integer::sum);
            Jobs.Rec rec = Jobs.Rec.parse(r.value());
            Long prev = lastId.put(rec.k, rec.id);
            if (prev != null && prev > rec.id)
                reordered++;
        }
        long lost = 0, dup = 0, lostMin = Long.MAX_VALUE, lostMax = Long.MIN_VALUE, lostBelowT = 0;
        for (ConsumerRecord<String, String> r : src) {
            Integer n = inBlue.get(r.value());
            if (n == null) {
                lost++;
                long ts = Jobs.Rec.parse(r.value()).ts;
                lostMin = Math.min(lostMin, ts);
                lostMax = Math.max(lostMax, ts);
                if (ts < c.t)
                    lostBelowT++;
            } else {
                dup += n - 1;
            }
        }
        long green = kafka.readAll(c.source + ".green").size();
        String colours = "colours: path=abort abort=" + c.name + " records=" + src.size() + " blue_lost=" + lost
                + (lost > 0 ? " (ts " + (lostMin - c.t) + ".." + (lostMax - c.t) + " ms from T, "
                        + lostBelowT + " below T)" : "")
                + " blue_duplicated=" + dup + " blue_out_of_key_order=" + reordered + " green=" + green;
        say(colours);

        List<String> want = Handover.values(kafka.readAll(c.source + ".reference"));
        List<String> got = Handover.values(kafka.readAll(c.source + ".out"));
        Check k = Check.compare(Jobs.Kind.RUNNING, want, got);
        Matcher sent = SENT.matcher(c.redelivery);
        long redelivered = sent.find() ? Long.parseLong(sent.group(1)) : 0;
        System.out.println("e2e: path=abort job=running abort=" + c.name + " records=" + src.size() + " " + k
                + " T=" + c.t + " green=" + green + " redelivered=" + redelivered);
        for (var e : k.deficits.entrySet()) {
            TreeMap<Long, Long> d = e.getValue();
            long max = 0;
            for (long v : d.values())
                max = Math.max(max, Math.abs(v));
            say(c.name + ": key " + e.getKey() + ": " + d.size() + " totals differ from the reference, from id "
                    + d.firstKey() + " (by " + d.firstEntry().getValue() + "), at most by " + max);
        }
        boolean ok = k.exact() && !want.isEmpty() && lost == 0 && dup == 0 && reordered == 0 && green > 0
                && redelivered == green;
        if (!ok)
            say("FAIL: the survivor of the abort " + c.name + " did not reproduce the uninterrupted job");
        return ok ? 0 : 1;
    }

    public static void main(String[] argv) throws Exception {
        System.exit(new Abort(Handover.options(argv)).run());
    }
}
