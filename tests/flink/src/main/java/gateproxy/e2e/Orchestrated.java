package gateproxy.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.function.Predicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.apache.flink.api.common.JobID;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * The orchestrated exact path: {@code gate-proxy handover} hands real Flink
 * jobs blue -> green -> blue through FlinkDeployments on the real
 * kube-apiserver fixture, with {@link Operator}, a STAND-IN for the Flink
 * Kubernetes Operator, running the jobs the resources describe in this JVM's
 * MiniCluster.
 *
 * <pre>
 *   Orchestrated --bootstrap HOST:PORT --bin gate-proxy --work DIR --run NAME
 *                --namespace NS --kubeconfig PROXY_KC
 *                --api URL --token ADMIN_TOKEN --ca CA_FILE [--proxy-kills N]
 *                [--faults "JOB-COLOUR=FAULT[,FAULT...][;...]"]
 *                [--command-kills 0|1] [--checkpoint-request yes|no]
 * </pre>
 *
 * One gate-proxy per job kind (stateless, windowed, running total), each on a
 * source topic {@code NAME-<kind>} of its own and steered by a ConfigMap of
 * the same name; the blue jobs are FlinkDeployments {@code NAME-<kind>-blue}
 * the stand-in deploys. Each hop creates the new colour's FlinkDeployments
 * suspended and runs the three hand-overs at once; each command is SIGKILLed
 * once it reaches each of its steps clear, suspend, start and finish (the
 * map's {@code gate-proxy.handover.step}), and run again with the same
 * arguments until it exits 0. Each proxy is SIGKILLed and restarted once its
 * cutoff is known ({@code --proxy-kills}, default 1). {@code --faults} sets
 * the stand-in's faults ({@link Operator}) on the FlinkDeployments named
 * {@code NAME-JOB-COLOUR} (each colour's name is used twice: blue in both
 * hops). Then, as in {@link Handover}'s exact path, what the jobs
 * wrote must equal what the same jobs wrote uninterrupted, for all three.
 * Prints {@code e2e: path=handover job=K ...}, {@code e2e-handover:} and
 * {@code e2e-timing:} lines, and an {@code e2e-hop:} line per hand-over
 * with the proxy's phases and the command's steps (its {@code
 * handover-time:} line; docs/DESIGN.md, A hand-over's time). {@code
 * --command-kills 0} runs each command once, unkilled (with {@code
 * --proxy-kills 0}: a hand-over's time undisturbed); {@code
 * --checkpoint-request no} runs them with {@code --no-checkpoint-request}.
 * Exits 0 only if every check held.
 * {@link Faults} sets the same scene for one job kind and takes it through
 * the hand-over's faults.
 */
public final class Orchestrated {
    static final int PARTITIONS = 2, KEYS = 8, HOPS = 2, MAX_RUNS = 8;
    static final long TICK_MS = 50, BOUND_MS = 500, WINDOW_MS = 2000;
    /** The command's steps in order, as it records them in the map. */
    static final List<String> STEPS = List.of("cutover", "clear", "suspend", "start", "finish", "done");
    /** Where each command is SIGKILLed once. */
    static final List<String> KILL_AT = List.of("clear", "suspend", "start", "finish");
    static final String FROM = "gate-proxy.handover.from", TO = "gate-proxy.handover.to",
            STEP = "gate-proxy.handover.step", CUTOFF = "gate-proxy.handover.cutoff",
            SAVEPOINT = "gate-proxy.handover.savepoint";
    static final Pattern LINE = Pattern.compile(
            "^handover: from=(\\S+) to=(\\S+) T=(\\d+) savepoint=(\\S+) new_job_running_after_ms=(\\d+) ok$");

    final Map<String, String> args;
    /** The job kinds handed over, each with its own source, proxy, map and FlinkDeployments. */
    final List<Jobs.Kind> kinds;
    final String bootstrap, run, ns, kubeconfig, bin;
    final Path work;
    final int proxyKills;
    /** Each command is SIGKILLed at each step of KILL_AT (--command-kills). */
    final boolean commandKills;
    /** The commands ask the operator for the old job's checkpoint (--checkpoint-request). */
    final boolean checkpointRequest;
    final Kafka kafka;
    final Operator.Kube kube;
    final ObjectMapper json = new ObjectMapper();
    final Map<Jobs.Kind, String> source = new EnumMap<>(Jobs.Kind.class);
    final Map<Jobs.Kind, Proxy> proxies = new EnumMap<>(Jobs.Kind.class);
    final Map<Jobs.Kind, MapView> maps = new EnumMap<>(Jobs.Kind.class);
    final List<String> problems = new ArrayList<>();
    /** The savepoint and checkpoint dirs the FlinkDeployments name (the MiniCluster's: Cluster.java). */
    String savepointDir, checkpointDir;

    Orchestrated(Map<String, String> args) throws Exception {
        this(args, List.of(Jobs.Kind.values()));
    }

    Orchestrated(Map<String, String> args, List<Jobs.Kind> kinds) throws Exception {
        this.args = args;
        this.kinds = kinds;
        bootstrap = need("bootstrap");
        bin = need("bin");
        work = Path.of(need("work"));
        run = need("run");
        ns = need("namespace");
        kubeconfig = need("kubeconfig");
        proxyKills = Integer.parseInt(args.getOrDefault("proxy-kills", "1"));
        commandKills = !"0".equals(args.getOrDefault("command-kills", "1"));
        checkpointRequest = !"no".equals(args.getOrDefault("checkpoint-request", "yes"));
        kafka = new Kafka(bootstrap);
        kube = new Operator.Kube(need("api"), need("token"), Path.of(need("ca")));
        for (Jobs.Kind k : kinds) {
            source.put(k, run + "-" + k.tag());
            for (String c : List.of("blue", "green"))
                if (!fd(k, c).matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?") || fd(k, c).length() > 45)
                    throw new IllegalArgumentException("--run " + run + " makes the FlinkDeployment name "
                            + fd(k, c) + ": the operator takes at most 45 lower-case alphanumerics or '-'");
        }
        gen = new Generator(kafka, source.values(), PARTITIONS, KEYS, TICK_MS, BOUND_MS);
    }

    String need(String k) {
        String v = args.get(k);
        if (v == null)
            throw new IllegalArgumentException("--" + k + " is required");
        return v;
    }

    static void say(String s) {
        Handover.say(s);
    }

    /** The FlinkDeployment of job K in colour C; the ConfigMap of K is its source's name. */
    String fd(Jobs.Kind k, String colour) {
        return run + "-" + k.tag() + "-" + colour;
    }

    String deployments() {
        return "/apis/" + Operator.API + "/namespaces/" + ns + "/flinkdeployments";
    }

    /**
     * The exact path's uid rules: the source and the sink have the colour,
     * every state's uid is the same in both colours, so NEW takes all of
     * OLD's state from its final savepoint.
     */
    Jobs.Spec spec(Jobs.Kind k, String colour) {
        String src = colour.equals("ref") ? source.get(k) : source.get(k) + "." + colour;
        String out = source.get(k) + (colour.equals("ref") ? ".reference" : ".out");
        Jobs.Spec s = Jobs.Spec.of(k, bootstrap, run, colour, src, out, true);
        s.windowMs = WINDOW_MS;
        s.boundMs = BOUND_MS;
        s.parallelism = PARTITIONS;
        return s;
    }

    /** A FlinkDeployment as a user would write it for job K in colour C (the stand-in reads spec.job.args). */
    ObjectNode flinkDeployment(Jobs.Kind k, String colour, String state) {
        ObjectNode o = json.createObjectNode();
        o.put("apiVersion", Operator.API).put("kind", "FlinkDeployment");
        ObjectNode meta = o.putObject("metadata");
        meta.put("name", fd(k, colour)).put("namespace", ns);
        meta.putObject("labels").put("app.kubernetes.io/part-of", run).put("gate-proxy/colour", colour)
                .put("gate-proxy/job", k.tag());
        ObjectNode spec = o.putObject("spec");
        spec.put("flinkVersion", "v2_2"); // the stand-in runs Flink 2.2.1
        spec.put("image", "registry.example/gate-proxy-e2e-jobs:0.1.0");
        spec.put("imagePullPolicy", "IfNotPresent");
        spec.put("serviceAccount", "flink");
        spec.put("mode", "native");
        // Nested, with typed values, as YAML is written for operator 1.13+
        // (the API server keeps it as written; the operator and gate-proxy
        // read it flattened). state.savepoints.dir as the operator's
        // examples write it (file:///...); Flink reports its savepoints
        // there as file:/... A checkpoint dir too: without one the
        // operator's validator rejects upgradeMode savepoint
        // (DefaultValidator.java:251-258 in release-1.15.0;
        // Operator.validationError).
        ObjectNode conf = spec.putObject("flinkConfiguration");
        conf.put("state.savepoints.dir", savepointDir);
        conf.putObject("execution").putObject("checkpointing").put("dir", checkpointDir)
                .put("interval", "1 s").put("timeout", "60 s");
        conf.put("taskmanager.numberOfTaskSlots", PARTITIONS);
        ObjectNode kop = conf.putObject("kubernetes.operator");
        kop.putObject("job").put("upgrade.last-state-fallback.enabled", false)
                .put("drain-on-savepoint-deletion", false);
        kop.putObject("savepoint").put("dispose-on-delete", false).put("format.type", "CANONICAL");
        kop.put("jm-deployment.shutdown-ttl", "5 min");
        spec.putObject("jobManager").put("replicas", 1).putObject("resource").put("memory", "1024m").put("cpu", 0.5);
        spec.putObject("taskManager").putObject("resource").put("memory", "1536m").put("cpu", 1.0);
        ObjectNode job = spec.putObject("job");
        job.put("jarURI", "local:///opt/flink/usrlib/gate-proxy-flink-e2e-0.1.0.jar");
        job.put("entryClass", "gateproxy.e2e.Jobs");
        job.putArray("args").add("--kind").add(k.tag()).add("--colour").add(colour);
        job.put("parallelism", PARTITIONS);
        job.put("upgradeMode", "savepoint");
        job.put("state", state);
        job.put("allowNonRestoredState", true);
        return o;
    }

    /** Polls FlinkDeployment NAME until WANT holds of it (null when it is gone). */
    JsonNode awaitFd(String name, String what, Duration max, Predicate<JsonNode> want)
            throws Exception {
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            JsonNode o = kube.get(deployments() + "/" + name);
            if (want.test(o))
                return o;
            if (System.nanoTime() > end)
                throw new IllegalStateException(name + ": no " + what + " after " + max + "; status: "
                        + (o == null ? "(gone)" : o.path("status")));
            Thread.sleep(200);
        }
    }

    static String lifecycle(JsonNode fd) {
        return fd == null ? null : fd.path("status").path("lifecycleState").asText(null);
    }

    /**
     * One ConfigMap as the API server reports it (a watch): its data now, the
     * time each hand-over step was first seen, the first cutoff each
     * hand-over recorded.
     */
    static final class MapView implements Consumer<JsonNode> {
        volatile Map<String, String> data = Map.of();
        final Map<String, Long> seen = new ConcurrentHashMap<>();
        final Map<String, String> firstCutoff = new ConcurrentHashMap<>();

        @Override
        public void accept(JsonNode cm) {
            Map<String, String> d = new HashMap<>();
            cm.path("data").fields().forEachRemaining(e -> d.put(e.getKey(), e.getValue().asText()));
            data = d;
            String hand = d.get(FROM) + ">" + d.get(TO);
            if (d.get(STEP) != null)
                seen.putIfAbsent(hand + ":" + d.get(STEP), System.nanoTime());
            if (d.get(CUTOFF) != null)
                firstCutoff.putIfAbsent(hand, d.get(CUTOFF));
        }
    }

    /**
     * One {@code gate-proxy handover} of job K, run until it exits 0:
     * SIGKILLed once at each step of KILL_AT (a step that went by unseen is
     * killed at the next one seen), then run again with the same arguments.
     */
    final class Command extends Thread {
        final int hop;
        final Jobs.Kind k;
        final String from, to;
        final MapView map;
        final Path out, err;
        final List<String> kills = new ArrayList<>();
        volatile Process proc;
        volatile String line, time;
        volatile Exception failed;
        int runs;
        long startNs, endNs;

        Command(int hop, Jobs.Kind k, String from, String to) {
            super("handover " + from + " -> " + to);
            this.hop = hop;
            this.k = k;
            this.from = from;
            this.to = to;
            this.map = maps.get(k);
            this.out = work.resolve("handover-" + hop + "-" + k.tag() + ".out");
            this.err = work.resolve("handover-" + hop + "-" + k.tag() + ".err");
        }

        List<String> cmd() {
            List<String> c = new ArrayList<>(List.of(bin, "handover", "--k8s", source.get(k), "--namespace", ns,
                    "--kubeconfig", kubeconfig, "--from", from, "--to", to, "--timeout", "150"));
            if (!checkpointRequest)
                c.add("--no-checkpoint-request");
            return c;
        }

        /** This hand-over's step in the map, or null while the map holds another's. */
        String step() {
            Map<String, String> d = map.data;
            return from.equals(d.get(FROM)) && to.equals(d.get(TO)) ? d.get(STEP) : null;
        }

        @Override
        public void run() {
            try {
                startNs = System.nanoTime();
                long deadline = startNs + TimeUnit.SECONDS.toNanos(240);
                int next = commandKills ? 0 : KILL_AT.size();
                while (true) {
                    if (++runs > MAX_RUNS)
                        throw new IllegalStateException("not done after " + MAX_RUNS + " runs");
                    String head = "=== run " + runs + ": " + String.join(" ", cmd()) + "\n";
                    Files.writeString(out, head, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                    Files.writeString(err, head, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                            StandardOpenOption.APPEND);
                    long mark = Files.size(out);
                    Process p = new ProcessBuilder(cmd())
                            .redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                            .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile())).start();
                    proc = p;
                    String killedAt = null;
                    while (!p.waitFor(10, TimeUnit.MILLISECONDS)) {
                        String s = step();
                        int at = s == null ? -1 : STEPS.indexOf(s);
                        if (next < KILL_AT.size() && at >= STEPS.indexOf(KILL_AT.get(next))) {
                            p.destroyForcibly().waitFor();
                            List<String> covered = new ArrayList<>();
                            while (next < KILL_AT.size() && STEPS.indexOf(KILL_AT.get(next)) <= at)
                                covered.add(KILL_AT.get(next++));
                            killedAt = String.join("+", covered) + "@" + s;
                            kills.add(killedAt);
                            break;
                        }
                        if (System.nanoTime() > deadline) {
                            p.destroyForcibly().waitFor();
                            throw new IllegalStateException("still running after 240 s, at step " + s);
                        }
                    }
                    if (killedAt != null) {
                        say("hop " + hop + ": " + k.tag() + ": handover SIGKILLed at step " + killedAt
                                + "; running it again");
                        continue;
                    }
                    byte[] all = Files.readAllBytes(out);
                    String text = new String(all, (int) mark, all.length - (int) mark, StandardCharsets.UTF_8);
                    if (p.exitValue() != 0)
                        throw new IllegalStateException("gate-proxy handover exited " + p.exitValue()
                                + " (run " + runs + "); stderr: " + lastLines(err, 15));
                    for (String l : text.split("\n")) {
                        if (l.startsWith("handover: "))
                            line = l.trim();
                        if (l.startsWith("handover-time: "))
                            time = l.substring("handover-time: ".length()).trim();
                    }
                    if (line == null || !text.trim().endsWith(line))
                        throw new IllegalStateException("no final handover: line in its output: " + text);
                    break;
                }
                endNs = System.nanoTime();
            } catch (Exception e) {
                failed = e;
            }
        }

        /** On a failure elsewhere: no command is left running. */
        void kill() {
            Process p = proc;
            if (p != null)
                p.destroyForcibly();
        }

        /**
         * Per step, the milliseconds from its first sight in the map to that
         * of the next step (the last: to the command's exit), as seen from
         * outside: the SIGKILLs and reruns are in them.
         */
        String stepTimes() {
            StringBuilder b = new StringBuilder();
            String hand = from + ">" + to + ":";
            for (int i = 0; i + 1 < STEPS.size(); i++) {
                Long a = map.seen.get(hand + STEPS.get(i));
                Long z = map.seen.get(hand + STEPS.get(i + 1));
                if (z == null && i + 1 == STEPS.size() - 1)
                    z = endNs;
                b.append(' ').append(STEPS.get(i)).append("_ms=")
                        .append(a == null || z == null ? "?" : Long.toString((z - a) / 1_000_000));
            }
            return b.toString().trim();
        }
    }

    static String lastLines(Path f, int n) throws Exception {
        if (!Files.exists(f))
            return "";
        List<String> l = Files.readAllLines(f, StandardCharsets.UTF_8);
        return String.join("\n", l.subList(Math.max(0, l.size() - n), l.size()));
    }

    /** The three ConfigMaps as a first deployment leaves them, unless the caller made them. */
    void ensureMaps() throws Exception {
        for (Jobs.Kind k : kinds) {
            String path = "/api/v1/namespaces/" + ns + "/configmaps";
            if (kube.get(path + "/" + source.get(k)) != null)
                continue;
            ObjectNode cm = json.createObjectNode();
            cm.put("apiVersion", "v1").put("kind", "ConfigMap");
            cm.putObject("metadata").put("name", source.get(k)).put("namespace", ns);
            cm.putObject("data").put("active-deployment-type", "BLUE").put("stage", "RUNNING")
                    .put("is-first-deployment", "true");
            kube.post(path, cm);
        }
    }

    final Generator gen;
    final Map<Jobs.Kind, JobID> ref = new EnumMap<>(Jobs.Kind.class), live = new EnumMap<>(Jobs.Kind.class);
    final Map<Jobs.Kind, List<Long>> cutoffs = new EnumMap<>(Jobs.Kind.class);
    final List<String> handovers = new ArrayList<>(), timings = new ArrayList<>(), hops = new ArrayList<>();
    final List<Command> commands = new ArrayList<>();
    Operator op;

    int run() throws Exception {
        prepare();
        List<Operator.Kube.Watch> watches = new ArrayList<>();
        try {
            startProxies(watches);
            try (Cluster flink = new Cluster(work.resolve("flink"), 4 * PARTITIONS * 3)) {
                try {
                    handOver(flink);
                } finally {
                    gen.stop.set(true);
                    for (Command c : commands)
                        c.kill();
                    if (op != null)
                        op.close(); // before the MiniCluster goes
                }
            }
        } catch (Exception e) {
            for (Proxy p : proxies.values())
                if (p.alive())
                    try {
                        p.stop();
                    } catch (Exception again) {
                        e.addSuppressed(again);
                    }
            throw e;
        } finally {
            for (Operator.Kube.Watch w : watches)
                w.close();
        }
        for (Proxy p : proxies.values())
            p.stop();
        return verify();
    }

    /** The topics, the maps, and one proxy configuration per job kind (not started). */
    void prepare() throws Exception {
        Files.createDirectories(work);
        List<String> topics = new ArrayList<>();
        for (String s : source.values())
            topics.addAll(List.of(s, s + ".blue", s + ".green", s + ".out", s + ".reference", s + ".dlq"));
        kafka.createTopics(PARTITIONS, topics.toArray(new String[0]));
        ensureMaps();

        // One proxy per job, steered by its own ConfigMap as the Role's user.
        for (Jobs.Kind k : kinds) {
            String s = source.get(k);
            Path conf = work.resolve("proxy-" + k.tag() + ".conf");
            Files.writeString(conf, String.join("\n",
                    "kafka.bootstrap.servers=" + bootstrap,
                    "gate.pipeline=" + s,
                    "gate.group.id=" + s + "-proxy",
                    "gate.source.topics=" + s,
                    "gate.event-time=json:ts",
                    "gate.topics.create=false",
                    "gate.dlq.topic=" + s + ".dlq",
                    "gate.watermark.out-of-orderness.ms=" + BOUND_MS,
                    "gate.watermark.idle.ms=2000",
                    "gate.cutoff.align.ms=" + WINDOW_MS,
                    "gate.drain.group.blue=" + spec(k, "blue").group,
                    "gate.drain.group.green=" + spec(k, "green").group,
                    "kafka.transaction.timeout.ms=10000",
                    "control.k8s.configmap=" + s,
                    "control.k8s.namespace=" + ns,
                    "control.k8s.kubeconfig=" + kubeconfig, ""));
            proxies.put(k, new Proxy(bin, conf, work.resolve("proxy-" + k.tag() + ".log"),
                    List.of("--k8s", s, "--namespace", ns, "--kubeconfig", kubeconfig)));
            maps.put(k, new MapView());
            cutoffs.put(k, new ArrayList<>());
        }
    }

    /** Starts the proxies and follows their maps (the watches go to WATCHES); waits for each one's first status. */
    void startProxies(List<Operator.Kube.Watch> watches) throws Exception {
        for (Jobs.Kind k : kinds) {
            proxies.get(k).start();
            watches.add(kube.follow("/api/v1/namespaces/" + ns + "/configmaps", source.get(k), maps.get(k)));
        }
        for (Proxy p : proxies.values())
            p.await("the proxy's first status", Duration.ofSeconds(60),
                    m -> m.containsKey("gate-proxy.heartbeat"));
    }

    /** The jobs, the stand-in, the two hops, the drain at the end. */
    void handOver(Cluster flink) throws Exception {
        savepointDir = flink.savepointDir();
        checkpointDir = flink.checkpointDir();
        op = new Operator(kube, ns, flink, (kind, colour) -> spec(Jobs.Kind.valueOf(kind.toUpperCase()), colour));
        // --faults "window-green=slow=1500;running-blue=conflict": the
        // stand-in's faults per FlinkDeployment (NAME without the run).
        for (String f : args.getOrDefault("faults", "").split(";"))
            if (f.contains("="))
                op.fault(run + "-" + f.substring(0, f.indexOf('=')).trim(), f.substring(f.indexOf('=') + 1).trim());
        op.start();
        for (Jobs.Kind k : kinds) {
            ref.put(k, flink.submit(spec(k, "ref"), null));
            kube.post(deployments(), flinkDeployment(k, "blue", "running"));
        }
        for (JobID j : ref.values())
            flink.awaitRunning(j, Duration.ofSeconds(120));
        for (Jobs.Kind k : kinds) {
            awaitFd(fd(k, "blue"), "STABLE and RUNNING", Duration.ofSeconds(120), o -> o != null
                    && "STABLE".equals(lifecycle(o))
                    && "RUNNING".equals(o.path("status").path("jobStatus").path("state").asText()));
            live.put(k, op.job(fd(k, "blue")));
        }
        gen.start();
        say("reference jobs and the blue FlinkDeployments running; records flowing into " + source.values());
        Thread.sleep(4000);

        String old = "blue";
        for (int hop = 1; hop <= HOPS; hop++) {
            String neu = old.equals("blue") ? "green" : "blue";
            // Odd hops with partition 1 idle (its close comes from
            // gate.watermark.idle.ms), even hops with every partition
            // written (the close from the watermark): both cases' e2e-hop:
            // lines.
            boolean idleHop = hop % 2 == 1;
            gen.idle.set(idleHop);
            say("hop " + hop + ": " + old + " -> " + neu + " by gate-proxy handover ("
                    + (idleHop ? "partition 1 idle" : "every partition written") + ")");
            // NEW's era starts where its topic ends now: the proxy writes
            // nothing to it before T. NEW's group still points where the
            // last job of that colour left it.
            for (Jobs.Kind k : kinds)
                startsAtEra(k, neu, kafka.ends(source.get(k) + "." + neu));
            for (Jobs.Kind k : kinds)
                kube.post(deployments(), flinkDeployment(k, neu, "suspended"));
            for (Jobs.Kind k : kinds)
                awaitFd(fd(k, neu), "lifecycleState CREATED", Duration.ofSeconds(30),
                        o -> o != null && "CREATED".equals(lifecycle(o)));
            Map<Jobs.Kind, Integer> sp0 = new EnumMap<>(Jobs.Kind.class);
            Map<Jobs.Kind, Command> cmds = new EnumMap<>(Jobs.Kind.class);
            for (Jobs.Kind k : kinds) {
                sp0.put(k, op.savepointsTaken(fd(k, old)));
                Command c = new Command(hop, k, fd(k, old), fd(k, neu));
                cmds.put(k, c);
                commands.add(c);
                c.start();
            }
            killProxies(hop, cmds);
            for (Command c : cmds.values())
                c.join(TimeUnit.SECONDS.toMillis(300));
            for (Jobs.Kind k : kinds) {
                Command c = cmds.get(k);
                if (c.isAlive() || c.failed != null)
                    throw new IllegalStateException("hop " + hop + ": the " + k.tag() + " hand-over failed: "
                            + (c.failed == null ? "still running" : c.failed.getMessage()), c.failed);
                cutoffs.get(k).add(checkHandover(hop, k, c.from, c.to, c.line, sp0.get(k)));
                say("hop " + hop + " " + k.tag() + ": " + c.line + " (runs=" + c.runs + ", kills=" + c.kills + ")");
                handovers.add("hop=" + hop + " job=" + k.tag() + " runs=" + c.runs + " kills="
                        + (c.kills.isEmpty() ? "none" : String.join(",", c.kills)) + " " + c.line);
                timings.add("hop=" + hop + " job=" + k.tag() + " total_ms=" + (c.endNs - c.startNs) / 1_000_000
                        + " " + c.stepTimes() + " runs=" + c.runs + " "
                        + c.line.replaceAll(".*(new_job_running_after_ms=\\d+).*", "$1"));
                hops.add("hop=" + hop + " job=" + k.tag() + " case=" + (idleHop ? "idle" : "active")
                        + " checkpoint_request="
                        + (checkpointRequest ? "yes" : "no") + " runs=" + c.runs + " "
                        + (c.time == null ? "(no handover-time: line)" : c.time));
                live.put(k, op.job(fd(k, neu)));
            }
            gen.idle.set(false);
            say("hop " + hop + ": " + neu + " owns the traffic");
            old = neu;
            Thread.sleep(4000);
        }

        gen.stop.set(true);
        gen.join();
        if (gen.failed != null)
            throw gen.failed;
        say("generator stopped after " + gen.sent.get() + " records per source topic");
        for (Jobs.Kind k : kinds)
            awaitProxyConsumed(k);
        // The last jobs are drained by hand (a drain is no operator action on
        // a running job): the stand-in stops first, so it sees no job end.
        op.close();
        for (Jobs.Kind k : kinds) {
            kafka.awaitDrained(spec(k, old).group, List.of(source.get(k) + "." + old), Duration.ofSeconds(120));
            kafka.awaitDrained(spec(k, "ref").group, List.of(source.get(k)), Duration.ofSeconds(120));
            flink.stop(live.get(k), true);
            flink.stop(ref.get(k), true);
        }
        say("last jobs drained and stopped");
    }

    /**
     * SIGKILLs and restarts each proxy PROXY_KILLS times, the first 1 s after
     * its hand-over's cutoff is known, while the commands run.
     */
    void killProxies(int hop, Map<Jobs.Kind, Command> cmds) throws Exception {
        Map<Jobs.Kind, Integer> done = new EnumMap<>(Jobs.Kind.class);
        Map<Jobs.Kind, Long> due = new EnumMap<>(Jobs.Kind.class);
        while (true) {
            boolean more = false;
            for (Jobs.Kind k : kinds) {
                Command c = cmds.get(k);
                int n = done.getOrDefault(k, 0);
                if (n >= proxyKills || !c.isAlive())
                    continue;
                more = true;
                if (!due.containsKey(k) && maps.get(k).firstCutoff.containsKey(c.from + ">" + c.to))
                    due.put(k, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1000));
                if (due.containsKey(k) && System.nanoTime() >= due.get(k)) {
                    proxies.get(k).killAndRestart();
                    done.put(k, n + 1);
                    due.put(k, System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500));
                    say("hop " + hop + ": " + k.tag() + ": proxy SIGKILLed and restarted (step "
                            + c.step() + ")");
                }
            }
            if (!more)
                return;
            Thread.sleep(50);
        }
    }

    /**
     * What each hand-over must leave: its final line's T is the first T the
     * map recorded and the proxy's; the stand-in took exactly one savepoint of
     * OLD; OLD is gone; NEW runs from that savepoint. Returns T.
     */
    long checkHandover(int hop, Jobs.Kind k, String from, String to, String line, int savepointsBefore)
            throws Exception {
        return checkHandover(hop, k, from, to, line, savepointsBefore, 1, null);
    }

    /**
     * As above, with TAKEN savepoints of OLD by the stand-in (0 when OLD's
     * job ended before the suspend: no stop), and NEW running from NEW_FROM
     * (null: the final line's savepoint; else a path NEW was redeployed
     * from after it failed, its own checkpoint).
     */
    long checkHandover(int hop, Jobs.Kind k, String from, String to, String line, int savepointsBefore,
                       int wantTaken, String newFrom) throws Exception {
        Matcher m = LINE.matcher(line);
        String who = "hop " + hop + " " + k.tag() + ": ";
        if (!m.matches() || !m.group(1).equals(from) || !m.group(2).equals(to))
            throw new IllegalStateException(who + "unexpected final line: " + line);
        long t = Long.parseLong(m.group(3));
        String sp = m.group(4);
        String first = maps.get(k).firstCutoff.get(from + ">" + to);
        Map<String, String> st = proxies.get(k).status();
        if (!Long.toString(t).equals(first))
            problems.add(who + "T=" + t + " in the final line, but the map first recorded " + first);
        if (!Long.toString(t).equals(st.get("watermark-toggle-value")))
            problems.add(who + "T=" + t + " in the final line, but the proxy's watermark-toggle-value is "
                    + st.get("watermark-toggle-value"));
        if (!sp.equals(st.get(SAVEPOINT)))
            problems.add(who + "savepoint " + sp + " in the final line, but the map has " + st.get(SAVEPOINT));
        if (!"done".equals(st.get(STEP)))
            problems.add(who + "the map's step is " + st.get(STEP) + " after the command, not done");
        if (!"RUNNING".equals(st.get("stage")))
            problems.add(who + "stage " + st.get("stage") + " after the command, not RUNNING");
        int taken = op.savepointsTaken(from) - savepointsBefore;
        if (taken != wantTaken)
            problems.add(who + "the stand-in took " + taken + " savepoints of " + from + ", not " + wantTaken);
        awaitFd(from, "deletion", Duration.ofSeconds(15), o -> o == null);
        JsonNode neu = kube.get(deployments() + "/" + to);
        JsonNode js = neu == null ? null : neu.path("status").path("jobStatus");
        String runsFrom = newFrom == null ? sp : newFrom;
        if (js == null || !"STABLE".equals(lifecycle(neu)) || !"RUNNING".equals(js.path("state").asText())
                || !runsFrom.equals(js.path("upgradeSavepointPath").asText()))
            problems.add(who + to + " is not STABLE/RUNNING from " + runsFrom + ": "
                    + (neu == null ? "(gone)" : neu.path("status")));
        return t;
    }

    /**
     * A new job of a colour must begin exactly at the first record of its
     * era, whatever the previous job of that colour committed (the drain
     * check held CLEAR_TO_TEARDOWN until that job had consumed everything).
     */
    void startsAtEra(Jobs.Kind k, String colour, Map<TopicPartition, Long> era) throws Exception {
        long off = kafka.offEra(spec(k, colour).group, source.get(k) + "." + colour, era);
        if (off != 0)
            say("the " + colour + " " + k.tag() + " job would start " + Math.abs(off) + " records "
                    + (off > 0 ? "before" : "after") + " the first record of its era " + era);
        else
            eraExact++;
        eraChecks++;
    }

    int eraChecks, eraExact;

    /** Waits until the proxy of K has committed every source record; then its status counts are final. */
    void awaitProxyConsumed(Jobs.Kind k) throws Exception {
        String group = source.get(k) + "-proxy";
        long end = System.nanoTime() + Duration.ofSeconds(120).toNanos();
        Map<TopicPartition, Long> want = kafka.ends(source.get(k));
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

    /** The checks; returns the exit code. */
    int verify() throws Exception {
        int bad = problems.size();
        for (String p : problems)
            say("FAIL: " + p);
        // The colour topics, per job: each source record exactly once, blue
        // for ts < T1 or ts >= T2, green between; counts as its proxy reports.
        for (Jobs.Kind k : kinds) {
            String s = source.get(k);
            List<Long> ts = cutoffs.get(k);
            Map<String, Integer> seen = new HashMap<>();
            long misrouted = 0, blue = 0, green = 0;
            for (String colour : List.of("blue", "green"))
                for (ConsumerRecord<String, String> r : kafka.readAll(s + "." + colour)) {
                    Jobs.Rec rec = Jobs.Rec.parse(r.value());
                    boolean wantBlue = rec.ts < ts.get(0) || rec.ts >= ts.get(1);
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
            Map<String, String> st = proxies.get(k).status();
            say("colours: job=" + k.tag() + " records=" + src.size() + " lost=" + lost + " duplicated=" + dup
                    + " misrouted=" + misrouted + " blue=" + blue + " green=" + green + " proxy_blue="
                    + st.get("gate-proxy.count.blue") + " proxy_green=" + st.get("gate-proxy.count.green"));
            if (lost + dup + misrouted > 0
                    || Long.parseLong(st.getOrDefault("gate-proxy.count.blue", "-1")) != blue
                    || Long.parseLong(st.getOrDefault("gate-proxy.count.green", "-1")) != green)
                bad++;
        }
        for (Jobs.Kind k : kinds) {
            List<String> want = Handover.values(kafka.readAll(source.get(k) + ".reference"));
            List<String> got = Handover.values(kafka.readAll(source.get(k) + ".out"));
            Check c = Check.compare(k, want, got);
            long records = kafka.readAll(source.get(k)).size();
            List<Long> ts = cutoffs.get(k);
            System.out.println("e2e: path=handover job=" + k.tag() + " hops=" + HOPS + " records=" + records
                    + " " + c + " T=" + ts.get(0) + "," + ts.get(1));
            if (!c.exact() || want.isEmpty()) {
                bad++;
                say("FAIL: job " + k.tag() + " on the handover path");
            }
        }
        for (String h : handovers)
            System.out.println("e2e-handover: " + h);
        System.out.println("e2e-handover: operator stand-in: " + op.events().size() + " actions; savepoints taken: "
                + op.savepoints);
        for (String t : timings)
            System.out.println("e2e-timing: path=handover " + t);
        for (String h : hops)
            System.out.println("e2e-hop: path=handover " + h);
        System.out.println("e2e-starts: path=handover new jobs started exactly at the first record of their era: "
                + eraExact + " of " + eraChecks);
        if (eraExact != eraChecks || eraChecks != HOPS * kinds.size())
            bad++;
        return bad == 0 ? 0 : 1;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Handover.options(argv);
        int rc = new Orchestrated(a).run();
        System.exit(rc);
    }
}
