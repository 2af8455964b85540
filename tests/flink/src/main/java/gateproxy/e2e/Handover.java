package gateproxy.e2e;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

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
 *            [--drain-check off] [--instances N]
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
 * {@code --instances N} (N >= 2, exact path: {@code path=exact-N}) runs the
 * proxy as N instances in one consumer group ({@code gate.membership=group});
 * each hop then also asserts that every instance owned partitions when T
 * was agreed, that each logged {@code cutoff agreed} with the map's T (none
 * chose T alone), and that an instance found every partition closed in its
 * committed checkpoint under T; the SIGKILLs go to the instances in turn.
 * Prints one more line per hop:
 * {@code e2e-instances: path=exact-N hop=H T=T agreed_by=i0,i1 owned_at_T=i0:3,i1:3 clear_found_by=i1}
 */
public final class Handover {
    static final int PARTITIONS = 2, KEYS = 8, HOPS = 2, KILLS = 2;
    static final long TICK_MS = 50, BOUND_MS = 500, WINDOW_MS = 2000, DELAY_MS = 0;

    final Map<String, String> args;
    final boolean exact;
    final int instances;
    final String bootstrap, run, pathName;
    final Path work;
    final Kafka kafka;
    final Map<Jobs.Kind, String> source = new EnumMap<>(Jobs.Kind.class);

    Handover(Map<String, String> args) throws Exception {
        this.args = args;
        String path = need("path");
        if (!path.equals("exact") && !path.equals("operator"))
            throw new IllegalArgumentException("--path is exact or operator, not " + path);
        exact = path.equals("exact");
        instances = Integer.parseInt(args.getOrDefault("instances", "1"));
        if (instances < 1 || instances > 1 && !exact)
            throw new IllegalArgumentException("--instances N (N >= 2) is for the exact path");
        pathName = instances > 1 ? path + "-" + instances : path;
        bootstrap = need("bootstrap");
        run = "e2e-" + pathName + "-" + Long.toString(System.currentTimeMillis() % 100_000_000L, 36);
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
        List<String> common = List.of(
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
                "off".equals(args.get("drain-check")) ? "" : "gate.drain.group.green=" + run + "-green");
        List<Proxy> proxies = new ArrayList<>();
        for (int i = 0; i < instances; i++) {
            List<String> lines = new ArrayList<>(common);
            String http = null, file = instances == 1 ? "proxy" : "proxy-" + name(i);
            if (instances == 1) {
                lines.add("kafka.transaction.timeout.ms=10000");
            } else {
                // Members of the pipeline's group (tests/integration/lib.sh,
                // membership_lines): a killed member's partitions move on
                // after the broker's minimum session timeout, its open
                // transaction aborted before that; /metrics tells what each
                // instance owns.
                http = "127.0.0.1:" + freePort();
                lines.addAll(List.of("gate.membership=group", "gate.instance=" + name(i),
                        "kafka.session.timeout.ms=6000", "kafka.transaction.timeout.ms=5000",
                        "http.listen=" + http));
            }
            lines.addAll(List.of(control, ""));
            Path conf = work.resolve(file + ".conf");
            Files.writeString(conf, String.join("\n", lines));
            proxies.add(new Proxy(need("bin"), conf, work.resolve(file + ".log"), where, http));
        }
        // The first instance's CLI reads and writes the map they all follow.
        Proxy proxy = proxies.get(0);
        kafka.createTopics(1, run + ".dlq");
        if (exact)
            proxy.cli("init", "--force"); // the operator path's map is made by its harness
        for (Proxy p : proxies)
            p.start();
        Proxy.await(proxies, "the proxy's first status", Duration.ofSeconds(60),
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
                long[] mark = new long[instances];
                if (instances > 1) {
                    // The promises of this hop are to come from every
                    // instance: the group settles first.
                    awaitSpread(proxies, hop);
                    for (int i = 0; i < instances; i++)
                        mark[i] = proxies.get(i).logSize();
                }
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
                Map<String, String> m = Proxy.await(proxies, "a cutoff T", Duration.ofSeconds(60),
                        s -> "WATERMARK_SET".equals(s.get("watermark-stage")));
                long t = Long.parseLong(m.get("watermark-toggle-value"));
                cutoffs.add(t);
                String inst = "";
                if (instances > 1) {
                    String owned = ownedAtT(proxies, hop);
                    inst = "hop=" + hop + " T=" + t + " agreed_by=" + agreedBy(proxies, hop, t, mark)
                            + " owned_at_T=" + owned;
                }
                say("hop " + hop + ": T=" + t + ", the proxy splits; " + KILLS + " SIGKILLs follow");
                for (int i = 0; i < KILLS; i++) {
                    Thread.sleep(1500);
                    proxies.get(i % instances).killAndRestart();
                    say("hop " + hop + ": " + (instances == 1 ? "proxy" : "instance " + name(i % instances))
                            + " SIGKILLed and restarted");
                }
                m = Proxy.await(proxies, "CLEAR_TO_TEARDOWN", Duration.ofSeconds(180),
                        s -> "CLEAR_TO_TEARDOWN".equals(s.get("stage")));
                if (Long.parseLong(m.get("watermark-toggle-value")) != t)
                    throw new IllegalStateException("T moved across the restarts: " + m);
                say("hop " + hop + ": CLEAR_TO_TEARDOWN");
                if (instances > 1) {
                    inst += " clear_found_by=" + clearFoundBy(proxies, hop, t, mark);
                    grouped.add(inst);
                    say("hop " + hop + ": " + inst);
                }
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
            if (instances > 1)
                counted = leaveToOne(proxies);
        } finally {
            gen.stop.set(true);
            Exception stop = null;
            for (Proxy p : proxies) {
                try {
                    if (p.alive())
                        p.stop();
                } catch (Exception e) {
                    if (stop == null)
                        stop = e;
                }
            }
            if (stop != null)
                throw stop;
        }
        return verify(proxy, cutoffs, timings);
    }

