package gateproxy.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import org.apache.flink.api.common.JobID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

/**
 * Real Flink jobs through blue -> green -> blue behind a real gate-proxy, and
 * the same jobs run once uninterrupted over the same source records.
 *
 * <pre>
 *   Handover --path exact|operator --bootstrap HOST:PORT --bin gate-proxy --work DIR
 *            [--k8s NAME --namespace NS --kubeconfig PROXY_KC --kubectl CMD]
 *            [--drain-check off]
 * </pre>
 *
 * One proxy moves three job pairs at once (stateless, windowed, running
 * total), each on a source topic of its own; during every split the proxy is
 * SIGKILLed and restarted, one source partition is idle, and records arrive
 * out of order within the bound. Prints one line per job:
 * {@code e2e: path=P job=J hops=2 records=N outputs=M missing=0 duplicated=0 partial=0 extra=0 T=T1,T2}
 * and exits 0 only if each job came out as the path promises (docs/FLINK.md).
 * {@code --drain-check off} leaves the proxy's gate.drain.group.* unset, to
 * show what the drain check prevents; the run is then expected to fail.
 */
public final class Handover {
    static final int PARTITIONS = 2, KEYS = 8, HOPS = 2, KILLS = 2;
    static final long TICK_MS = 50, BOUND_MS = 500, WINDOW_MS = 2000, DELAY_MS = 0;

    final Map<String, String> args;
    final boolean exact;
    final String bootstrap, run;
    final Path work;
    final Kafka kafka;
    final Map<Jobs.Kind, String> source = new EnumMap<>(Jobs.Kind.class);

    Handover(Map<String, String> args) throws Exception {
        this.args = args;
        String path = need("path");
        if (!path.equals("exact") && !path.equals("operator"))
            throw new IllegalArgumentException("--path is exact or operator, not " + path);
        exact = path.equals("exact");
        bootstrap = need("bootstrap");
        run = "e2e-" + path + "-" + Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
        work = Path.of(need("work"));
        kafka = new Kafka(bootstrap);
        for (Jobs.Kind k : Jobs.Kind.values())
            source.put(k, run + "-" + k.tag());
    }

    String need(String k) {
        String v = args.get(k);
        if (v == null)
            throw new IllegalArgumentException("--" + k + " is required");
        return v;
    }

    static void say(String s) {
        System.out.printf("[%tT] %s%n", System.currentTimeMillis(), s);
        System.out.flush();
    }

    Jobs.Spec spec(Jobs.Kind k, String colour) {
        String src = colour.equals("ref") ? source.get(k) : source.get(k) + "." + colour;
        String out = source.get(k) + (colour.equals("ref") ? ".reference" : ".out");
        // The exact path carries every operator's state from OLD's final
        // savepoint; the operator path takes no window state (a restored
        // window would be fired half-full) and carries the running total.
        boolean shared = exact || k == Jobs.Kind.RUNNING;
        Jobs.Spec s = Jobs.Spec.of(k, bootstrap, run, colour, src, out, shared);
        s.windowMs = WINDOW_MS;
        s.boundMs = BOUND_MS;
        s.parallelism = PARTITIONS;
        return s;
    }

