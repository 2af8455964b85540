package gateproxy.e2e;

import java.io.ByteArrayOutputStream;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BooleanSupplier;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The negative controls of the hand-over recipe (docs/FLINK.md, "The
 * negative controls"): for each rule, the failure a job shows when the rule is
 * broken, and that the failure goes away when it is kept. Each variant runs
 * in a MiniCluster of its own (a fencing cascade can kill a shared
 * TaskExecutor) on topics of its own; records go straight to the colour
 * topics, no gate-proxy.
 *
 * <pre>
 *   Controls --bootstrap HOST:PORT --work DIR [--only source-uid|window-uid|sink-uid|idleness|drain]
 * </pre>
 *
 * <ul>
 * <li>source-uid: green restored from blue's savepoint with blue's source uid
 * keeps reading S.blue (its restored split) besides S.green, so records blue
 * gets after the savepoint come out of both jobs;</li>
 * <li>window-uid: green restored from blue's intermediate savepoint with
 * blue's window uid fires the windows it restored, half-full, although they
 * end at or before T and blue fires them too (drained at its stop);</li>
 * <li>sink-uid: green started from blue's savepoint with blue's sink uid
 * (and a prefix of its own) aborts the transactions blue is using, so blue
 * fails while it still runs;</li>
 * <li>idleness: a window job with withIdleness whose source is idle loses
 * its last window at a stop with drain (FLINK-40499);</li>
 * <li>drain: blue stopped with a drained savepoint (the operator's suspend
 * with {@code kubernetes.operator.job.drain-on-savepoint-deletion: true})
 * fires its open windows early, the one that ends after T among them, and
 * keeps none in the savepoint; green started from it fires that window
 * again with its own records only: the key's window twice, both partial.
 * Without drain the window stays in the savepoint and green fires it whole.
 * (T inside a window: the cutoff not aligned to the job's windows. With
 * {@code gate.cutoff.align.ms} equal to a tumbling window no window
 * straddles T and the drained stop fires only windows already complete;
 * timers or windows of other sizes still straddle it.) This is why
 * {@code gate-proxy handover} refuses a drain that is not "false".</li>
 * </ul>
 * Prints one line per control,
 * {@code control: rule=R broken=WHAT kept=WHAT ok|FAIL}, and exits 0 only if
 * every control failed when broken and not when kept.
 */
public final class Controls {
    static final List<String> RULES = List.of("source-uid", "window-uid", "sink-uid", "idleness", "drain");
    static final int KEYS = 4;
    static final long WINDOW_MS = 2000, BOUND_MS = 500, IDLE_MS = 1000;

    final String bootstrap, tag;
    final Path work;
    final Kafka kafka;

    Controls(String bootstrap, Path work) {
        this.bootstrap = bootstrap;
        this.work = work;
        this.tag = "ctl-" + Long.toString(ThreadLocalRandom.current().nextLong(1L << 40), 36);
        this.kafka = new Kafka(bootstrap);
    }

    static void say(String s) {
        System.out.printf("[%tT] %s%n", System.currentTimeMillis(), s);
        System.out.flush();
    }

    /** What one variant measured, and whether it shows the failure. */
    record Outcome(boolean failed, String what) {}

    interface Variant {
        Outcome run(String run, Cluster flink) throws Exception;
    }

    /** One variant: fresh topics under {@code tag-rule-variant}, its own MiniCluster. */
    Outcome variant(String rule, String which, Variant v) throws Exception {
        String run = tag + "-" + rule + "-" + which;
        Path dir = work.resolve(run);
        Files.createDirectories(dir);
        long t0 = System.nanoTime();
        Outcome o;
        try (Cluster flink = new Cluster(dir, 4)) {
            o = v.run(run, flink);
        }
        say(rule + " " + which + ": " + o.what() + " (" + (System.nanoTime() - t0) / 1_000_000 + " ms)");
        return o;
    }

    /** The variant of {@code rule}: broken or kept. */
    Variant of(String rule, boolean broken) {
        switch (rule) {
        case "source-uid": return (r, f) -> sourceUid(r, f, broken);
        case "window-uid": return (r, f) -> windowUid(r, f, broken);
        case "sink-uid": return (r, f) -> sinkUid(r, f, broken);
        case "idleness": return (r, f) -> idleness(r, f, broken);
        case "drain": return (r, f) -> drain(r, f, broken);
        default: throw new IllegalArgumentException("no control " + rule + "; one of " + RULES);
        }
    }

    /** Runs one control; prints its line; true when it came out as the rule says. */
    boolean control(String rule) {
        long t0 = System.nanoTime();
        String broken = "error", kept = "error";
        boolean ok = false;
        try {
            Outcome b = variant(rule, "broken", of(rule, true));
            broken = b.what();
            Outcome k = variant(rule, "kept", of(rule, false));
            kept = k.what();
            ok = b.failed() && !k.failed();
        } catch (Exception e) {
            say(rule + ": " + e);
            e.printStackTrace(System.out);
        }
        System.out.println("control: rule=" + rule + " broken=" + broken + " kept=" + kept + " "
                + (ok ? "ok" : "FAIL"));
        say(rule + ": " + (System.nanoTime() - t0) / 1_000_000 + " ms");
        return ok;
    }

    // ---- helpers ----------------------------------------------------------

    Jobs.Spec spec(Jobs.Kind kind, String run, String colour, boolean stateShared) {
        Jobs.Spec s = Jobs.Spec.of(kind, bootstrap, run, colour, run + "." + colour,
                run + ".out." + colour, stateShared);
        s.parallelism = 1;
        s.windowMs = WINDOW_MS;
        s.boundMs = BOUND_MS;
        return s;
    }

    static void send(KafkaProducer<String, String> p, String topic, long id, String key, long ts, long v) {
        // Partition 0 of a one-partition topic; the record's Kafka timestamp
        // stays the producer's clock (event time is in the JSON).
        p.send(new ProducerRecord<>(topic, 0, key, Jobs.Rec.format(id, key, ts, v)));
    }

    List<String> lines(String topic) {
        List<String> out = new ArrayList<>();
        for (ConsumerRecord<String, String> r : kafka.readAll(topic))
            out.add(r.value());
        return out;
    }

    /** Polls {@code c} every 200 ms until it holds (true) or {@code max} passes (false). */
    static boolean poll(Duration max, BooleanSupplier c) throws InterruptedException {
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            if (c.getAsBoolean())
                return true;
            if (System.nanoTime() > end)
                return false;
            Thread.sleep(200);
        }
    }

    static void must(boolean b, String what) {
        if (!b)
            throw new IllegalStateException("timed out waiting for " + what);
    }

    /** The ids of lines "S,id,..." of a STATELESS job. */
    static Set<Long> ids(List<String> lines) {
        Set<Long> s = new HashSet<>();
        for (String l : lines)
            s.add(Long.parseLong(l.split(",")[1]));
        return s;
    }

    /** Writes {@code ts} for every key to {@code topic}; records the expected windows. */
    static void windowRecords(KafkaProducer<String, String> p, String topic, long from, long to, long step,
                              AtomicLong id, Map<String, long[]> expected) {
        for (long ts = from; ts < to; ts += step)
            for (int i = 0; i < KEYS; i++) {
                long n = id.incrementAndGet(), v = n % 13 + 1;
                String key = "k" + i;
                send(p, topic, n, key, ts, v);
                long start = Math.floorDiv(ts, WINDOW_MS) * WINDOW_MS;
                long[] w = expected.computeIfAbsent(key + "," + start, x -> new long[2]);
                w[0]++;
                w[1] += v;
            }
        p.flush();
    }

    /** Window lines "W,key,start,count,sum" mapped by "key,start" to the lines. */
    static Map<String, List<String>> windows(List<String> lines) {
        Map<String, List<String>> m = new LinkedHashMap<>();
        for (String l : lines) {
            String[] f = l.split(",");
            m.computeIfAbsent(f[1] + "," + f[2], x -> new ArrayList<>()).add(l);
        }
        return m;
    }

    static boolean full(String line, Map<String, long[]> expected) {
        String[] f = line.split(",");
        long[] w = expected.get(f[1] + "," + f[2]);
        return w != null && w[0] == Long.parseLong(f[3]) && w[1] == Long.parseLong(f[4]);
    }

    /** A time well clear of now, aligned to the window, so that windows and T line up. */
    static long base() {
        return System.currentTimeMillis() / 60_000 * 60_000;
    }

    /** Writes records to topics in the background, ids from {@code firstId} per topic. */
    static final class Feeder extends Thread {
        final AtomicBoolean stop = new AtomicBoolean();
        final Map<String, AtomicLong> next = new LinkedHashMap<>();
        final KafkaProducer<String, String> p;
        volatile Exception failed;

        Feeder(KafkaProducer<String, String> p, Map<String, Long> firstIds) {
            this.p = p;
            firstIds.forEach((t, i) -> next.put(t, new AtomicLong(i)));
            setDaemon(true);
        }

        @Override
        public void run() {
            try {
                while (!stop.get()) {
                    long ts = System.currentTimeMillis();
                    for (var e : next.entrySet())
                        for (int i = 0; i < KEYS; i++) {
                            long n = e.getValue().getAndIncrement();
                            send(p, e.getKey(), n, "k" + i, ts, n % 13 + 1);
                        }
                    p.flush();
                    Thread.sleep(100);
                }
            } catch (Exception e) {
                failed = e;
            }
        }

        void finish() throws Exception {
            stop.set(true);
            join(10_000);
            if (failed != null)
                throw failed;
        }
    }

    // ---- 1. source uid ----------------------------------------------------

    /**
     * Blue reads S.blue; green starts from blue's intermediate savepoint on
     * S.green. Records blue gets after the savepoint must come out of blue
     * only; with blue's source uid green reads them too.
     */
    Outcome sourceUid(String run, Cluster flink, boolean broken) throws Exception {
        final int n1 = 20, n2 = 40, n3 = 20;
        Jobs.Spec blue = spec(Jobs.Kind.STATELESS, run, "blue", false);
        Jobs.Spec green = spec(Jobs.Kind.STATELESS, run, "green", false);
        if (broken)
            green.sourceUid = blue.sourceUid;
        kafka.createTopics(1, blue.sourceTopic, green.sourceTopic, blue.outTopic, green.outTopic);
        long t = base();
        Set<Long> afterSp = new HashSet<>(), greens = new HashSet<>();
        try (KafkaProducer<String, String> p = kafka.producer()) {
            JobID b = flink.submit(blue, null);
            flink.awaitRunning(b, Duration.ofSeconds(60));
            for (long id = 1; id <= n1; id++)
                send(p, blue.sourceTopic, id, "k" + id % KEYS, t + id, id);
            p.flush();
            must(poll(Duration.ofSeconds(30), () -> lines(blue.outTopic).size() >= n1), "blue's first output");
            String sp = flink.savepoint(b);
            JobID g = flink.submit(green, sp);
            flink.awaitRunning(g, Duration.ofSeconds(60));
            for (long id = n1 + 1; id <= n1 + n2; id++) {
                send(p, blue.sourceTopic, id, "k" + id % KEYS, t + id, id);
                afterSp.add(id);
            }
            for (long id = 1000 + 1; id <= 1000 + n3; id++) {
                send(p, green.sourceTopic, id, "k" + id % KEYS, t + id, id);
                greens.add(id);
            }
            p.flush();
            must(poll(Duration.ofSeconds(30), () -> lines(blue.outTopic).size() >= n1 + n2
                    && ids(lines(green.outTopic)).containsAll(greens)), "both jobs' output");
            // Green reads its restored split (if any) at the same time as
            // S.green; give it a little longer to show all of it.
            poll(Duration.ofSeconds(3), () -> ids(lines(green.outTopic)).containsAll(afterSp));
            flink.stop(g, false);
            flink.stop(b, false);
        }
        List<String> bo = lines(blue.outTopic), go = lines(green.outTopic);
        Set<Long> bi = ids(bo), gi = ids(go);
        long dup = 0, foreign = 0;
        for (long id : gi) {
            if (bi.contains(id))
                dup++;
            if (!greens.contains(id))
                foreign++;
        }
        boolean clean = bo.size() == n1 + n2 && bi.size() == n1 + n2 && go.size() == n3 && gi.equals(greens);
        String what = "duplicated=" + dup + ",green_read_from_blue=" + foreign + "/" + n2
                + ",blue_out=" + bo.size() + ",green_out=" + go.size();
        return new Outcome(broken ? dup > 0 : !clean || dup > 0, what);
    }

    // ---- 2. window uid (operator path) ------------------------------------

    /**
     * Blue gets ts &lt; T, green ts &gt;= T, T aligned to the window. Green
     * starts from blue's intermediate savepoint; blue goes on and is drained
     * at its stop. Green must fire no window ending at or before T; with
     * blue's window uid it fires the windows it restored, partial.
     */
    Outcome windowUid(String run, Cluster flink, boolean broken) throws Exception {
        Jobs.Spec blue = spec(Jobs.Kind.WINDOW, run, "blue", broken);
        Jobs.Spec green = spec(Jobs.Kind.WINDOW, run, "green", broken);
        kafka.createTopics(1, blue.sourceTopic, green.sourceTopic, blue.outTopic, green.outTopic);
        long t0 = base(), cut = t0 + 5 * WINDOW_MS, step = 100;
        Map<String, long[]> expected = new HashMap<>();
        AtomicLong id = new AtomicLong();
        try (KafkaProducer<String, String> p = kafka.producer()) {
            JobID b = flink.submit(blue, null);
            flink.awaitRunning(b, Duration.ofSeconds(60));
            // Before the savepoint: ts up to the middle of the window before
            // the last; its first windows fire, it holds [T-2w, T-w) open.
            windowRecords(p, blue.sourceTopic, t0, cut - 3 * WINDOW_MS / 2, step, id, expected);
            must(poll(Duration.ofSeconds(30), () -> lines(blue.outTopic).size() >= 2 * KEYS),
                    "blue's first windows");
            String sp = flink.savepoint(b);
            // After the savepoint, still before T: blue's records complete the
            // windows the savepoint holds partly.
            windowRecords(p, blue.sourceTopic, cut - 3 * WINDOW_MS / 2, cut, step, id, expected);
            JobID g = flink.submit(green, sp);
            flink.awaitRunning(g, Duration.ofSeconds(60));
            windowRecords(p, green.sourceTopic, cut, cut + 2 * WINDOW_MS, step, id, expected);
            // Green's first own window fires; so has anything it restored
            // (the watermark passed those windows first). Blue, fed the same
            // while, fires [T-2w, T-w) with its watermark at T - bound.
            must(poll(Duration.ofSeconds(30), () -> windows(lines(green.outTopic)).containsKey("k0," + cut)
                    && windows(lines(blue.outTopic)).containsKey("k0," + (cut - 2 * WINDOW_MS))),
                    "green's first window and blue's last but one");
            flink.stop(b, true); // the operator drains OLD at teardown
            flink.stop(g, true);
        }
        Map<String, List<String>> bw = windows(lines(blue.outTopic)), gw = windows(lines(green.outTopic));
        long stale = 0, partial = 0, dup = 0, missing = 0, wrong = 0;
        Set<String> staleAt = new TreeSet<>();
        for (var e : gw.entrySet()) {
            long start = Long.parseLong(e.getKey().split(",")[1]);
            for (String l : e.getValue()) {
                if (start + WINDOW_MS <= cut) {
                    stale++;
                    staleAt.add("[T-" + (cut - start) + ",T-" + (cut - start - WINDOW_MS) + ")");
                }
                if (!full(l, expected))
                    partial++;
            }
        }
        Map<String, Integer> seen = new HashMap<>();
        for (Map<String, List<String>> m : List.of(bw, gw))
            for (var e : m.entrySet())
                for (String l : e.getValue()) {
                    seen.merge(e.getKey(), 1, Integer::sum);
                }
        for (var e : seen.entrySet())
            dup += e.getValue() - 1;
        for (String k : expected.keySet())
            if (!seen.containsKey(k))
                missing++;
        // Blue's windows are all full (wrong: blue's own partial windows).
        for (var e : bw.entrySet())
            for (String l : e.getValue())
                if (!full(l, expected))
                    wrong++;
        String what = "green_windows_ending_by_T=" + stale + (staleAt.isEmpty() ? "" : String.join("", staleAt) + "ms")
                + ",partial=" + partial + ",duplicated=" + dup
                + ",missing=" + missing + ",windows=" + expected.size();
        if (wrong > 0)
            what += ",blue_partial=" + wrong;
        boolean clean = stale == 0 && partial == 0 && dup == 0 && missing == 0 && wrong == 0;
        return new Outcome(broken ? stale > 0 && partial > 0 : !clean, what);
    }

    // ---- 3. sink uid ------------------------------------------------------

    /** The fencing error {@code text} mentions, or "". */
    static String fencing(String text) {
        return text.contains("InvalidProducerEpochException") ? "InvalidProducerEpochException"
                : text.contains("ProducerFenced") ? "ProducerFenced" : "";
    }

    /**
     * A copy of what is written to System.err (where slf4j-simple logs; it
     * looks System.err up on every line) while started, up to a few MB.
     */
    static final class LogTap extends OutputStream {
        static final int MAX = 8 << 20;
        final PrintStream orig;
        final ByteArrayOutputStream seen = new ByteArrayOutputStream();
        volatile boolean on;

        LogTap(PrintStream orig) { this.orig = orig; }

        @Override
        public void write(int b) {
            orig.write(b);
            if (on)
                synchronized (seen) {
                    if (seen.size() < MAX)
                        seen.write(b);
                }
        }

        @Override
        public void write(byte[] b, int off, int len) {
            orig.write(b, off, len);
            if (on)
                synchronized (seen) {
                    if (seen.size() < MAX)
                        seen.write(b, off, len);
                }
        }

        @Override
        public void flush() { orig.flush(); }

        void start() {
            synchronized (seen) {
                seen.reset();
            }
            on = true;
        }

        /** Stops copying; returns what was copied since {@link #start}. */
        String stop() {
            on = false;
            synchronized (seen) {
                String s = seen.toString(StandardCharsets.UTF_8);
                seen.reset();
                return s;
            }
        }
    }

    static final LogTap TAP = new LogTap(System.err);

    /**
     * Blue runs and writes; green starts from blue's intermediate savepoint
     * while blue still runs, both writing one output topic. With blue's sink
     * uid green aborts blue's open transaction and blue fails.
     */
    Outcome sinkUid(String run, Cluster flink, boolean broken) throws Exception {
        final long watchMs = 8000;
        Jobs.Spec blue = spec(Jobs.Kind.STATELESS, run, "blue", false);
        Jobs.Spec green = spec(Jobs.Kind.STATELESS, run, "green", false);
        blue.outTopic = green.outTopic = run + ".out";
        if (broken)
            green.sinkUid = blue.sinkUid; // the prefix stays green's own
        kafka.createTopics(1, blue.sourceTopic, green.sourceTopic, blue.outTopic);
        String out = blue.outTopic;
        final long blueIds = 1_000_000, greenIds = 2_000_000;
        try (KafkaProducer<String, String> p = kafka.producer()) {
            Feeder feed = new Feeder(p, Map.of(blue.sourceTopic, blueIds, green.sourceTopic, greenIds));
            feed.start();
            try {
                JobID b = flink.submit(blue, null);
                flink.awaitRunning(b, Duration.ofSeconds(60));
                must(poll(Duration.ofSeconds(30), () -> !lines(out).isEmpty()), "blue's first output");
                String sp = flink.savepoint(b);
                TAP.start();
                JobID g = flink.submit(green, sp);
                long t0 = System.nanoTime();
                // Broken, blue may fail (and a fencing cascade end green)
                // before green has all its tasks running: watch from here.
                if (!broken)
                    flink.awaitRunning(g, Duration.ofSeconds(60));
                long blueMark = feed.next.get(blue.sourceTopic).get();
                long[] failedAfter = {-1};
                long watch = broken ? 30_000 : watchMs;
                boolean ended = poll(Duration.ofMillis(watch), () -> {
                    try {
                        if (flink.status(b).isGloballyTerminalState()) {
                            failedAfter[0] = (System.nanoTime() - t0) / 1_000_000;
                            return true;
                        }
                        return flink.status(g).isGloballyTerminalState();
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                JobStatus bs = flink.status(b), gs = flink.status(g);
                if (ended) {
                    // Let a cascade show itself before the green status is read.
                    poll(Duration.ofSeconds(2), () -> {
                        try {
                            return flink.status(g).isGloballyTerminalState();
                        } catch (Exception e) {
                            throw new IllegalStateException(e);
                        }
                    });
                    gs = flink.status(g);
                }
                String c = ended ? flink.cause(b) : "", log = TAP.stop();
                String fence = fencing(c);
                if (fence.isEmpty() && !fencing(log).isEmpty()) {
                    // The fenced task's close can throw again; then the task
                    // never reports its failure, the TaskExecutor shuts down
                    // and the job's cause is only that. The task's own
                    // failure is in the log.
                    fence = fencing(log) + "_in_task_log"
                            + (c.contains("TaskExecutor is shutting down") ? "+TaskExecutor_lost" : "");
                }
                if (ended) {
                    if (fence.isEmpty())
                        say("blue's cause: " + c.lines().filter(l -> !l.trim().startsWith("at "))
                                .limit(6).reduce("", (x, y) -> x + " | " + y));
                    boolean fenced = bs == JobStatus.FAILED && !fence.isEmpty();
                    return new Outcome(fenced, "blue_" + bs + "_" + failedAfter[0] + "ms_after_green_submit("
                            + (fence.isEmpty() ? "not_fenced" : fence) + "),green_" + gs);
                }
                // Both ran the whole watch: did both commit output meanwhile?
                feed.finish();
                Set<Long> ids = ids(lines(out));
                long fromBlue = ids.stream().filter(i -> i >= blueMark && i < greenIds).count();
                long fromGreen = ids.stream().filter(i -> i >= greenIds).count();
                boolean both = bs == JobStatus.RUNNING && gs == JobStatus.RUNNING && fromBlue > 0 && fromGreen > 0
                        && fence.isEmpty();
                return new Outcome(!both, "blue_" + bs + ",green_" + gs + "_for_" + watch / 1000 + "s"
                        + ",out_since_green_from_blue=" + fromBlue + ",from_green=" + fromGreen
                        + (fence.isEmpty() ? ",no_fencing_in_log" : ",fencing_in_log=" + fence));
            } finally {
                TAP.stop();
                feed.stop.set(true);
                feed.join(10_000);
            }
        }
    }

    // ---- 4. idleness ------------------------------------------------------

    /**
     * A window job whose source has gone idle is stopped with drain: the
     * drain must fire its last window. With withIdleness it does not.
     */
    Outcome idleness(String run, Cluster flink, boolean broken) throws Exception {
        Jobs.Spec blue = spec(Jobs.Kind.WINDOW, run, "blue", false);
        if (broken)
            blue.idleMs = IDLE_MS;
        kafka.createTopics(1, blue.sourceTopic, blue.outTopic);
        long t0 = base();
        Map<String, long[]> expected = new HashMap<>();
        AtomicLong id = new AtomicLong();
        try (KafkaProducer<String, String> p = kafka.producer()) {
            JobID b = flink.submit(blue, null);
            flink.awaitRunning(b, Duration.ofSeconds(60));
            windowRecords(p, blue.sourceTopic, t0, t0 + 5 * WINDOW_MS / 2, 100, id, expected);
            // The watermark reaches the middle of the last window: all the
            // others fire, which shows every record was read.
            must(poll(Duration.ofSeconds(30), () -> lines(blue.outTopic).size() >= 2 * KEYS),
                    "the windows before the last");
            // The source goes idle: no records for the idle timeout plus
            // the few watermark intervals its detection takes (FLINK-40503).
            Thread.sleep(IDLE_MS + 2000);
            flink.stop(b, true);
        }
        Map<String, List<String>> w = windows(lines(blue.outTopic));
        long missing = 0, partial = 0;
        for (String k : expected.keySet())
            if (!w.containsKey(k))
                missing++;
        for (List<String> l : w.values())
            for (String s : l)
                if (!full(s, expected))
                    partial++;
        String what = "missing_windows=" + missing + ",partial=" + partial + ",windows=" + expected.size()
                + (broken ? ",idle_ms=" + IDLE_MS : ",no_idleness");
        return new Outcome(broken ? missing > 0 : missing + partial > 0, what);
    }

    // ---- 5. drain at the suspend ---------------------------------------------

    /**
     * Blue gets ts &lt; T, green ts &gt;= T, T in the middle of a window.
     * Blue, having read everything, is stopped with a savepoint, drained
     * (broken) or not (kept), as the operator's suspend does; green starts
     * from that savepoint (the hand-over's uids: state shared). Every window
     * must come out once and whole, as the uninterrupted job writes it.
     */
    Outcome drain(String run, Cluster flink, boolean broken) throws Exception {
        Jobs.Spec blue = spec(Jobs.Kind.WINDOW, run, "blue", true);
        Jobs.Spec green = spec(Jobs.Kind.WINDOW, run, "green", true);
        kafka.createTopics(1, blue.sourceTopic, green.sourceTopic, blue.outTopic, green.outTopic);
        long t0 = base(), cut = t0 + 5 * WINDOW_MS + WINDOW_MS / 2, step = 100;
        Map<String, long[]> expected = new HashMap<>();
        AtomicLong id = new AtomicLong();
        try (KafkaProducer<String, String> p = kafka.producer()) {
            JobID b = flink.submit(blue, null);
            flink.awaitRunning(b, Duration.ofSeconds(60));
            windowRecords(p, blue.sourceTopic, t0, cut, step, id, expected);
            // Everything before T read and checkpointed (the proxy's drain
            // check before CLEAR_TO_TEARDOWN), then the suspend's stop.
            kafka.awaitDrained(blue.group, List.of(blue.sourceTopic), Duration.ofSeconds(60));
            String sp = flink.stop(b, broken);
            JobID g = flink.submit(green, sp);
            flink.awaitRunning(g, Duration.ofSeconds(60));
            windowRecords(p, green.sourceTopic, cut, cut + 2 * WINDOW_MS, step, id, expected);
            kafka.awaitDrained(green.group, List.of(green.sourceTopic), Duration.ofSeconds(60));
            flink.stop(g, true); // the end of the data: every window fires
        }
        Map<String, Integer> seen = new HashMap<>();
        long partial = 0, dup = 0, missing = 0, straddling = 0;
        for (String topic : List.of(blue.outTopic, green.outTopic))
            for (var e : windows(lines(topic)).entrySet())
                for (String l : e.getValue()) {
                    seen.merge(e.getKey(), 1, Integer::sum);
                    if (!full(l, expected))
                        partial++;
                }
        for (var e : seen.entrySet())
            dup += e.getValue() - 1;
        for (String k : expected.keySet()) {
            if (!seen.containsKey(k))
                missing++;
            long start = Long.parseLong(k.split(",")[1]);
            if (start < cut && start + WINDOW_MS > cut)
                straddling++;
        }
        long wrong = partial + dup + missing;
        String what = "wrong=" + wrong + "(partial=" + partial + ",duplicated=" + dup + ",missing=" + missing
                + "),windows=" + expected.size() + ",straddling_T=" + straddling + ",drain=" + broken;
        return new Outcome(wrong > 0, what);
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i < argv.length; i += 2) {
            if (!argv[i].startsWith("--") || i + 1 >= argv.length)
                throw new IllegalArgumentException("usage: Controls --bootstrap HOST:PORT --work DIR [--only "
                        + String.join("|", RULES) + "]");
            a.put(argv[i].substring(2), argv[i + 1]);
        }
        if (a.get("bootstrap") == null || a.get("work") == null)
            throw new IllegalArgumentException("--bootstrap and --work are required");
        List<String> rules = a.containsKey("only") ? List.of(a.get("only")) : RULES;
        for (String r : rules)
            if (!RULES.contains(r))
                throw new IllegalArgumentException("--only is one of " + RULES + ", not " + r);
        System.setErr(new PrintStream(TAP, true, StandardCharsets.UTF_8));
        Controls c = new Controls(a.get("bootstrap"), Path.of(a.get("work")));
        Files.createDirectories(c.work);
        long t0 = System.nanoTime();
        int bad = 0;
        try {
            for (String r : rules)
                if (!c.control(r))
                    bad++;
        } finally {
            c.kafka.close();
        }
        say("controls: " + (rules.size() - bad) + "/" + rules.size() + " ok in "
                + (System.nanoTime() - t0) / 1_000_000 + " ms");
        System.exit(bad == 0 ? 0 : 1);
    }
}