    /** The map as the proxy's counts are final in it: with several instances, read by leaveToOne. */
    Map<String, String> counted;
    /** Per hop with several instances: what each did (e2e-instances lines). */
    final List<String> grouped = new ArrayList<>();

    static String name(int i) { return "i" + i; }

    static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
            return s.getLocalPort();
        }
    }

    int sourcePartitions() { return PARTITIONS * source.size(); }

    /** Each instance's gate_proxy_partitions_assigned (-1: /metrics did not answer). */
    static long[] owned(List<Proxy> proxies) throws Exception {
        long[] o = new long[proxies.size()];
        for (int i = 0; i < o.length; i++)
            o[i] = proxies.get(i).metric("gate_proxy_partitions_assigned");
        return o;
    }

    static void alive(List<Proxy> proxies, String what) {
        for (Proxy p : proxies)
            if (!p.alive())
                throw new IllegalStateException("gate-proxy died while waiting for " + what
                        + " (log: " + p.logName() + ")");
    }

    /** Waits until every instance owns partitions and together they own them all. */
    void awaitSpread(List<Proxy> proxies, int hop) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            long[] o = owned(proxies);
            long sum = 0;
            boolean each = true;
            for (long n : o) {
                sum += n;
                each &= n > 0;
            }
            if (each && sum == sourcePartitions())
                return;
            alive(proxies, "the group to settle");
            if (System.nanoTime() > end)
                throw new IllegalStateException("hop " + hop + ": the group did not settle in 90 s: partitions owned "
                        + Arrays.toString(o) + " of " + sourcePartitions());
            Thread.sleep(200);
        }
    }

    /** With T in the map: every instance owns partitions. Returns {@code i0:3,i1:3}. */
    String ownedAtT(List<Proxy> proxies, int hop) throws Exception {
        long[] o = owned(proxies);
        List<String> l = new ArrayList<>();
        for (int i = 0; i < o.length; i++) {
            if (o[i] <= 0)
                throw new IllegalStateException("hop " + hop + ": instance " + name(i)
                        + " owned no partition when T was in the map: " + Arrays.toString(o));
            l.add(name(i) + ":" + o[i]);
        }
        return String.join(",", l);
    }

    static final Pattern AGREED = Pattern.compile("cutoff agreed: T=(-?\\d+) ");

    /**
     * T came from the group's agreement: each instance logs {@code cutoff
     * agreed: T=...} (its agreement thread found T in the committed promises
     * of every partition), each with the map's T, and none logs {@code cutoff
     * chosen} (T taken from its own watermark). Waits for every instance's
     * line; returns their names.
     */
    String agreedBy(List<Proxy> proxies, int hop, long t, long[] mark) throws Exception {
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (true) {
            List<String> missing = new ArrayList<>();
            for (int i = 0; i < proxies.size(); i++) {
                String log = proxies.get(i).logSince(mark[i]);
                if (log.contains("cutoff chosen"))
                    throw new IllegalStateException("hop " + hop + ": instance " + name(i) + " chose T alone");
                TreeSet<Long> ts = new TreeSet<>();
                for (Matcher x = AGREED.matcher(log); x.find();)
                    ts.add(Long.parseLong(x.group(1)));
                if (ts.isEmpty())
                    missing.add(name(i));
                else if (ts.size() != 1 || ts.first() != t)
                    throw new IllegalStateException("hop " + hop + ": instance " + name(i) + " agreed on T=" + ts
                            + ", the map shows T=" + t);
            }
            if (missing.isEmpty()) {
                List<String> all = new ArrayList<>();
                for (int i = 0; i < proxies.size(); i++)
                    all.add(name(i));
                return String.join(",", all);
            }
            alive(proxies, "every instance's agreed T");
            if (System.nanoTime() > end)
                throw new IllegalStateException("hop " + hop + ": no \"cutoff agreed\" from " + missing
                        + " 60 s after T=" + t + " was in the map");
            Thread.sleep(200);
        }
    }

    /**
     * CLEAR_TO_TEARDOWN came from the committed checkpoints: an instance
     * found every source partition closed under T, and none closed because
     * the map said so before its own partitions had. Returns who found it.
     */
    String clearFoundBy(List<Proxy> proxies, int hop, long t, long[] mark) throws Exception {
        String found = "every one of the " + sourcePartitions()
                + " source partitions closed it in its committed checkpoint under T=" + t;
        List<String> by = new ArrayList<>();
        for (int i = 0; i < proxies.size(); i++) {
            String log = proxies.get(i).logSince(mark[i]);
            if (log.contains("before the proxy closed the old side"))
                throw new IllegalStateException("hop " + hop + ": instance " + name(i)
                        + " closed the old side by the map alone, not by every partition's checkpoint");
            if (log.contains(found))
                by.add(name(i));
        }
        if (by.isEmpty())
            throw new IllegalStateException("hop " + hop + ": CLEAR_TO_TEARDOWN, but no instance logged \""
                    + found + "\"");
        return String.join(",", by);
    }

    /**
     * The map's counts are those of the partitions its last writer owns: all
     * instances but the first leave the group (SIGTERM, exit 0), and once
     * the first owns every partition and has written its status twice more,
     * the map's counts are the pipeline's. Returns the map then.
     */
    Map<String, String> leaveToOne(List<Proxy> proxies) throws Exception {
        for (int i = proxies.size() - 1; i > 0; i--)
            proxies.get(i).stop();
        Proxy first = proxies.get(0);
        long end = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long o;
        while ((o = first.metric("gate_proxy_partitions_assigned")) != sourcePartitions()) {
            alive(List.of(first), "the last instance to own every partition");
            if (System.nanoTime() > end)
                throw new IllegalStateException(name(0) + " owns " + o + " of " + sourcePartitions()
                        + " partitions 60 s after the others left");
            Thread.sleep(200);
        }
        Map<String, String> m = first.status();
        for (int n = 0; n < 2; n++) {
            String hb = m.get("gate-proxy.heartbeat");
            m = first.await("a status written after the leave", Duration.ofSeconds(30),
                    s -> !hb.equals(s.get("gate-proxy.heartbeat")));
        }
        say("the other instances left cleanly; " + name(0) + " owns all " + sourcePartitions()
                + " partitions, so the map's counts are the pipeline's");
        return m;
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
        Map<String, String> st = counted != null ? counted : proxy.status();
        String counts = "colours: blue=" + blue + " green=" + green + " proxy_blue="
                + st.get("gate-proxy.count.blue") + " proxy_green=" + st.get("gate-proxy.count.green");
        say(counts);
        if (Long.parseLong(st.getOrDefault("gate-proxy.count.blue", "-1")) != b0
                || Long.parseLong(st.getOrDefault("gate-proxy.count.green", "-1")) != g0)
            bad++;

        String path = pathName;
        String ts = cutoffs.get(0) + "," + cutoffs.get(1);
        for (Jobs.Kind k : Jobs.Kind.values()) {
            List<String> want = values(kafka.readAll(source.get(k) + ".reference"));
            List<String> got = values(kafka.readAll(source.get(k) + ".out"));
            Check c = Check.compare(k, want, got);
            long records = kafka.readAll(source.get(k)).size();
            String line = "e2e: path=" + path + " job=" + k.tag() + " hops=" + HOPS
                    + (instances > 1 ? " instances=" + instances : "") + " records=" + records + " " + c + " T=" + ts;
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
        for (String g : grouped)
            System.out.println("e2e-instances: path=" + path + " " + g);
        if (instances > 1 && grouped.size() != HOPS)
            bad++;
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