    int run() throws Exception {
        Files.createDirectories(work);
        List<String> topics = new ArrayList<>();
        for (String s : source.values())
            topics.addAll(List.of(s, s + ".blue", s + ".green", s + ".out", s + ".reference"));
        kafka.createTopics(PARTITIONS, topics.toArray(new String[0]));

        List<String> where;
        String control;
        if (exact) {
            where = List.of("--control", work.resolve("cm.json").toString());
            control = "control.file=" + work.resolve("cm.json");
        } else {
            where = List.of("--k8s", need("k8s"), "--namespace", need("namespace"),
                    "--kubeconfig", need("kubeconfig"));
            control = "control.k8s.configmap=" + need("k8s") + "\ncontrol.k8s.namespace="
                    + need("namespace") + "\ncontrol.k8s.kubeconfig=" + need("kubeconfig");
        }
        String group = run + "-proxy";
        Path conf = work.resolve("proxy.conf");
        Files.writeString(conf, String.join("\n",
                "kafka.bootstrap.servers=" + bootstrap,
                "gate.pipeline=" + run,
                "gate.group.id=" + group,
                "gate.source.topics=" + String.join(",", source.values()),
                "gate.event-time=json:ts",
                "gate.topics.create=false",
                "gate.dlq.topic=" + run + ".dlq",
                "gate.watermark.out-of-orderness.ms=" + BOUND_MS,
                "gate.watermark.idle.ms=2000",
                "gate.cutoff.align.ms=" + WINDOW_MS,
                "off".equals(args.get("drain-check")) ? "" : "gate.drain.group.blue=" + run + "-blue",
                "off".equals(args.get("drain-check")) ? "" : "gate.drain.group.green=" + run + "-green",
                "kafka.transaction.timeout.ms=10000",
                control, ""));
        kafka.createTopics(1, run + ".dlq");
        Proxy proxy = new Proxy(need("bin"), conf, work.resolve("proxy.log"), where);
        if (exact)
            proxy.cli("init", "--force"); // the operator path's map is made by its harness
        proxy.start();
        proxy.await("the proxy's first status", Duration.ofSeconds(60),
                m -> m.containsKey("gate-proxy.heartbeat"));

        Generator gen = new Generator(kafka, source.values(), PARTITIONS, KEYS, TICK_MS, BOUND_MS);
        Map<Jobs.Kind, JobID> ref = new EnumMap<>(Jobs.Kind.class), live = new EnumMap<>(Jobs.Kind.class);
        List<Long> cutoffs = new ArrayList<>();
        List<String> timings = new ArrayList<>();
        try (Cluster flink = new Cluster(work.resolve("flink"), 4 * PARTITIONS * 3)) {
            for (Jobs.Kind k : Jobs.Kind.values()) {
                ref.put(k, flink.submit(spec(k, "ref"), null));
                live.put(k, flink.submit(spec(k, "blue"), null));
            }
            for (JobID j : ref.values())
                flink.awaitRunning(j, Duration.ofSeconds(120));
            for (JobID j : live.values())
                flink.awaitRunning(j, Duration.ofSeconds(120));
            gen.start();
            say("reference and blue jobs running; records flowing into " + source.values());
            Thread.sleep(4000);

            String old = "blue";
            for (int hop = 1; hop <= HOPS; hop++) {
                String neu = old.equals("blue") ? "green" : "blue";
                gen.idle.set(true);
                say("hop " + hop + ": " + old + " -> " + neu + " (partition 1 idle)");
                Map<Jobs.Kind, JobID> next = new EnumMap<>(Jobs.Kind.class);
                // NEW's era starts where its topic ends now: the proxy writes
                // nothing to it before T.
                Map<Jobs.Kind, Map<TopicPartition, Long>> era = new EnumMap<>(Jobs.Kind.class);
                for (Jobs.Kind k : Jobs.Kind.values())
                    era.put(k, kafka.ends(source.get(k) + "." + neu));
                if (exact) {
                    proxy.cli("cutover", "--to", neu, "--delay-ms", Long.toString(DELAY_MS));
                } else {
                    // FLIP-504's sequence: savepoint OLD, start NEW from it,
                    // rewrite the map, TRANSITIONING once NEW runs.
                    for (Jobs.Kind k : Jobs.Kind.values()) {
                        startsAtEra(k, neu, era.get(k));
                        next.put(k, flink.submit(spec(k, neu), flink.savepoint(live.get(k))));
                    }
                    kubectlRewrite(neu.toUpperCase(), DELAY_MS);
                    for (JobID j : next.values())
                        flink.awaitRunning(j, Duration.ofSeconds(120));
                    kubectlPatch("{\"data\":{\"stage\":\"TRANSITIONING\"}}");
                }
                Map<String, String> m = proxy.await("a cutoff T", Duration.ofSeconds(60),
                        s -> "WATERMARK_SET".equals(s.get("watermark-stage")));
                long t = Long.parseLong(m.get("watermark-toggle-value"));
                cutoffs.add(t);
                say("hop " + hop + ": T=" + t + ", the proxy splits; " + KILLS + " SIGKILLs follow");
                for (int i = 0; i < KILLS; i++) {
                    Thread.sleep(1500);
                    proxy.killAndRestart();
                    say("hop " + hop + ": proxy SIGKILLed and restarted");
                }
                m = proxy.await("CLEAR_TO_TEARDOWN", Duration.ofSeconds(180),
                        s -> "CLEAR_TO_TEARDOWN".equals(s.get("stage")));
                if (Long.parseLong(m.get("watermark-toggle-value")) != t)
                    throw new IllegalStateException("T moved across the restarts: " + m);
                say("hop " + hop + ": CLEAR_TO_TEARDOWN");
                long t0 = System.nanoTime();
                if (exact) {
                    // Stop OLD with a savepoint (no drain: its open windows go
                    // into the savepoint whole) and start NEW from it while
                    // NEW's records wait in its colour topic.
                    Map<Jobs.Kind, String> sp = new EnumMap<>(Jobs.Kind.class);
                    for (Jobs.Kind k : Jobs.Kind.values())
                        sp.put(k, flink.stop(live.get(k), false));
                    Map<TopicPartition, Long> backlog = new HashMap<>();
                    for (Jobs.Kind k : Jobs.Kind.values()) {
                        startsAtEra(k, neu, era.get(k));
                        next.put(k, flink.submit(spec(k, neu), sp.get(k)));
                    }
                    for (JobID j : next.values())
                        flink.awaitRunning(j, Duration.ofSeconds(120));
                    long running = (System.nanoTime() - t0) / 1_000_000;
                    for (Jobs.Kind k : Jobs.Kind.values())
                        backlog.putAll(kafka.ends(source.get(k) + "." + neu));
                    proxy.cli("finish");
                    for (Jobs.Kind k : Jobs.Kind.values())
                        awaitCommitted(spec(k, neu).group, backlog, source.get(k) + "." + neu);
                    timings.add("hop=" + hop + " new_running_after_ms=" + running
                            + " caught_up_after_ms=" + (System.nanoTime() - t0) / 1_000_000);
                } else {
                    // The operator drains OLD at teardown
                    // (kubernetes.operator.job.drain-on-savepoint-deletion).
                    for (Jobs.Kind k : Jobs.Kind.values())
                        flink.stop(live.get(k), true);
                    kubectlPatch("{\"data\":{\"stage\":\"RUNNING\"}}");
                    timings.add("hop=" + hop + " old_stopped_after_ms=" + (System.nanoTime() - t0) / 1_000_000);
                }
                live = next;
                gen.idle.set(false);
                say("hop " + hop + ": " + neu + " owns the traffic; " + timings.get(timings.size() - 1));
                old = neu;
                Thread.sleep(4000);
            }

            gen.stop.set(true);
            gen.join();
            if (gen.failed != null)
                throw gen.failed;
            say("generator stopped after " + gen.sent.get() + " records per source topic");
            awaitProxyConsumed(group, proxy);
            for (Jobs.Kind k : Jobs.Kind.values()) {
                kafka.awaitDrained(spec(k, old).group, List.of(source.get(k) + "." + old), Duration.ofSeconds(120));
                kafka.awaitDrained(spec(k, "ref").group, List.of(source.get(k)), Duration.ofSeconds(120));
                flink.stop(live.get(k), true);
                flink.stop(ref.get(k), true);
            }
            say("last jobs drained and stopped");
        } finally {
            gen.stop.set(true);
            if (proxy.alive())
                proxy.stop();
        }
        return verify(proxy, cutoffs, timings);
    }

