package gateproxy.e2e;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Predicate;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A self-check of the {@link Operator} stand-in's real-operator behaviours,
 * driven directly (no gate-proxy): small FlinkDeployments on the real
 * kube-apiserver fixture, jobs in a MiniCluster, and the status fields the
 * real operator (release-1.15.0) would show.
 *
 * <pre>
 *   StandinCheck --bootstrap HOST:PORT --work DIR --run NAME --namespace NS
 *                --api URL --token ADMIN_TOKEN --ca CA_FILE
 * </pre>
 *
 * The cases (resources {@code NAME-<case>}): A the effective configuration
 * (operator default under the flattened spec, both names of each dir); B
 * validation; C drain; D legacy savepoint mode (per resource, operator-wide);
 * E SUSPENDED through SuspendMode NOOP (stop-timeout, snapshot-create-fail,
 * fail-before-suspend); F a job that fails after it checkpointed, then fixed;
 * G what the API server keeps under 1.15's CRD (nested, typed
 * flinkConfiguration; status.conditions). Prints one {@code standin: <case> ok ...} line per check (or
 * {@code standin: <case> FAILED ...}); exits 0 only if all held.
 */
public final class StandinCheck {
    static final long WINDOW_MS = 2000, BOUND_MS = 500;
    final ObjectMapper json = new ObjectMapper();
    final Map<String, String> args;
    final String bootstrap, run, ns, deployments, snapshots;
    final Path work;
    final Operator.Kube kube;
    final Kafka kafka;
    final List<String> failures = new ArrayList<>();
    String cpDir, opSpDir;
    Operator op;
    Cluster flink;