    /**
     * A new job of a colour must begin exactly at the first record of its
     * era, whatever the previous job of that colour committed: the proxy's
     * drain check held CLEAR_TO_TEARDOWN until that job's group had consumed
     * everything, so its offsets point at the era.
     */
    void startsAtEra(Jobs.Kind k, String colour, Map<TopicPartition, Long> era) throws Exception {
        long off = kafka.offEra(spec(k, colour).group, source.get(k) + "." + colour, era);
        if (off != 0)
            say("the " + colour + " " + k.tag() + " job starts " + Math.abs(off) + " records "
                    + (off > 0 ? "before" : "after") + " the first record of its era " + era);
        else
            eraExact++;
        eraChecks++;
    }

    int eraChecks, eraExact;

    /** Waits until the proxy has committed every source record; then its status counts are final. */
    void awaitProxyConsumed(String group, Proxy proxy) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Map<TopicPartition, Long> want = new HashMap<>();
        for (String s : source.values())
            want.putAll(kafka.ends(s));
        while (true) {
            var com = kafka.committed(group);
            boolean all = true;
            for (var e : want.entrySet())
                all &= com.containsKey(e.getKey()) && com.get(e.getKey()).offset() >= e.getValue();
            if (all)
                return;
            if (System.nanoTime() > end)
                throw new IllegalStateException("the proxy has not consumed " + want + "; committed " + com);
            Thread.sleep(200);
        }
    }

    /** Waits until GROUP's committed offsets on TOPIC reach BACKLOG (one short of it, a marker, counts). */
    void awaitCommitted(String group, Map<TopicPartition, Long> backlog, String topic) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        while (true) {
            var com = kafka.committed(group);
            boolean all = true;
            for (var e : backlog.entrySet())
                if (e.getKey().topic().equals(topic))
                    all &= e.getValue() == 0
                            || com.containsKey(e.getKey()) && com.get(e.getKey()).offset() >= e.getValue() - 1;
            if (all)
                return;
            if (System.nanoTime() > end)
                throw new IllegalStateException(group + " did not catch up with " + backlog + ": " + com);
            Thread.sleep(100);
        }
    }

    /**
     * As the operator when it starts deploying a child: the whole map
     * rewritten. The proxy writes its status keys meanwhile, so a replace
     * can meet a 409 Conflict; the operator then reads and writes again,
     * and so does this.
     */
    void kubectlRewrite(String active, long delay) throws Exception {
        String kc = need("kubectl") + " -n " + need("namespace");
        String cmd = kc + " create configmap " + need("k8s") + " --from-literal=active-deployment-type=" + active
                + " --from-literal=stage=INITIALIZING --from-literal=is-first-deployment=false"
                + " --from-literal=deployment-deletion-delay-ms=" + delay
                + " --dry-run=client -o yaml | " + kc + " replace -f -";
        for (int attempt = 1;; attempt++) {
            try {
                sh(cmd);
                return;
            } catch (IllegalStateException e) {
                if (attempt >= 20 || !e.getMessage().contains("Conflict"))
                    throw e;
                say("the map's replace met a 409 Conflict (the proxy wrote meanwhile); again");
                Thread.sleep(100);
            }
        }
    }

    void kubectlPatch(String json) throws Exception {
        sh(need("kubectl") + " -n " + need("namespace") + " patch configmap " + need("k8s")
                + " --type merge -p '" + json + "'");
    }

    static void sh(String cmd) throws Exception {
        Process p = new ProcessBuilder("bash", "-c", cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (p.waitFor() != 0)
            throw new IllegalStateException(cmd + " failed: " + out);
    }

    /** The checks; returns the exit code. */
    int verify(Proxy proxy, List<Long> cutoffs, List<String> timings) throws Exception {
        int bad = 0;
        // The colour topics: each source record exactly once, blue for
        // ts < T1 or ts >= T2, green between; counts as the proxy reports.
        long blue = 0, green = 0;
        for (Jobs.Kind k : Jobs.Kind.values()) {
            String s = source.get(k);
            Map<String, Integer> seen = new HashMap<>();
            long misrouted = 0;
            for (String colour : List.of("blue", "green"))
                for (ConsumerRecord<String, String> r : kafka.readAll(s + "." + colour)) {
                    Jobs.Rec rec = Jobs.Rec.parse(r.value());
                    boolean wantBlue = rec.ts < cutoffs.get(0) || rec.ts >= cutoffs.get(1);
                    if (wantBlue != colour.equals("blue"))
                        misrouted++;
                    seen.merge(r.value(), 1, Integer::sum);
                    if (colour.equals("blue")) blue++; else green++;
                }
            List<ConsumerRecord<String, String>> src = kafka.readAll(s);
            long lost = 0, dup = 0;
            for (ConsumerRecord<String, String> r : src) {
                Integer n = seen.get(r.value());
                if (n == null) lost++; else dup += n - 1;
            }
            String line = "colours: job=" + k.tag() + " records=" + src.size() + " lost=" + lost
                    + " duplicated=" + dup + " misrouted=" + misrouted;
            say(line);
            if (lost + dup + misrouted > 0)
                bad++;
        }
        long b0 = blue, g0 = green;
        Map<String, String> st = proxy.status();
        String counts = "colours: blue=" + blue + " green=" + green + " proxy_blue="
                + st.get("gate-proxy.count.blue") + " proxy_green=" + st.get("gate-proxy.count.green");
        say(counts);
        if (Long.parseLong(st.getOrDefault("gate-proxy.count.blue", "-1")) != b0
                || Long.parseLong(st.getOrDefault("gate-proxy.count.green", "-1")) != g0)
            bad++;

        String path = exact ? "exact" : "operator";
        String ts = cutoffs.get(0) + "," + cutoffs.get(1);
        for (Jobs.Kind k : Jobs.Kind.values()) {
            List<String> want = values(kafka.readAll(source.get(k) + ".reference"));
            List<String> got = values(kafka.readAll(source.get(k) + ".out"));
            Check c = Check.compare(k, want, got);
            long records = kafka.readAll(source.get(k)).size();
            String line = "e2e: path=" + path + " job=" + k.tag() + " hops=" + HOPS + " records=" + records
                    + " " + c + " T=" + ts;
            boolean ok;
            if (exact || k != Jobs.Kind.RUNNING) {
                ok = c.exact() && !want.isEmpty();
            } else {
                // State that crosses T: NEW restored totals from a savepoint
                // taken before T, so it misses what OLD counted after it.
                ok = c.missing == 0 && c.duplicated == 0 && c.extra == 0 && c.partial > 0
                        && c.onlyShortBySavepointGaps(HOPS);
                line += " short_totals=" + c.partial + " max_shortfall=" + c.maxDeficit()
                        + " (expected on this path: state crossing T misses the records between the savepoint and T)";
            }
            System.out.println(line);
            if (!ok) {
                bad++;
                say("FAIL: job " + k.tag() + " on the " + path + " path");
            }
        }
        for (String t : timings)
            System.out.println("e2e-timing: path=" + path + " " + t);
        System.out.println("e2e-starts: path=" + path + " new jobs started exactly at the first record of their era: "
                + eraExact + " of " + eraChecks);
        if (eraExact != eraChecks || eraChecks != HOPS * Jobs.Kind.values().length)
            bad++;
        return bad == 0 ? 0 : 1;
    }

    static List<String> values(List<ConsumerRecord<String, String>> l) {
        List<String> out = new ArrayList<>();
        for (ConsumerRecord<String, String> r : l)
            out.add(r.value());
        return out;
    }

    /** {@code --key value} pairs, as the harnesses take them. */
    static Map<String, String> options(String[] argv) {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--"))
                throw new IllegalArgumentException("unexpected argument " + argv[i]);
            a.put(argv[i].substring(2), argv[i + 1]);
        }
        return a;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = options(argv);
        int rc = new Handover(a).run();
        System.exit(rc);
    }
}