    StandinCheck(Map<String, String> args) throws Exception {
        this.args = args;
        bootstrap = need("bootstrap");
        run = need("run");
        ns = need("namespace");
        work = Path.of(need("work"));
        kube = new Operator.Kube(need("api"), need("token"), Path.of(need("ca")));
        kafka = new Kafka(bootstrap);
        deployments = "/apis/" + Operator.API + "/namespaces/" + ns + "/flinkdeployments";
        snapshots = "/apis/" + Operator.API + "/namespaces/" + ns + "/flinkstatesnapshots";
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

    void ok(String c, String what) {
        System.out.println("standin: " + c + " ok " + what);
    }

    void check(String c, boolean cond, String what) {
        if (cond)
            return;
        failures.add(c + ": " + what);
        System.out.println("standin: " + c + " FAILED " + what);
    }

    String name(String c) {
        return run + "-" + c;
    }

    String src(String c) {
        return name(c);
    }

    String out(String c) {
        return name(c) + ".out";
    }

    /** The job of case C (its colour): parallelism 1, its own topics. */
    Jobs.Spec spec(String kind, String c) {
        Jobs.Spec s = Jobs.Spec.of(Jobs.Kind.valueOf(kind.toUpperCase()), bootstrap, run, c, src(c), out(c), true);
        s.parallelism = 1;
        s.windowMs = WINDOW_MS;
        s.boundMs = BOUND_MS;
        return s;
    }

    /** A FlinkDeployment of case C: job KIND, upgradeMode savepoint, CONF as its flinkConfiguration. */
    ObjectNode fd(String c, String kind, Map<String, String> conf, String fault) {
        ObjectNode o = json.createObjectNode();
        o.put("apiVersion", Operator.API).put("kind", "FlinkDeployment");
        ObjectNode meta = o.putObject("metadata");
        meta.put("name", name(c)).put("namespace", ns);
        if (fault != null)
            meta.putObject("annotations").put(Operator.FAULT, fault);
        ObjectNode spec = o.putObject("spec");
        spec.put("flinkVersion", "v2_2");
        spec.put("image", "registry.example/gate-proxy-e2e-jobs:0.1.0");
        spec.put("serviceAccount", "flink");
        ObjectNode fc = spec.putObject("flinkConfiguration");
        fc.put("execution.checkpointing.interval", "1 s");
        conf.forEach(fc::put);
        spec.putObject("jobManager").put("replicas", 1).putObject("resource").put("memory", "1024m").put("cpu", 0.5);
        spec.putObject("taskManager").putObject("resource").put("memory", "1536m").put("cpu", 1.0);
        ObjectNode job = spec.putObject("job");
        job.put("jarURI", "local:///opt/flink/usrlib/gate-proxy-flink-e2e-0.1.0.jar");
        job.putArray("args").add("--kind").add(kind).add("--colour").add(c);
        job.put("parallelism", 1);
        job.put("upgradeMode", "savepoint");
        job.put("state", "running");
        job.put("allowNonRestoredState", true);
        return o;
    }

    JsonNode get(String c) throws Exception {
        return kube.get(deployments + "/" + name(c));
    }

    static String text(JsonNode n) {
        return n == null || n.isMissingNode() || n.isNull() ? null : n.asText();
    }

    static String lifecycle(JsonNode o) {
        return text(o.path("status").path("lifecycleState"));
    }

    static String jobState(JsonNode o) {
        return text(o.path("status").path("jobStatus").path("state"));
    }

    static String path(JsonNode o) {
        return text(o.path("status").path("jobStatus").path("upgradeSavepointPath"));
    }

    JsonNode error(JsonNode o) throws Exception {
        String e = text(o.path("status").path("error"));
        return e == null ? json.createObjectNode() : json.readTree(e);
    }

    JsonNode await(String c, String what, long seconds, Predicate<JsonNode> p) throws Exception {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        while (true) {
            JsonNode o = get(c);
            if (o != null && p.test(o))
                return o;
            if (System.nanoTime() > end)
                throw new IllegalStateException(name(c) + ": no " + what + " after " + seconds + " s; status: "
                        + (o == null ? "(gone)" : o.path("status")));
            Thread.sleep(50);
        }
    }

    boolean stable(JsonNode o) {
        return "STABLE".equals(lifecycle(o)) && "RUNNING".equals(jobState(o));
    }

    boolean suspended(JsonNode o) {
        return "SUSPENDED".equals(lifecycle(o));
    }

    /** The FlinkStateSnapshots whose job reference is case C's resource. */
    int snapshotsOf(String c) throws Exception {
        int n = 0;
        JsonNode l = kube.get(snapshots);
        if (l != null)
            for (JsonNode s : l.path("items"))
                if (name(c).equals(s.path("spec").path("jobReference").path("name").asText()))
                    n++;
        return n;
    }

    void suspend(String c) throws Exception {
        kube.merge(deployments + "/" + name(c), json.readTree("{\"spec\":{\"job\":{\"state\":\"suspended\"}}}"));
    }

    /** Under DIR (a file: URI as the resource names it) as Flink reports paths there (file:/...). */
    static boolean under(String path, String dir) {
        return path != null && Path.of(java.net.URI.create(path)).startsWith(Path.of(java.net.URI.create(dir)));
    }

    int run() throws Exception {
        Files.createDirectories(work);
        cpDir = work.resolve("flink").resolve("checkpoints").toUri().toString();
        opSpDir = work.resolve("operator-savepoints").toUri().toString();
        List<String> cases = List.of("a", "b1", "b2", "b3", "c", "d1", "d2", "e1", "e2", "e3", "f");
        List<String> topics = new ArrayList<>();
        for (String c : cases)
            topics.addAll(List.of(src(c), out(c)));
        kafka.createTopics(1, topics.toArray(new String[0]));
        AtomicBoolean stop = new AtomicBoolean();
        Thread gen = null;
        try (Cluster c = new Cluster(work.resolve("flink"), 24)) {
            flink = c;
            // The operator's default configuration: a savepoint dir (new
            // name) every resource inherits unless its spec sets one.
            op = new Operator(kube, ns, flink, this::spec)
                    .operatorConfig(Map.of("execution.checkpointing.savepoint-dir", opSpDir));
            try {
                op.start();
                gen = generator(List.of("b3", "d1", "d2", "e1", "e2", "e3", "f"), stop);
                checks();
            } finally {
                stop.set(true);
                if (gen != null)
                    gen.join(5000);
                for (String x : cases)
                    try {
                        kube.delete(deployments + "/" + name(x));
                    } catch (Exception e) {
                        say("deleting " + name(x) + ": " + e);
                    }
                long end = System.nanoTime() + 20_000_000_000L;
                while (System.nanoTime() < end && kube.get(deployments).path("items").size() > 0)
                    Thread.sleep(200);
                op.close();
            }
        }
        if (failures.isEmpty()) {
            System.out.println("standin: all ok (" + op.events().size() + " stand-in actions)");
            return 0;
        }
        System.out.println("standin: " + failures.size() + " check(s) failed: " + failures);
        return 1;
    }

    /** A record every 100 ms into each running-total case's source (the jobs' fault switch needs records). */
    Thread generator(List<String> cs, AtomicBoolean stop) {
        Thread t = new Thread(() -> {
            try (KafkaProducer<String, String> p = kafka.producer()) {
                for (long id = 0; !stop.get(); id++) {
                    for (String c : cs)
                        p.send(new ProducerRecord<>(src(c), Jobs.Rec.format(id, "k" + id % 4,
                                System.currentTimeMillis(), id % 7)));
                    p.flush();
                    Thread.sleep(100);
                }
            } catch (Exception e) {
                if (!stop.get())
                    say("generator: " + e);
            }
        }, "standin generator");
        t.setDaemon(true);
        t.start();
        return t;
    }

    void checks() throws Exception {
        Map<String, String> base = Map.of("execution.checkpointing.dir", cpDir);
        // A: the checkpoint dir by its old name, the savepoint dir only from
        // the operator's default configuration.
        kube.post(deployments, fd("a", "window", Map.of("state.checkpoints.dir", cpDir), null));
        // B: no checkpoint dir; no savepoint dir (the default's set blank); a
        // deployed one whose change drops its checkpoint dir.
        kube.post(deployments, fd("b1", "running", Map.of(), null));
        kube.post(deployments, fd("b2", "running", Map.of("execution.checkpointing.dir", cpDir,
                "execution.checkpointing.savepoint-dir", " "), null));
        kube.post(deployments, fd("b3", "running", base, null));
        // C: drained.
        // C: drained, the setting written nested and typed (YAML for 1.13+).
        ObjectNode fdC = fd("c", "window", Map.of("execution.checkpointing.dir", cpDir), null);
        ((ObjectNode) fdC.path("spec").path("flinkConfiguration")).putObject("kubernetes.operator")
                .putObject("job").put("drain-on-savepoint-deletion", true);
        kube.post(deployments, fdC);
        // D: snapshot resources off for this resource; d2: operator-wide, later.
        kube.post(deployments, fd("d1", "running", Map.of("execution.checkpointing.dir", cpDir,
                "kubernetes.operator.snapshot.resource.enabled", "false"), null));
        kube.post(deployments, fd("d2", "running", base, null));
        // E, F: the faults.
        kube.post(deployments, fd("e1", "running", base, "stop-timeout=8000"));
        kube.post(deployments, fd("e2", "running", base, "snapshot-create-fail=25000"));
        kube.post(deployments, fd("e3", "running", base, "fail-before-suspend"));
        kube.post(deployments, fd("f", "running", base, "fail-after-checkpoint"));

        checkA0();
        checkB12();
        for (String c : List.of("a", "b3", "c", "d1", "d2", "e1", "e2", "e3"))
            await(c, "STABLE and RUNNING", 120, this::stable);
        say("the valid resources run");
        checkG();

        // A and C: the same records into one window of each window job,
        // which no watermark closes; read (committed) before the suspend.
        long w = (System.currentTimeMillis() / WINDOW_MS + 5) * WINDOW_MS;
        try (KafkaProducer<String, String> p = kafka.producer()) {
            for (int i = 0; i < 10; i++)
                for (String c : List.of("a", "c"))
                    p.send(new ProducerRecord<>(src(c), Jobs.Rec.format(i, "k" + i % 2, w + i * 50, i)));
        }
        for (String c : List.of("a", "c"))
            kafka.awaitDrained(spec("window", c).group, List.of(src(c)), Duration.ofSeconds(60));
        // E3 must have a checkpoint before it fails.
        long end = System.nanoTime() + 60_000_000_000L;
        while (flink.latestCheckpoint(op.job(name("e3"))) == null && System.nanoTime() < end)
            Thread.sleep(200);

        for (String c : List.of("a", "c", "d1", "e1", "e2", "e3"))
            suspend(c);
        kube.merge(deployments + "/" + name("b3"), json.readTree(
                "{\"spec\":{\"job\":{\"state\":\"suspended\"},\"flinkConfiguration\":"
                        + "{\"execution.checkpointing.dir\":null}}}"));
        checkE("e1", "stop-timeout", "org.apache.flink.kubernetes.operator.exception.UpgradeFailureException",
                "Timed out stopping the job ", "with savepoint, please configure a larger timeout via "
                        + "'execution.checkpointing.timeout'");
        checkE("e2", "snapshot-create-fail",
                "org.apache.flink.kubernetes.operator.exception.ReconciliationException",
                "io.fabric8.kubernetes.client.KubernetesClientException: Failure executing: POST at: ",
                "snapshot-create-fail fault.");
        checkE3();
        checkA();
        checkB3();
        checkC();
        checkD1();
        checkD2();
        checkF();
    }

    /** A, without a job: flattening as 1.13+ does; the effective configuration; both names of each dir. */
    void checkA0() throws Exception {
        JsonNode nested = json.readTree("{\"execution\":{\"checkpointing\":{\"dir\":\"file:///cp\","
                + "\"interval\":\"1 s\"}},\"kubernetes.operator\":{\"job.drain-on-savepoint-deletion\":true},"
                + "\"parallelism.default\":10,\"pipeline.jars\":[\"a.jar\",\"b.jar\"]}");
        Map<String, String> flat = Operator.flatten(nested);
        Map<String, String> want = new LinkedHashMap<>();
        want.put("execution.checkpointing.dir", "file:///cp");
        want.put("execution.checkpointing.interval", "1 s");
        want.put("kubernetes.operator.job.drain-on-savepoint-deletion", "true");
        want.put("parallelism.default", "10");
        want.put("pipeline.jars", "a.jar;b.jar");
        check("A", flat.equals(want), "flatten: " + flat);
        ObjectNode spec = json.createObjectNode();
        spec.putObject("flinkConfiguration").put("state.savepoints.dir", "file:///spec-old")
                .put("state.checkpoints.dir", "file:///cp-old");
        Map<String, String> eff = op.effective(spec);
        // The default's new name wins over the spec's old name, as in Flink's Configuration.
        check("A", "file:///spec-old".equals(eff.get("state.savepoints.dir"))
                && opSpDir.equals(Operator.conf(eff, "execution.checkpointing.savepoint-dir", "state.savepoints.dir"))
                && "file:///cp-old".equals(Operator.conf(eff, "execution.checkpointing.dir", "state.checkpoints.dir")),
                "effective configuration: " + eff);
        ok("A", "flatten " + flat + "; effective savepoint dir " + opSpDir + " (operator default)");
    }

    void checkB12() throws Exception {
        String[][] want = {
            {"b1", "Checkpoint directory[execution.checkpointing.dir] must be defined for last-state and "
                    + "savepoint upgrade modes"},
            {"b2", "Job could not be upgraded with savepoint while config key[execution.checkpointing.savepoint-dir]"
                    + " is not set"}};
        for (String[] w : want) {
            JsonNode o = await(w[0], "validation error", 60, x -> text(x.path("status").path("error")) != null);
            JsonNode e = error(o);
            check("B", "org.apache.flink.kubernetes.operator.exception.ValidationException".equals(
                    text(e.path("type"))) && w[1].equals(text(e.path("message"))), w[0] + " error " + e);
            check("B", "FAILED".equals(lifecycle(o)) && op.job(name(w[0])) == null
                    && text(o.path("status").path("reconciliationStatus").path("lastReconciledSpec")) == null,
                    w[0] + " not deployed, FAILED: " + o.path("status"));
            ok("B", name(w[0]) + " lifecycleState=" + lifecycle(o) + " error=" + o.path("status").path("error").asText());
        }
    }

    /** E1, E2: the error first (job still RUNNING in the status, spec unreconciled), then SUSPENDED by NOOP. */
    void checkE(String c, String fault, String type, String msgStart, String msgEnd) throws Exception {
        JsonNode o = await(c, "status.error", 120, x -> text(x.path("status").path("error")) != null);
        JsonNode e = error(o);
        long gen = o.path("metadata").path("generation").asLong();
        String msg = text(e.path("message"));
        check(c, type.equals(text(e.path("type"))) && msg != null && msg.startsWith(msgStart) && msg.endsWith(msgEnd),
                "error " + e);
        check(c, "RUNNING".equals(jobState(o)) && "STABLE".equals(lifecycle(o))
                && o.path("status").path("observedGeneration").asLong() < gen, "while failed: " + o.path("status"));
        ok("E", fault + ": " + name(c) + " error=" + e + " lifecycleState=" + lifecycle(o) + " jobStatus.state="
                + jobState(o) + " observedGeneration=" + o.path("status").path("observedGeneration") + " < " + gen);
        o = await(c, "SUSPENDED", 120, this::suspended);
        String p = path(o);
        check(c, under(p, opSpDir) && p.contains("savepoint-") && snapshotsOf(c) == 0 && op.savepointsTaken(name(c)) == 1
                && "FINISHED".equals(jobState(o)) && text(o.path("status").path("error")) == null
                && o.path("status").path("observedGeneration").asLong() == gen,
                "after: " + o.path("status") + " snapshots " + snapshotsOf(c));
        ok("E", fault + ": " + name(c) + " lifecycleState=SUSPENDED jobStatus.state=" + jobState(o)
                + " upgradeSavepointPath=" + p + " (the stop's savepoint) snapshots=" + snapshotsOf(c));
    }

    void checkE3() throws Exception {
        JsonNode o = await("e3", "SUSPENDED", 120, this::suspended);
        String p = path(o);
        check("e3", under(p, cpDir) && p.contains("/chk-") && snapshotsOf("e3") == 0
                && op.savepointsTaken(name("e3")) == 0 && "FINISHED".equals(jobState(o))
                && text(o.path("status").path("error")) == null, "after: " + o.path("status"));
        boolean failed = op.events().stream().anyMatch(s -> s.contains(name("e3") + ": fail-before-suspend fault: job")
                && s.endsWith(" CANCELED"));
        check("e3", failed, "the job did not end CANCELED (cancelled as the suspend arrived): " + op.events());
        ok("E", "fail-before-suspend: " + name("e3") + " job CANCELED in Flink (globally terminal, as FAILED), lifecycleState=SUSPENDED jobStatus.state="
                + jobState(o) + " upgradeSavepointPath=" + p + " (its last checkpoint) snapshots=0 stops=0");
    }

    /**
     * G: the API server holds what 1.15's CRD lets it hold: nested, typed
     * flinkConfiguration as written, flinkVersion v2_2, and the Running
     * condition the stand-in writes (pruned or refused by the 1.10 CRD).
     */
    void checkG() throws Exception {
        JsonNode o = get("c"), a = get("a");
        JsonNode drain = o.path("spec").path("flinkConfiguration").path("kubernetes.operator").path("job")
                .path("drain-on-savepoint-deletion");
        JsonNode cond = a.path("status").path("conditions");
        check("G", drain.isBoolean() && drain.asBoolean() && "v2_2".equals(text(o.path("spec").path("flinkVersion")))
                && cond.size() == 1 && "Running".equals(text(cond.get(0).path("type")))
                && "True".equals(text(cond.get(0).path("status")))
                && "Running".equals(text(cond.get(0).path("reason"))),
                "c spec " + o.path("spec").path("flinkConfiguration") + ", a conditions " + cond);
        ok("G", "the API server kept " + name("c") + "'s nested flinkConfiguration (drain-on-savepoint-deletion: "
                + drain + ", a boolean) and " + name("a") + "'s status.conditions " + cond);
    }

    void checkA() throws Exception {
        JsonNode o = await("a", "SUSPENDED", 120, this::suspended);
        String p = path(o);
        check("A", under(p, opSpDir) && Boolean.FALSE.equals(op.stopDrained(name("a"))) && snapshotsOf("a") == 1,
                "a: " + o.path("status"));
        ok("A", name("a") + " validated by state.checkpoints.dir, stopped into the operator default's "
                + "execution.checkpointing.savepoint-dir: upgradeSavepointPath=" + p);
    }

    void checkB3() throws Exception {
        JsonNode o = await("b3", "validation error", 60, x -> text(x.path("status").path("error")) != null);
        Thread.sleep(1500); // the stand-in polls every 200 ms: it would have suspended by now
        o = get("b3");
        JsonNode e = error(o);
        JobID id = op.job(name("b3"));
        check("B", ("Checkpoint directory[execution.checkpointing.dir] must be defined for last-state and savepoint "
                + "upgrade modes").equals(text(e.path("message"))) && "STABLE".equals(lifecycle(o))
                && "RUNNING".equals(jobState(o)) && id != null && flink.status(id) == JobStatus.RUNNING
                && o.path("status").path("observedGeneration").asLong() < o.path("metadata").path("generation").asLong(),
                "b3: " + o.path("status"));
        ok("B", name("b3") + " (deployed, change invalid): lifecycleState=" + lifecycle(o) + " jobStatus.state="
                + jobState(o) + " job still running, spec not reconciled, error message=" + text(e.path("message")));
    }

    List<String> windows(String c) {
        List<String> l = new ArrayList<>();
        for (ConsumerRecord<String, String> r : kafka.readAll(out(c)))
            l.add(r.value());
        return l;
    }

    void checkC() throws Exception {
        JsonNode o = await("c", "SUSPENDED", 120, this::suspended);
        List<String> drained = windows("c"), plain = windows("a");
        check("C", Boolean.TRUE.equals(op.stopDrained(name("c"))) && !drained.isEmpty() && plain.isEmpty(),
                "drained " + op.stopDrained(name("c")) + " windows " + drained + " vs undrained " + plain);
        ok("C", name("c") + " stop-with-savepoint drained (drain-on-savepoint-deletion true): its open window, "
                + "which ends after the stop and which no watermark had closed, fired early at the stop " + drained
                + "; " + name("a") + " (not drained) wrote " + plain.size() + " windows, its window stays in the "
                + "savepoint; upgradeSavepointPath=" + path(o) + " (Controls' drain control shows the wrong windows "
                + "a job started from a drained savepoint writes)");
    }

    void checkD1() throws Exception {
        JsonNode o = await("d1", "SUSPENDED", 120, this::suspended);
        legacy("d1", o, "kubernetes.operator.snapshot.resource.enabled=false in its spec");
    }

    void legacy(String c, JsonNode o, String why) throws Exception {
        JsonNode last = o.path("status").path("jobStatus").path("savepointInfo").path("lastSavepoint");
        String p = path(o);
        check("D", p != null && p.equals(text(last.path("location"))) && "UPGRADE".equals(text(last.path("triggerType")))
                && "CANONICAL".equals(text(last.path("formatType"))) && last.path("timeStamp").asLong() > 0
                && snapshotsOf(c) == 0, c + ": " + o.path("status") + " snapshots " + snapshotsOf(c));
        ok("D", name(c) + " (" + why + "): no FlinkStateSnapshot, savepointInfo.lastSavepoint=" + last);
    }

    void checkD2() throws Exception {
        check("D", Boolean.TRUE.equals(op.snapshotCrdAtStart()), "the CRD was there at the start");
        op.snapshotResourcesOff(true); // as if the CRD had been missing when the operator started
        suspend("d2");
        JsonNode o = await("d2", "SUSPENDED", 120, this::suspended);
        legacy("d2", o, "operator-level flag forced off; the CRD was there at start: " + op.snapshotCrdAtStart());
        op.snapshotResourcesOff(false);
    }

    void checkF() throws Exception {
        JsonNode o = await("f", "FAILED", 120, x -> "FAILED".equals(lifecycle(x)));
        String p = path(o);
        check("F", "FAILED".equals(jobState(o)) && under(p, cpDir) && p.contains("/chk-"), "f: " + o.path("status"));
        ok("F", name("f") + " fail-after-checkpoint: lifecycleState=FAILED jobStatus.state=FAILED upgradeSavepointPath="
                + p + " (its latest checkpoint)");
        // The user's fix: the fault gone, a new restartNonce.
        kube.merge(deployments + "/" + name("f"), json.readTree("{\"metadata\":{\"annotations\":{\""
                + Operator.FAULT + "\":null}},\"spec\":{\"restartNonce\":1}}"));
        o = await("f", "STABLE and RUNNING again", 120, this::stable);
        String from = "from " + p;
        boolean restored = op.events().stream().anyMatch(s -> s.startsWith(name("f") + ": resumed") && s.contains(from));
        check("F", restored && p.equals(path(o)), "f after the fix: " + o.path("status") + " events " + op.events());
        ok("F", name("f") + " fixed (restartNonce): redeployed from upgradeSavepointPath " + p + ", STABLE/RUNNING");
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2)
            a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        int rc;
        try {
            rc = new StandinCheck(a).run();
        } catch (Exception e) {
            System.out.println("standin: FAILED " + e);
            e.printStackTrace();
            rc = 1;
        }
        System.exit(rc);
    }
}
