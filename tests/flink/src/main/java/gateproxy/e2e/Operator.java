package gateproxy.e2e;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.Certificate;
import java.security.cert.CertificateFactory;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;

import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;

/**
 * A STAND-IN for the Flink Kubernetes Operator (1.10 to 1.15), in the test's
 * JVM: no pod can run on the API server fixture, so this plays the operator's
 * part on the real FlinkDeployment and FlinkStateSnapshot resources of a real
 * kube-apiserver, and runs the jobs they describe in the test's MiniCluster.
 * It is not the operator; it does what the operator does at the points
 * {@code gate-proxy handover} relies on (docs/DESIGN.md, "The hand-over
 * command", lists them):
 * <ul>
 * <li>a resource created with {@code spec.job.state: suspended} is not
 * deployed: lifecycleState CREATED, no lastReconciledSpec;</li>
 * <li>{@code running} and never deployed: the job is submitted (from
 * {@code initialSavepointPath} when set, with {@code allowNonRestoredState}),
 * DEPLOYING/RECONCILING/DEPLOYED first, READY/RUNNING/STABLE once every task
 * runs; FAILED with an error if it does not start or ends;</li>
 * <li>{@code running} changed to {@code suspended} with {@code upgradeMode:
 * savepoint}: stop-with-savepoint without drain; the status stays as it was
 * while the stop runs, then FINISHED/SUSPENDED with the new
 * {@code upgradeSavepointPath} in one patch, and a COMPLETED UPGRADE
 * FlinkStateSnapshot;</li>
 * <li>deleted: the job is cancelled if it still runs, the finalizer goes,
 * the resource is forgotten (the same name later is a new first deployment).</li>
 * </ul>
 * Status is written only through the {@code /status} subresource, whole (the
 * CRDs have no defaults and prune unknown fields). The job a resource runs is
 * named by {@code spec.job.args} ({@code --kind K --colour C}) and built by the
 * harness's {@link JobFactory}. An API server that goes away is tried again
 * ({@link Kube#send}); what a transition did in Flink meanwhile is recorded
 * once it answers.
 *
 * <p>Faults, per resource, from the annotation {@value #FAULT} (a
 * comma-separated list) or {@link #fault(String, String)}:
 * {@code savepoint-error} (the suspend fails with status.error
 * "SavepointError: ..." and the job keeps running; retried every poll until
 * the fault is gone), {@code stale-path} (the suspend falls back to
 * last-state silently: the job is stopped without a savepoint, the old
 * upgradeSavepointPath stays, no snapshot; its state is kept as HA metadata
 * would keep it, for a resume), {@code start-fail} (the deploy
 * reports FAILED without running the job), {@code slow=MS} (each transition
 * waits MS first), {@code conflict} or {@code conflict=MS} (an annotation is
 * bumped every ~100 ms, or every MS, so that conditional writes meet 409
 * Conflict), and these, which lead the real operator to a suspend with
 * SuspendMode NOOP (no stop, no FlinkStateSnapshot, upgradeSavepointPath
 * whatever the observer last recorded, jobStatus.state FINISHED):
 * {@code stop-timeout} or {@code stop-timeout=MS} (the stop-with-savepoint
 * completes in Flink but the client times out: status.error the
 * UpgradeFailureException "Timed out stopping the job ID with savepoint,
 * please configure a larger timeout via 'execution.checkpointing.timeout'",
 * spec unreconciled, no reconcile for MS, 3000 by default; then the NOOP
 * suspend from the stop's savepoint), {@code snapshot-create-fail} or
 * {@code snapshot-create-fail=MS} (the stop completes, creating the UPGRADE
 * FlinkStateSnapshot fails: status.error a ReconciliationException of a
 * KubernetesClientException, held MS; then the NOOP suspend from the stop's
 * savepoint), {@code fail-before-suspend} (as the suspend arrives the job
 * is cancelled in the MiniCluster, CANCELED for good without a record
 * flowing: NOOP from its latest checkpoint, retained on cancellation),
 * {@code fail-after-checkpoint} (once the job has completed a checkpoint of
 * its own it fails: FAILED, with that checkpoint as upgradeSavepointPath; a
 * fix redeploys from it; set before a deploy, the job fails before it is
 * ever STABLE, as one the operator's next observe finds failed). The last one needs records flowing into the job's
 * source ({@link Jobs#failNext}). Clearing a resource's faults
 * ({@link #fault(String, String)} with null) also ends the hold of a failed
 * reconcile ({@code stop-timeout=MS}, {@code snapshot-create-fail=MS}).
 *
 * <p>What it follows of the real operator's source
 * (apache/flink-kubernetes-operator, release-1.15.0; {@code op/} =
 * flink-kubernetes-operator/src/main/java/org/apache/flink/kubernetes/operator/,
 * {@code api/} = flink-kubernetes-operator-api/src/main/java/.../operator/api/):
 * <ul>
 * <li>Effective configuration: {@link #operatorConfig} (the operator's
 * ConfigMap defaults) overlaid by spec.flinkConfiguration flattened as 1.13+
 * does (nested keys joined by dots, typed values as text, arrays joined by
 * ';': api/spec/ConfigObjectNode.java:62-94) [op/validation/DefaultValidator.
 * java:100-109]; the stop reads the observe config: the deployed spec's,
 * with the current spec's kubernetes.operator.* keys and savepoint dir
 * [op/config/FlinkConfigManager.java:343-379]. Each dir by its new name or
 * its old one ({@code execution.checkpointing.savepoint-dir} /
 * {@code state.savepoints.dir}, {@code execution.checkpointing.dir} /
 * {@code state.checkpoints.dir}; the new name wins). The stop-with-savepoint
 * targets the effective savepoint dir [op/service/AbstractFlinkService.java:
 * 446-466]; the MiniCluster's other savepoints and its checkpoints stay in
 * its own dirs (Cluster.java). Jobs keep their checkpoints on cancel and
 * failure unless configured otherwise [op/config/FlinkConfigBuilder.java:
 * 168-171].</li>
 * <li>Validation [op/validation/DefaultValidator.java:243-272]: upgradeMode
 * savepoint or last-state without a checkpoint dir, savepoint without a
 * savepoint dir: status.error is the ValidationException as JSON
 * [op/utils/FlinkResourceExceptionUtils.java:46-63,117-139]; never deployed:
 * nothing is, lifecycleState FAILED [api/status/CommonStatus.java:79-82];
 * deployed: the deployed spec stays and is observed, the job runs on
 * [op/controller/FlinkDeploymentController.java:148-152,212-229;
 * op/reconciler/ReconciliationUtils.java:401-430].</li>
 * <li>Drain: the suspend's stop drains when the effective
 * {@code kubernetes.operator.job.drain-on-savepoint-deletion} is true
 * (default false) [op/service/AbstractFlinkService.java:459-465;
 * op/config/KubernetesOperatorConfigOptions.java:674-679];
 * {@link #stopDrained} tells.</li>
 * <li>Snapshot resources: an UPGRADE FlinkStateSnapshot only if the
 * effective {@code kubernetes.operator.snapshot.resource.enabled} (default
 * true) and the operator-level flag hold [op/utils/FlinkStateSnapshotUtils.
 * java:174-178]; the latter is the operator configuration's, forced off when
 * the CRD was missing at the start (recorded by {@link #start}, or forced
 * by {@link #snapshotResourcesOff}) [op/FlinkOperator.java:99-105;
 * op/config/FlinkConfigManager.java:164-171]. Otherwise legacy mode:
 * savepointInfo.lastSavepoint (location, timeStamp, triggerType UPGRADE,
 * formatType) [op/reconciler/deployment/AbstractJobReconciler.java:437-469;
 * api/status/SavepointInfo.java:89-103].</li>
 * <li>A suspend of a job already globally terminal (FAILED, CANCELED or
 * FINISHED: ReconciliationUtils.isJobInTerminalState, op/reconciler/
 * ReconciliationUtils.java:369-372; a CANCELED one uses the status path at
 * once, AbstractJobReconciler.java:308-318; ReconciliationUtils.java:
 * 378-380): SuspendMode NOOP
 * [AbstractJobReconciler.java:181-188,225-235,684-691], after the observer
 * recorded the job's state and its latest checkpoint or savepoint
 * [op/observer/SnapshotObserver.java:91-94,453-469; op/service/
 * CheckpointHistoryWrapper.java:77-94]; jobStatus.state FINISHED
 * [AbstractFlinkService.java:325-361]; lifecycleState SUSPENDED.</li>
 * <li>A running job that ends: FAILED, upgradeSavepointPath its latest
 * checkpoint [SnapshotObserver.java:91-94,453-469]; a spec change redeploys
 * from it [AbstractJobReconciler.java:191-210,402-427].</li>
 * </ul>
 */
public final class Operator implements AutoCloseable {
    public static final String API = "flink.apache.org/v1beta1";
    public static final String FAULT = "gate-proxy.test/fault";
    static final String BUMP = "gate-proxy.test/bump";
    /** The operator's finalizer (JOSDK adds one for a reconciler that cleans up). */
    static final String FINALIZER = "flinkdeployments.flink.apache.org/finalizer";
    static final long POLL_MS = 200, BUMP_MS = 100, BUMP_TICK_MS = 5;

    /** Writes to the API server that record what was done in Flink. */
    interface Recording {
        void write() throws Exception;
    }

    /** The Flink job of a resource, from the kind and colour in its spec.job.args. */
    public interface JobFactory {
        Jobs.Spec spec(String kind, String colour);
    }

    /** The API server, as one user: JSON over HTTPS with a bearer token, trusting one CA. */
    public static final class Kube {
        final HttpClient http;
        final String url, token;
        final ObjectMapper json = new ObjectMapper();

        /** An answer other than 2xx. */
        public static final class Failed extends IOException {
            public final int code;

            Failed(String what, int code, String body) {
                super(what + ": HTTP " + code + " " + body);
                this.code = code;
            }
        }

        public Kube(String url, String token, Path ca) throws Exception {
            this.url = url.replaceAll("/+$", "");
            this.token = token;
            KeyStore ks = KeyStore.getInstance(KeyStore.getDefaultType());
            ks.load(null, null);
            try (InputStream in = Files.newInputStream(ca)) {
                int i = 0;
                for (Certificate c : CertificateFactory.getInstance("X.509").generateCertificates(in))
                    ks.setCertificateEntry("ca-" + i++, c);
            }
            TrustManagerFactory tmf = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            tmf.init(ks);
            SSLContext ssl = SSLContext.getInstance("TLS");
            ssl.init(null, tmf.getTrustManagers(), null);
            http = HttpClient.newBuilder().sslContext(ssl).version(HttpClient.Version.HTTP_1_1)
                    .connectTimeout(Duration.ofSeconds(10)).build();
        }

        HttpRequest.Builder request(String path) {
            return HttpRequest.newBuilder(URI.create(url + path)).timeout(Duration.ofSeconds(30))
                    .header("Authorization", "Bearer " + token).header("Accept", "application/json");
        }

        /** 409 Conflicts this client was answered on FlinkDeployments (its own conditional writes). */
        public final AtomicLong conflicts = new AtomicLong();
        /** Since when the API server does not answer (System.nanoTime()), or 0. */
        final AtomicLong awaySince = new AtomicLong();

        /**
         * METHOD PATH with BODY (JSON, or null) of CONTENT_TYPE; the answer,
         * or Failed. A 429 (as a new CRD's storage answers while it starts,
         * and an API server while it shuts down) or a 503 (one that starts:
         * not every path is installed yet) is tried again after its
         * Retry-After, for up to about 20 tries. An API server that does not
         * answer at all (stopped, restarting) is tried again every 500 ms for
         * up to {@link #AWAY_MS}, as the operator's client does: a POST that
         * did reach it before its connection broke then meets 409
         * AlreadyExists.
         */
        public JsonNode send(String method, String path, String contentType, Object body) throws IOException {
            HttpRequest.Builder b = request(path);
            if (body == null) {
                b.method(method, HttpRequest.BodyPublishers.noBody());
            } else {
                b.header("Content-Type", contentType);
                b.method(method, HttpRequest.BodyPublishers.ofString(
                        body instanceof String ? (String) body : json.writeValueAsString(body)));
            }
            HttpRequest req = b.build();
            long giveUp = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(AWAY_MS);
            try {
                for (int busyAnswers = 0;;) {
                    HttpResponse<String> r;
                    try {
                        r = http.send(req, HttpResponse.BodyHandlers.ofString());
                    } catch (IOException e) {
                        if (System.nanoTime() > giveUp)
                            throw e;
                        away(e);
                        Thread.sleep(500);
                        continue;
                    }
                    back();
                    if ((r.statusCode() == 429 || r.statusCode() == 503) && busyAnswers++ < 20) {
                        long s = r.headers().firstValueAsLong("Retry-After").orElse(1);
                        Thread.sleep(Math.max(1, Math.min(s, 5)) * 1000);
                        continue;
                    }
                    if (r.statusCode() == 409 && path.contains("/flinkdeployments"))
                        conflicts.incrementAndGet();
                    if (r.statusCode() / 100 != 2)
                        throw new Failed(method + " " + path, r.statusCode(), r.body());
                    return r.body().isEmpty() ? json.createObjectNode() : json.readTree(r.body());
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted: " + method + " " + path);
            }
        }

        /** How long {@link #send} keeps trying an API server that does not answer. */
        static final long AWAY_MS = 120_000;

        /** One line when the API server stops answering (the first failure of an outage), */
        void away(IOException e) {
            if (awaySince.compareAndSet(0, System.nanoTime()))
                Handover.say("kube client: the API server does not answer (" + e + "); trying again for up to "
                        + AWAY_MS / 1000 + " s");
        }

        /** and one when it answers again. */
        void back() {
            long t = awaySince.getAndSet(0);
            if (t != 0)
                Handover.say("kube client: the API server answers again, after "
                        + (System.nanoTime() - t) / 1_000_000 + " ms");
        }

        /** GET PATH as text (the API server's /metrics), or Failed. */
        public String text(String path) throws IOException {
            try {
                HttpResponse<String> r = http.send(request(path).setHeader("Accept", "text/plain").GET().build(),
                        HttpResponse.BodyHandlers.ofString());
                if (r.statusCode() / 100 != 2)
                    throw new Failed("GET " + path, r.statusCode(), r.body());
                return r.body();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IOException("interrupted: GET " + path);
            }
        }

        /** GET PATH; null when it is not found. */
        public JsonNode get(String path) throws IOException {
            try {
                return send("GET", path, null, null);
            } catch (Failed f) {
                if (f.code == 404)
                    return null;
                throw f;
            }
        }

        public JsonNode post(String path, Object body) throws IOException {
            return send("POST", path, "application/json", body);
        }

        /** A JSON merge patch (RFC 7386): null removes a field. */
        public JsonNode merge(String path, Object patch) throws IOException {
            return send("PATCH", path, "application/merge-patch+json", patch);
        }

        /** DELETE PATH; false when it was not there. */
        public boolean delete(String path) throws IOException {
            try {
                send("DELETE", path, null, null);
                return true;
            } catch (Failed f) {
                if (f.code == 404)
                    return false;
                throw f;
            }
        }

        /**
         * Follows one object: calls {@code each} with it now and with every
         * version the API server reports after (a watch on its name, renewed
         * from the last version seen when it ends). Until closed.
         */
        public Watch follow(String collection, String name, Consumer<JsonNode> each) {
            Watch w = new Watch(collection, name, each);
            w.setDaemon(true);
            w.start();
            return w;
        }

        public final class Watch extends Thread implements AutoCloseable {
            final String collection, name;
            final Consumer<JsonNode> each;
            volatile boolean closed;
            volatile InputStream stream;

            Watch(String collection, String name, Consumer<JsonNode> each) {
                super("watch " + name);
                this.collection = collection;
                this.name = name;
                this.each = each;
            }

            @Override
            public void run() {
                String rv = null;
                while (!closed) {
                    try {
                        if (rv == null) {
                            JsonNode o = get(collection + "/" + name);
                            if (o != null) {
                                each.accept(o);
                                rv = o.path("metadata").path("resourceVersion").asText();
                            } else {
                                rv = get(collection).path("metadata").path("resourceVersion").asText();
                            }
                        }
                        String q = collection + "?watch=1&allowWatchBookmarks=false&timeoutSeconds=300"
                                + "&fieldSelector=" + URLEncoder.encode("metadata.name=" + name, StandardCharsets.UTF_8)
                                + "&resourceVersion=" + rv;
                        HttpResponse<InputStream> r = http.send(
                                request(q).timeout(Duration.ofSeconds(310)).GET().build(),
                                HttpResponse.BodyHandlers.ofInputStream());
                        stream = r.body();
                        if (r.statusCode() != 200) {
                            stream.close();
                            rv = null; // 410 Gone or so: list again
                            Thread.sleep(100);
                            continue;
                        }
                        try (BufferedReader lines = new BufferedReader(
                                new InputStreamReader(stream, StandardCharsets.UTF_8))) {
                            String line;
                            while (!closed && (line = lines.readLine()) != null) {
                                JsonNode ev = json.readTree(line);
                                if (ev.path("type").asText().equals("ERROR")) {
                                    rv = null;
                                    break;
                                }
                                JsonNode o = ev.path("object");
                                rv = o.path("metadata").path("resourceVersion").asText(rv);
                                if (!ev.path("type").asText().equals("DELETED"))
                                    each.accept(o);
                            }
                        }
                    } catch (Exception e) {
                        if (closed)
                            return;
                        rv = null;
                        try {
                            Thread.sleep(200);
                        } catch (InterruptedException ie) {
                            return;
                        }
                    }
                }
            }

            @Override
            public void close() {
                closed = true;
                InputStream s = stream;
                try {
                    if (s != null)
                        s.close();
                } catch (IOException e) {
                    // closing is all we want of it
                }
                interrupt();
            }
        }
    }

    /** What the stand-in remembers of one resource (by name; uid tells a new one of the same name). */
    static final class Res {
        final String name, uid;
        volatile JobID job;
        volatile boolean busy;
        /**
         * Where the job stood when the last-state fallback took it away (the
         * stale-path fault): what HA metadata keeps for the real operator,
         * here a savepoint nobody is told of. A resume goes on from it.
         */
        volatile String lastState;
        /**
         * What a transition has done in Flink but not yet recorded in the
         * resource (the API server went away meanwhile): the next reconcile
         * records it first, as the operator records a finished savepoint once
         * it can.
         */
        volatile Recording unrecorded;
        /** The job it ran last (after it ended or was stopped): its checkpoint statistics stay readable. */
        volatile JobID lastJob;
        /**
         * Not reconciled again before this (System.nanoTime()), or 0: after a
         * failed reconcile the operator comes back only after its retry
         * backoff or reconcile interval (the stop-timeout and
         * snapshot-create-fault faults hold it, so that the error is seen).
         */
        volatile long notBefore;
        /** The jobs a one-shot fault (fail-before-suspend, fail-after-checkpoint) already failed. */
        final Set<JobID> faulted = ConcurrentHashMap.newKeySet();

        Res(String name, String uid) {
            this.name = name;
            this.uid = uid;
        }
    }

    final Kube kube;
    final String ns, deployments, snapshots;
    final Cluster flink;
    final JobFactory jobs;
    final ObjectMapper json = new ObjectMapper();
    final ScheduledExecutorService timer = Executors.newScheduledThreadPool(2, r -> daemon(r, "operator stand-in"));
    final ExecutorService workers = Executors.newCachedThreadPool(r -> daemon(r, "operator stand-in reconcile"));
    final Map<String, Res> known = new ConcurrentHashMap<>();
    final Map<String, AtomicInteger> savepoints = new ConcurrentHashMap<>();
    final Map<String, String> harnessFaults = new ConcurrentHashMap<>();
    /** The operator's default configuration (its ConfigMap), under each resource's spec.flinkConfiguration. */
    final Map<String, String> operatorConfig = new ConcurrentHashMap<>();
    /** Whether the FlinkStateSnapshot CRD existed when {@link #start} ran (null before). */
    volatile Boolean snapshotCrdAtStart;
    volatile boolean snapshotResourcesForcedOff;
    /** Each stop-with-savepoint: resource name -> whether it drained (the last one per name). */
    final Map<String, Boolean> stopDrained = new ConcurrentHashMap<>();
    /** Each stop-with-savepoint: resource name -> its savepoint (the last one per name). */
    final Map<String, String> lastStop = new ConcurrentHashMap<>();
    /** The resources with the {@code conflict} fault: name -> milliseconds between bumps; when each is due next. */
    final Map<String, Long> conflicted = new ConcurrentHashMap<>(), bumpDue = new ConcurrentHashMap<>();
    final AtomicLong bumps = new AtomicLong();
    final Object submitting = new Object();
    final List<String> events = Collections.synchronizedList(new ArrayList<>());
    volatile boolean closed;

    static Thread daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        return t;
    }

    public Operator(Kube kube, String namespace, Cluster flink, JobFactory jobs) {
        this.kube = kube;
        this.ns = namespace;
        this.deployments = "/apis/" + API + "/namespaces/" + namespace + "/flinkdeployments";
        this.snapshots = "/apis/" + API + "/namespaces/" + namespace + "/flinkstatesnapshots";
        this.flink = flink;
        this.jobs = jobs;
    }

    /**
     * The operator's default configuration (flink-conf of its ConfigMap),
     * replacing any set before: each resource's effective configuration is
     * this overlaid by its flattened spec.flinkConfiguration.
     */
    public Operator operatorConfig(Map<String, String> conf) {
        operatorConfig.clear();
        operatorConfig.putAll(conf);
        return this;
    }

    /**
     * Forces the operator-level snapshot-resource flag off, as the operator
     * does when the FlinkStateSnapshot CRD was missing at its start (whether
     * it was is recorded by {@link #start} anyway).
     */
    public Operator snapshotResourcesOff(boolean off) {
        snapshotResourcesForcedOff = off;
        return this;
    }

    /** Whether the FlinkStateSnapshot CRD existed when {@link #start} ran (null before it ran). */
    public Boolean snapshotCrdAtStart() {
        return snapshotCrdAtStart;
    }

    /** Whether the last stop-with-savepoint of resource NAME drained; null when it had none. */
    public Boolean stopDrained(String name) {
        return stopDrained.get(name);
    }

    /** Polls the FlinkDeployments every 200 ms from now on. */
    public Operator start() {
        // FlinkOperator.java:99-105: the operator looks once, at its start,
        // whether the FlinkStateSnapshot CRD is installed (isCrdInstalled).
        // Not known (the API server does not answer): left on, and a POST
        // answered 404 falls back to legacy mode as before.
        try {
            snapshotCrdAtStart = kube.get("/apis/apiextensions.k8s.io/v1/customresourcedefinitions/"
                    + "flinkstatesnapshots.flink.apache.org") != null;
        } catch (IOException e) {
            snapshotCrdAtStart = true;
            note("could not tell whether the FlinkStateSnapshot CRD is installed: " + e);
        }
        timer.scheduleWithFixedDelay(this::poll, 0, POLL_MS, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::bump, BUMP_TICK_MS, BUMP_TICK_MS, TimeUnit.MILLISECONDS);
        return this;
    }

    /**
     * Sets the faults of resource NAME from the harness (as the annotation
     * would); null or "" clears them, and the hold of a failed reconcile
     * (the next poll reconciles it, as a retry would).
     */
    public void fault(String name, String faults) {
        if (faults == null || faults.isEmpty()) {
            harnessFaults.remove(name);
            Res r = known.get(name);
            if (r != null)
                r.notBefore = 0;
        } else {
            harnessFaults.put(name, faults);
        }
    }

    /** The savepoint of the last stop-with-savepoint of resource NAME (also one the operator then failed to record). */
    public String lastStop(String name) {
        return lastStop.get(name);
    }

    /** Stop-with-savepoints this stand-in has completed for resources named NAME, since it started. */
    public int savepointsTaken(String name) {
        AtomicInteger n = savepoints.get(name);
        return n == null ? 0 : n.get();
    }

    /** The Flink job the stand-in runs for resource NAME, or null. */
    public JobID job(String name) {
        Res r = known.get(name);
        return r == null ? null : r.job;
    }

    /** What the stand-in did, one line per action, in order. */
    public List<String> events() {
        synchronized (events) {
            return new ArrayList<>(events);
        }
    }

    void note(String s) {
        events.add(s);
        Handover.say("operator stand-in: " + s);
    }

    /** Stops polling; the jobs keep running (the harness stops them). */
    @Override
    public void close() throws Exception {
        closed = true;
        timer.shutdownNow();
        workers.shutdownNow();
        timer.awaitTermination(10, TimeUnit.SECONDS);
        workers.awaitTermination(10, TimeUnit.SECONDS);
    }

    // ---- the loop ------------------------------------------------------

    /** One look at every FlinkDeployment (a failure must not end the schedule: noted, tried again). */
    void poll() {
        try {
            if (!closed) {
                pollOnce();
                pollCheckpoints();
            }
        } catch (Exception e) {
            if (!closed)
                note("poll failed, tried again in " + POLL_MS + " ms: " + e);
        }
    }

    /** Each FlinkDeployment that is not being worked on gets a reconcile. */
    void pollOnce() throws IOException {
        JsonNode list = kube.get(deployments);
        if (list == null)
            return; // the CRD is not installed (yet)
        Set<String> seen = new HashSet<>();
        Map<String, Long> conflicts = new HashMap<>();
        for (JsonNode item : list.path("items")) {
            JsonNode meta = item.path("metadata");
            String name = meta.path("name").asText(), uid = meta.path("uid").asText();
            seen.add(name);
            Res r = known.get(name);
            if (r != null && !r.uid.equals(uid)) {
                forget(r); // deleted and created again between two polls
                r = null;
            }
            if (r == null) {
                r = new Res(name, uid);
                known.put(name, r);
            }
            String every = faults(item).get("conflict");
            if (every != null)
                conflicts.put(name, every.isEmpty() ? BUMP_MS : Long.parseLong(every));
            if (r.busy || r.notBefore - System.nanoTime() > 0)
                continue;
            Res res = r;
            res.busy = true;
            workers.submit(() -> {
                try {
                    reconcile(res, item);
                } catch (Exception e) {
                    note(res.name + ": reconcile failed, retried at the next poll: " + e);
                } finally {
                    res.busy = false;
                }
            });
        }
        conflicted.keySet().retainAll(conflicts.keySet());
        conflicted.putAll(conflicts);
        for (Res r : new ArrayList<>(known.values()))
            if (!seen.contains(r.name) && !r.busy)
                forget(r);
    }

    /** Checkpoint snapshots being taken (by name), so each is triggered once. */
    final Set<String> checkpointing = ConcurrentHashMap.newKeySet();

    /**
     * FlinkStateSnapshots of checkpoint type ({@code spec.checkpoint}), as the
     * operator's snapshot controller reconciles them
     * [op/reconciler/snapshot/StateSnapshotReconciler.java:53-96;
     * op/observer/snapshot/StateSnapshotObserver.java:56-113]: a new one
     * (no state, or TRIGGER_PENDING) whose jobReference names a
     * FlinkDeployment with a running job is triggered as one checkpoint of
     * that job and goes IN_PROGRESS (with its triggerId), then COMPLETED with
     * the checkpoint's path and resultTimestamp, or FAILED with the error
     * (backoffLimit 0: no retry); one whose job is missing or not running is
     * ABANDONED. The Flink Kafka source commits its offsets when the
     * checkpoint completes, so the old job's group has then committed what
     * it read. This stand-in finishes the snapshot as soon as the checkpoint
     * does (the operator would see it at its next observe).
     */
    void pollCheckpoints() throws IOException {
        JsonNode list = kube.get(snapshots);
        if (list == null)
            return; // no FlinkStateSnapshot CRD
        for (JsonNode item : list.path("items")) {
            JsonNode spec = item.path("spec");
            String name = item.path("metadata").path("name").asText(),
                    state = item.path("status").path("state").asText("");
            if (!spec.has("checkpoint") || !(state.isEmpty() || state.equals("TRIGGER_PENDING"))
                    || !checkpointing.add(name))
                continue;
            String fd = spec.path("jobReference").path("name").asText();
            Res r = "FlinkDeployment".equals(spec.path("jobReference").path("kind").asText()) ? known.get(fd) : null;
            JobID id = r == null ? null : r.job;
            JobStatus js = null;
            try {
                js = id == null ? null : flink.status(id);
            } catch (Exception e) {
                js = null;
            }
            if (js != JobStatus.RUNNING) {
                snapshotStatus(name, json.createObjectNode().put("state", "ABANDONED")
                        .put("error", "Job " + fd + " is not running"));
                note("checkpoint snapshot " + name + " of " + fd + " ABANDONED: its job is not running");
                continue;
            }
            String trigger = Long.toHexString(System.nanoTime());
            snapshotStatus(name, json.createObjectNode().put("state", "IN_PROGRESS").put("triggerId", trigger)
                    .put("triggerTimestamp", Instant.now().toString()));
            note("checkpoint snapshot " + name + " of " + fd + " IN_PROGRESS");
            JobID job = id;
            workers.submit(() -> {
                try {
                    String path = flink.checkpoint(job);
                    snapshotStatus(name, json.createObjectNode().put("state", "COMPLETED").put("path", path)
                            .put("resultTimestamp", Instant.now().toString()).put("failures", 0));
                    note("checkpoint snapshot " + name + " of " + fd + " COMPLETED: " + path);
                } catch (Exception e) {
                    try {
                        snapshotStatus(name, json.createObjectNode().put("state", "FAILED")
                                .put("error", String.valueOf(e)).put("failures", 1));
                    } catch (IOException again) {
                        e.addSuppressed(again);
                    }
                    note("checkpoint snapshot " + name + " of " + fd + " FAILED: " + e);
                }
                return null;
            });
        }
    }

    void snapshotStatus(String name, ObjectNode status) throws IOException {
        ObjectNode p = json.createObjectNode();
        p.set("status", status);
        kube.merge(snapshots + "/" + name + "/status", p);
    }

    /** A resource gone from the list (deleted without our finalizer, or after it): its job goes too. */
    void forget(Res r) {
        known.remove(r.name, r);
        JobID id = r.job;
        r.job = null;
        if (id != null)
            workers.submit(() -> {
                try {
                    flink.cancel(id);
                    note(r.name + ": gone; its job " + id + " cancelled");
                } catch (Exception e) {
                    note(r.name + ": gone; cancelling its job " + id + " failed: " + e);
                }
            });
    }

    /** The {@code conflict} fault: each resource that has it and is due gets an annotation bumped now. */
    void bump() {
        for (Map.Entry<String, Long> e : conflicted.entrySet()) {
            String name = e.getKey();
            long now = System.nanoTime();
            if (now < bumpDue.getOrDefault(name, now))
                continue;
            bumpDue.put(name, now + TimeUnit.MILLISECONDS.toNanos(e.getValue()));
            try {
                ObjectNode p = json.createObjectNode();
                p.putObject("metadata").putObject("annotations").put(BUMP, Long.toString(bumps.incrementAndGet()));
                kube.merge(deployments + "/" + name, p);
            } catch (Exception gone) {
                // gone meanwhile: the next poll drops it
            }
        }
    }

    /** The faults of a resource: its annotation's and the harness's, as name -> value ("" when it has none). */
    Map<String, String> faults(JsonNode item) {
        Map<String, String> f = new LinkedHashMap<>();
        String s = item.path("metadata").path("annotations").path(FAULT).asText("") + ","
                + harnessFaults.getOrDefault(item.path("metadata").path("name").asText(), "");
        for (String part : s.split(",")) {
            part = part.trim();
            if (part.isEmpty())
                continue;
            int eq = part.indexOf('=');
            f.put(eq < 0 ? part : part.substring(0, eq), eq < 0 ? "" : part.substring(eq + 1));
        }
        return f;
    }

    /** The {@code slow=MS} fault: waits MS before a transition. */
    static void slow(Map<String, String> f) throws InterruptedException {
        String ms = f.get("slow");
        if (ms != null && !ms.isEmpty())
            Thread.sleep(Long.parseLong(ms));
    }

    static String text(JsonNode n) {
        return n == null || n.isMissingNode() || n.isNull() ? null : n.asText();
    }

    // ---- reconcile -----------------------------------------------------

    void reconcile(Res r, JsonNode item) throws Exception {
        JsonNode meta = item.path("metadata"), spec = item.path("spec");
        Map<String, String> f = faults(item);
        if (meta.has("deletionTimestamp")) {
            cleanup(r, item, f);
            return;
        }
        Recording u = r.unrecorded;
        if (u != null) {
            note(r.name + ": recording what was done while the API server did not take it");
            u.write();
            r.unrecorded = null;
            return;
        }
        if (!hasFinalizer(meta)) {
            setFinalizers(item, true); // the resulting event brings the next reconcile, as with JOSDK
            return;
        }
        ObjectNode st = item.path("status").isObject() ? ((ObjectNode) item.path("status")).deepCopy()
                : json.createObjectNode();
        String reconciled = text(st.path("reconciliationStatus").path("lastReconciledSpec"));
        String invalid = validationError(spec, effective(spec));
        if (invalid != null) {
            invalid(r, st, reconciled != null, invalid, f);
            return;
        }
        String want = spec.path("job").path("state").asText("running");
        if (reconciled == null) {
            if (want.equals("suspended")) {
                // Created suspended: not deployed at all, "before the first deployment".
                if (!"CREATED".equals(text(st.path("lifecycleState"))))
                    writeStatus(r, created(st), "created suspended: not deployed (CREATED)");
                return;
            }
            deploy(r, item, st, f, true);
            return;
        }
        JsonNode last = json.readTree(reconciled).path("spec");
        long generation = meta.path("generation").asLong();
        if (generation > st.path("observedGeneration").asLong(-1)) {
            changed(r, item, st, f, last);
            return;
        }
        observe(r, item, st, f);
    }

    /**
     * A spec the validator rejects (FlinkDeploymentController.java:148-152,
     * 212-229; ReconciliationUtils.java:401-430): status.error is the
     * ValidationException as JSON; before the first deployment nothing is
     * deployed (lifecycleState FAILED: CommonStatus.java:79-82), after it the
     * deployed spec stays and is only observed (the job runs on).
     */
    void invalid(Res r, ObjectNode st, boolean deployed, String why, Map<String, String> f) throws Exception {
        String err = errorJson("org.apache.flink.kubernetes.operator.exception.ValidationException", why);
        if (!deployed) {
            if (!err.equals(text(st.path("error")))) {
                created(st);
                st.put("error", err);
                st.put("lifecycleState", "FAILED");
                writeStatus(r, st, "validation error, not deployed: " + why);
            }
            return;
        }
        if (!err.equals(text(st.path("error")))) {
            st.put("error", err);
            writeStatus(r, st, "validation error, the deployed spec stays: " + why);
        }
        observe(r, null, st, f);
    }

    /** A status as the operator leaves it before the first deployment. */
    ObjectNode created(ObjectNode st) {
        st.put("jobManagerDeploymentStatus", "MISSING");
        st.put("lifecycleState", "CREATED");
        st.putNull("error");
        st.putObject("clusterInfo");
        ObjectNode js = st.putObject("jobStatus");
        js.putObject("savepointInfo").put("lastPeriodicSavepointTimestamp", 0).putArray("savepointHistory");
        js.putObject("checkpointInfo").put("lastPeriodicCheckpointTimestamp", 0);
        st.putObject("reconciliationStatus").put("state", "UPGRADING");
        return st;
    }

    /** The spec's job: kind and colour from {@code spec.job.args}. */
    Jobs.Spec jobOf(JsonNode spec) {
        String kind = null, colour = null;
        JsonNode args = spec.path("job").path("args");
        for (int i = 0; i + 1 < args.size(); i++) {
            if (args.get(i).asText().equals("--kind"))
                kind = args.get(i + 1).asText();
            if (args.get(i).asText().equals("--colour"))
                colour = args.get(i + 1).asText();
        }
        if (kind == null || colour == null)
            throw new IllegalArgumentException("spec.job.args names no --kind and --colour: " + args);
        return jobs.spec(kind, colour);
    }

    /** {"spec":SPEC,"resource_metadata":{...}} as one JSON string, as the operator keeps a reconciled spec. */
    String reconciledSpec(JsonNode spec, boolean first) throws IOException {
        ObjectNode o = json.createObjectNode();
        o.set("spec", spec);
        o.putObject("resource_metadata").put("apiVersion", API).put("firstDeployment", first);
        return json.writeValueAsString(o);
    }

    static String now() {
        return Long.toString(System.currentTimeMillis());
    }

    /**
     * Deploys: the first deployment (from {@code initialSavepointPath} when
     * set) or a resume after a suspend (from the status'
     * {@code upgradeSavepointPath}, as the operator resumes).
     */
    void deploy(Res r, JsonNode item, ObjectNode st, Map<String, String> f, boolean first) throws Exception {
        deploy(r, item, st, f, first, first ? text(item.path("spec").path("job").path("initialSavepointPath"))
                : text(st.path("jobStatus").path("upgradeSavepointPath")), false);
    }

    /**
     * Deploys from RESTORE (a savepoint path, or null). {@code lastState}:
     * RESTORE is the job's own last state after a last-state fallback, which
     * the status does not show (upgradeSavepointPath keeps its value).
     */
    void deploy(Res r, JsonNode item, ObjectNode st, Map<String, String> f, boolean first, String restore,
                boolean lastState) throws Exception {
        JsonNode spec = item.path("spec");
        long generation = item.path("metadata").path("generation").asLong();
        boolean allow = spec.path("job").path("allowNonRestoredState").asBoolean(false);
        slow(f);
        // What the operator records: on a first deployment the upgrade mode
        // is savepoint when it starts from one, stateless otherwise.
        ObjectNode rec = spec.deepCopy();
        if (first)
            ((ObjectNode) rec.path("job")).put("upgradeMode", restore != null ? "savepoint" : "stateless");
        ObjectNode rs = st.putObject("reconciliationStatus");
        rs.put("state", "DEPLOYED");
        rs.put("lastReconciledSpec", reconciledSpec(rec, first));
        rs.put("reconciliationTimestamp", System.currentTimeMillis());
        String stable = text(item.path("status").path("reconciliationStatus").path("lastStableSpec"));
        if (stable != null)
            rs.put("lastStableSpec", stable);
        st.put("observedGeneration", generation);
        st.put("jobManagerDeploymentStatus", "DEPLOYING");
        st.putObject("clusterInfo").put("flink-version", "2.2.1").put("state-size", "0");
        ObjectNode js = st.withObjectProperty("jobStatus");
        js.put("jobName", r.name);
        js.put("state", "RECONCILING");
        js.put("startTime", now());
        js.put("updateTime", now());
        if (restore != null && !lastState)
            js.put("upgradeSavepointPath", restore);
        st.put("lifecycleState", "DEPLOYED");
        st.putNull("error");
        st.set("taskManager", json.createObjectNode()
                .put("labelSelector", "component=taskmanager,app=" + r.name).put("replicas", 1));
        if (f.containsKey("start-fail")) {
            writeStatus(r, st, "deploying (start-fail fault)");
            slow(f);
            failed(r, st, "start-fail fault: the job was not submitted");
            return;
        }
        JobID id;
        try {
            Jobs.Spec job = jobOf(spec);
            synchronized (submitting) { // one job graph built at a time
                id = flink.submit(job, restore, allow, jobConf(spec));
            }
        } catch (Exception e) {
            writeStatus(r, st, "deploying");
            failed(r, st, "submitting the job failed: " + e);
            return;
        }
        r.job = id;
        r.lastState = null;
        js.put("jobId", id.toHexString());
        writeStatus(r, st, (first ? "first deployment" : "resumed") + ", job " + id
                + (restore != null ? " from " + (lastState ? "its last state " : "") + restore : " without state")
                + " (DEPLOYED)");
        try {
            flink.awaitRunning(id, Duration.ofSeconds(120));
        } catch (Exception e) {
            failed(r, st, "the job did not start: " + e.getMessage());
            return;
        }
        if (f.containsKey("fail-after-checkpoint") && r.faulted.add(id)) {
            // The job runs, completes a checkpoint of its own and fails
            // before the operator next observes it (its progress check,
            // kubernetes.operator.observer.progress-check.interval, 10 s by
            // default: KubernetesOperatorConfigOptions.java:85-90), so it is
            // never STABLE: the observer then finds it FAILED and records
            // its latest checkpoint (SnapshotObserver.java:91-94,453-469).
            long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (flink.latestCompleted(id) == null && System.nanoTime() < end)
                Thread.sleep(100);
            failJob(r, spec, id, "fail-after-checkpoint");
            r.job = null;
            r.lastJob = id;
            String latest = flink.latestCheckpoint(id);
            if (latest != null)
                js.put("upgradeSavepointPath", latest);
            failed(r, st, "the job ended " + flink.status(id) + ": " + firstLine(flink.cause(id)));
            return;
        }
        slow(f);
        st.put("jobManagerDeploymentStatus", "READY");
        js.put("state", "RUNNING");
        js.put("updateTime", now());
        rs.put("lastStableSpec", rs.path("lastReconciledSpec").asText());
        st.put("lifecycleState", "STABLE");
        writeStatus(r, st, "job " + id + " running (STABLE)");
    }

    /** The job failed or never ran: FAILED, with the error (the JobManager itself is up). */
    void failed(Res r, ObjectNode st, String why) throws IOException {
        st.put("jobManagerDeploymentStatus", "READY");
        st.withObjectProperty("jobStatus").put("state", "FAILED").put("updateTime", now());
        st.put("lifecycleState", "FAILED");
        st.put("error", why.length() > 400 ? why.substring(0, 400) + "..." : why);
        writeStatus(r, st, "FAILED: " + why);
    }

    /** The fields whose change the operator applies without touching the job (@SpecDiff IGNORE). */
    static ObjectNode withoutIgnored(JsonNode spec) {
        ObjectNode s = spec.deepCopy();
        if (s.path("job").isObject()) {
            ObjectNode j = (ObjectNode) s.path("job");
            j.remove(List.of("initialSavepointPath", "upgradeMode", "allowNonRestoredState",
                    "savepointTriggerNonce", "checkpointTriggerNonce"));
        }
        if (s.path("flinkConfiguration").isObject()) {
            // Compared flattened, so nested and dotted forms of one key are
            // the same spec (ReflectiveDiffBuilder.java:88-102, asFlatMap).
            ObjectNode c = s.putObject("flinkConfiguration");
            flatten(spec.path("flinkConfiguration")).forEach((k, v) -> {
                if (!k.startsWith("kubernetes.operator.") && !k.startsWith("job.autoscaler.")
                        && !k.equals("parallelism.default"))
                    c.put(k, v);
            });
        }
        return s;
    }

    /** The spec changed since it was last reconciled (generation > observedGeneration). */
    void changed(Res r, JsonNode item, ObjectNode st, Map<String, String> f, JsonNode last) throws Exception {
        JsonNode spec = item.path("spec");
        long generation = item.path("metadata").path("generation").asLong();
        String was = last.path("job").path("state").asText(), want = spec.path("job").path("state").asText();
        if (withoutIgnored(spec).equals(withoutIgnored(last))) {
            // Only fields the operator ignores (initialSavepointPath, ...):
            // recorded, nothing done.
            ObjectNode rec = spec.deepCopy();
            ((ObjectNode) rec.path("job")).put("upgradeMode", last.path("job").path("upgradeMode").asText());
            st.withObjectProperty("reconciliationStatus").put("lastReconciledSpec", reconciledSpec(rec, false));
            st.put("observedGeneration", generation);
            writeStatus(r, st, "spec change of ignored fields only: recorded, job untouched");
            return;
        }
        boolean failed = "FAILED".equals(text(st.path("lifecycleState")))
                || "FAILED".equals(text(st.path("jobStatus").path("state")));
        if (was.equals("running") && want.equals("suspended")) {
            suspend(r, item, st, f, last);
        } else if (was.equals("suspended") && want.equals("running")) {
            // A resume: from the suspend's savepoint, or after a last-state
            // suspend from the job's last state (HA metadata for the operator).
            String lastState = r.lastState;
            if (last.path("job").path("upgradeMode").asText().equals("last-state") && lastState != null)
                deploy(r, item, st, f, false, lastState, true);
            else
                deploy(r, item, st, f, false);
        } else if (failed && want.equals("running") && r.job == null) {
            // A user's fix of a FAILED deployment (any spec change, e.g.
            // spec.restartNonce): the operator redeploys it from the last
            // savepoint it knows, status.jobStatus.upgradeSavepointPath
            // (the job is terminal: SuspendMode NOOP, then a restore from
            // the status path, AbstractJobReconciler.java:181-210,225-235,
            // 402-427). After a job that checkpointed failed, that is its
            // latest checkpoint (observe, fail-after-checkpoint).
            deploy(r, item, st, f, false);
        } else {
            String why = "the stand-in applies only a change of spec.job.state (" + was + " -> " + want
                    + "), not other spec changes";
            if (!why.equals(text(st.path("error")))) {
                st.put("error", why);
                writeStatus(r, st, why);
            }
        }
    }

    /**
     * running -> suspended with upgradeMode savepoint: stop-with-savepoint
     * (drained when the effective drain-on-savepoint-deletion is true), into
     * the effective savepoint dir; the status changes only when it is done.
     * A job already globally terminal is suspended with SuspendMode NOOP.
     */
    void suspend(Res r, JsonNode item, ObjectNode st, Map<String, String> f, JsonNode last) throws Exception {
        JsonNode spec = item.path("spec");
        long generation = item.path("metadata").path("generation").asLong();
        String mode = spec.path("job").path("upgradeMode").asText();
        if (!mode.equals("savepoint")) {
            String why = "the stand-in suspends with upgradeMode savepoint only, not " + mode;
            if (!why.equals(text(st.path("error")))) {
                st.put("error", why);
                writeStatus(r, st, why);
            }
            return;
        }
        JobID id = r.job;
        if (id != null && f.containsKey("fail-before-suspend") && r.faulted.add(id)
                && flink.status(id) == JobStatus.RUNNING) {
            // The job ends for good as the suspend arrives, with no record
            // needed (after CLEAR_TO_TEARDOWN none flows into OLD's topic):
            // cancelled, CANCELED, globally terminal as FAILED is; the
            // operator's suspend treats both alike (NOOP from the status
            // path: ReconciliationUtils.java:369-380, AbstractJobReconciler.
            // java:225-235,308-318), and the job keeps its checkpoints on
            // cancellation (RETAIN_ON_CANCELLATION, FlinkConfigBuilder.java:
            // 168-171; jobConf).
            flink.cancel(id);
            note(r.name + ": fail-before-suspend fault: job " + id + " " + flink.status(id));
        }
        if (id != null && flink.status(id).isGloballyTerminalState()) {
            noopSuspend(r, item, st, id);
            return;
        }
        if (id == null || flink.status(id) != JobStatus.RUNNING)
            return; // last-state fallback off: the operator waits for a running job
        if (f.containsKey("savepoint-error")) {
            // As a savepoint that timed out: the error, the job still running,
            // the spec unreconciled (so the next poll tries again).
            String why = "SavepointError: stop-with-savepoint of job " + id + " failed (savepoint-error fault)";
            if (!why.equals(text(st.path("error")))) {
                slow(f);
                st.put("error", why);
                writeStatus(r, st, why);
            }
            return;
        }
        slow(f);
        // The status as observed before this reconcile: what a failed
        // reconcile leaves, with the error (FlinkDeploymentController.java:
        // 153-157; ReconciliationUtils.java:443-463).
        ObjectNode before = st.deepCopy();
        // The operator's observe config: the deployed spec's, with the
        // current spec's kubernetes.operator.* keys and savepoint dir
        // (FlinkConfigManager.java:343-379).
        Map<String, String> conf = observeConfig(last, spec);
        ObjectNode js = st.withObjectProperty("jobStatus");
        ObjectNode rec = spec.deepCopy();
        String path;
        boolean stale = f.containsKey("stale-path");
        if (stale) {
            // The silent last-state fallback: the job goes without a new
            // savepoint; upgradeSavepointPath keeps its old value. Its state
            // stays where HA metadata would keep it (here: a savepoint taken
            // just before the cancel, counted nowhere and in no status), for
            // a resume to go on from.
            r.lastState = flink.savepoint(id);
            flink.cancel(id);
            path = text(js.path("upgradeSavepointPath"));
            ((ObjectNode) rec.path("job")).put("upgradeMode", "last-state");
        } else {
            // AbstractFlinkService.java:446-466: stopWithSavepoint(jobId,
            // drain = kubernetes.operator.job.drain-on-savepoint-deletion
            // (KubernetesOperatorConfigOptions.java:674-679, default false),
            // savepoint dir = execution.checkpointing.savepoint-dir).
            boolean drain = flag(conf, DRAIN, false);
            String target = conf(conf, SAVEPOINT_DIR, SAVEPOINT_DIR_OLD);
            try {
                path = flink.stop(id, drain, target);
            } catch (Exception e) {
                String why = "SavepointError: stop-with-savepoint of job " + id + " failed: " + e.getMessage();
                st.put("error", why.length() > 400 ? why.substring(0, 400) + "..." : why);
                writeStatus(r, st, why);
                return;
            }
            stopDrained.put(r.name, drain);
            lastStop.put(r.name, path);
            savepoints.computeIfAbsent(r.name, k -> new AtomicInteger()).incrementAndGet();
            if (f.containsKey("stop-timeout")) {
                // The savepoint completed and the job FINISHED, but the
                // operator's client gave up first (AbstractFlinkService.java:
                // 466-474): UpgradeFailureException, reason SavepointError,
                // recorded as status.error (FlinkDeploymentController.java:
                // 155-157); the spec stays unreconciled. The next reconcile
                // finds the job FINISHED: NOOP (noopSuspend).
                String why = "Timed out stopping the job " + id + " with savepoint, please configure a larger "
                        + "timeout via 'execution.checkpointing.timeout'";
                before.put("error", errorJson(UPGRADE_FAILURE, why, "java.util.concurrent.TimeoutException", null));
                hold(r, f.get("stop-timeout"));
                writeStatus(r, before, "stop-timeout fault: " + why + " (in Flink the job FINISHED with savepoint "
                        + path + ", drain=" + drain + ")");
                return;
            }
        }
        // FlinkStateSnapshotUtils.java:174-178: a snapshot resource only if
        // the effective kubernetes.operator.snapshot.resource.enabled and
        // the operator-level flag are both true.
        boolean snapshot = !stale && snapshotResources(conf);
        if (snapshot && f.containsKey("snapshot-create-fail")) {
            // AbstractJobReconciler.java:437-454: the UPGRADE snapshot is
            // created before upgradeSavepointPath is set; its failure (a
            // KubernetesClientException) fails the reconcile
            // (FlinkDeploymentController.java:163-165, wrapped in a
            // ReconciliationException) and JOSDK records it
            // (updateErrorStatus, ReconciliationUtils.java:443-463) on the
            // status as it was. The job has FINISHED: the next reconcile
            // suspends with NOOP (noopSuspend).
            String k8s = "Failure executing: POST at: " + kube.url + snapshots + ". Message: snapshot-create-fail fault.";
            before.put("error", errorJson("org.apache.flink.kubernetes.operator.exception.ReconciliationException",
                    "io.fabric8.kubernetes.client.KubernetesClientException: " + k8s,
                    "io.fabric8.kubernetes.client.KubernetesClientException", k8s));
            hold(r, f.get("snapshot-create-fail"));
            writeStatus(r, before, "snapshot-create-fail fault: job " + id + " stopped with savepoint " + path
                    + ", creating its FlinkStateSnapshot failed");
            return;
        }
        if (!stale)
            js.put("upgradeSavepointPath", path);
        r.job = null;
        r.lastJob = id;
        js.put("state", "FINISHED");
        js.put("updateTime", now());
        suspended(st, rec, generation);
        // The job is gone: until this is written, the next reconcile
        // writes it first (the snapshot keeps its name: one per savepoint).
        String snapshotName = r.name + "-savepoint-upgrade-" + System.currentTimeMillis(), sp = path;
        Recording record = () -> {
            String made = stale ? null : createSnapshot(r, snapshotName, sp, st, snapshot);
            writeStatus(r, st, stale ? "suspended by the last-state fallback (stale-path fault): job " + id
                    + " cancelled, no savepoint, upgradeSavepointPath still " + sp
                    : "suspended: job " + id + " stopped with savepoint " + sp + " (SUSPENDED"
                            + (made == null ? ", no snapshot resource: savepointInfo.lastSavepoint" : "") + ")");
            if (made != null)
                completeSnapshot(made, sp);
        };
        r.unrecorded = record;
        record.write();
        r.unrecorded = null;
    }

    /**
     * What a suspend records (ReconciliationUtils.java:120-188 by
     * updateStatusForDeployedSpec, AbstractJobReconciler.java:171-179):
     * error cleared, DEPLOYED, the suspended spec as lastReconciledSpec and
     * lastStableSpec, observedGeneration; lifecycleState SUSPENDED
     * (CommonStatus.java:92-96).
     */
    void suspended(ObjectNode st, ObjectNode rec, long generation) throws IOException {
        ObjectNode rs = st.withObjectProperty("reconciliationStatus");
        String reconciled = reconciledSpec(rec, false);
        rs.put("state", "DEPLOYED");
        rs.put("lastReconciledSpec", reconciled);
        rs.put("lastStableSpec", reconciled); // a suspended spec counts as stable
        rs.put("reconciliationTimestamp", System.currentTimeMillis());
        st.put("observedGeneration", generation);
        st.put("lifecycleState", "SUSPENDED");
        st.putNull("error");
    }

    /**
     * The suspend of a job already globally terminal (FAILED, FINISHED):
     * first the observer (JobStatusObserver.java:327-336; SnapshotObserver.
     * java:91-94,453-469) records its state and, as upgradeSavepointPath,
     * its latest completed checkpoint or savepoint from the checkpoint
     * statistics (AbstractFlinkService.java:584-613, CheckpointHistoryWrapper.
     * java:77-94), patched before the reconcile (FlinkDeploymentController.
     * java:153); then getJobUpgrade answers savepoint(true), SuspendMode NOOP
     * (AbstractJobReconciler.java:225-235, 684-691), whatever the last-state
     * fallback says: no stop, no snapshot resource (setUpgradeSavepointPath
     * runs only for a path the cancel returned, ApplicationReconciler.java:
     * 231-240); cancelJob sets jobStatus.state FINISHED for every mode
     * (AbstractFlinkService.java:325-361); then the status of a suspend.
     */
    void noopSuspend(Res r, JsonNode item, ObjectNode st, JobID id) throws Exception {
        long generation = item.path("metadata").path("generation").asLong();
        JobStatus s = flink.status(id);
        ObjectNode js = st.withObjectProperty("jobStatus");
        if (!s.name().equals(text(js.path("state"))))
            js.put("updateTime", now());
        js.put("state", s.name());
        String latest = flink.latestCheckpoint(id);
        if (latest != null)
            js.put("upgradeSavepointPath", latest);
        if (s == JobStatus.FAILED) {
            st.put("lifecycleState", "FAILED");
            st.put("error", "the job ended FAILED: " + firstLine(flink.cause(id)));
        }
        writeStatus(r, st, "observed job " + id + " " + s + "; latest checkpoint or savepoint " + latest);
        String path = text(js.path("upgradeSavepointPath"));
        if (path == null)
            path = text(js.path("savepointInfo").path("lastSavepoint").path("location"));
        if (path == null) {
            // AbstractJobReconciler.java:227-231.
            st.put("error", errorJson(UPGRADE_FAILURE, "Job is in terminal state but last checkpoint is unknown, "
                    + "possibly due to an unrecoverable restore error. Manual restore required."));
            writeStatus(r, st, "cannot suspend: the job is terminal and no checkpoint is known");
            return;
        }
        r.job = null;
        r.lastJob = id;
        js.put("state", "FINISHED");
        js.put("updateTime", now());
        ObjectNode rec = item.path("spec").deepCopy();
        ((ObjectNode) rec.path("job")).put("upgradeMode", "savepoint");
        suspended(st, rec, generation);
        writeStatus(r, st, "suspended with SuspendMode NOOP: job " + id + " was already " + s
                + ", no stop, no snapshot; upgradeSavepointPath " + text(js.path("upgradeSavepointPath"))
                + " (SUSPENDED)");
    }

    /**
     * Fails the Flink job of a resource (the next record it reads throws:
     * {@link Jobs#failNext}) and waits until it has ended; the restart
     * strategy is none, so it ends FAILED.
     */
    void failJob(Res r, JsonNode spec, JobID id, String fault) throws Exception {
        if (spec == null)
            return; // an invalid spec: the fault waits for a valid one
        String job = jobOf(spec).txnPrefix;
        Jobs.failNext(job);
        try {
            JobStatus s = flink.awaitEnded(id, Duration.ofSeconds(60));
            note(r.name + ": " + fault + " fault: job " + id + " " + s);
        } finally {
            Jobs.recover(job);
        }
    }

    /** The {@code FAULT=MS} hold of a failed reconcile (3 s without MS). */
    static void hold(Res r, String ms) {
        r.notBefore = System.nanoTime()
                + TimeUnit.MILLISECONDS.toNanos(ms == null || ms.isEmpty() ? 3000 : Long.parseLong(ms));
    }

    /**
     * The UPGRADE snapshot the operator records for a suspend's savepoint
     * when snapshot resources are ENABLED; its name, or null in legacy mode
     * (disabled, or the CRD not found): the path goes to
     * savepointInfo.lastSavepoint instead (AbstractJobReconciler.java:
     * 456-468, 1.12+; SavepointInfo.java:89-103).
     */
    String createSnapshot(Res r, String name, String path, ObjectNode st, boolean enabled) throws IOException {
        if (!enabled) {
            legacySavepoint(st, path);
            return null;
        }
        ObjectNode o = json.createObjectNode();
        o.put("apiVersion", API).put("kind", "FlinkStateSnapshot");
        ObjectNode meta = o.putObject("metadata");
        meta.put("name", name).put("namespace", ns);
        meta.putObject("labels").put("snapshot.trigger-type", "UPGRADE").put("snapshot.type", "SAVEPOINT")
                .put("snapshot.state", "COMPLETED").put("job-reference.kind", "FlinkDeployment")
                .put("job-reference.name", r.name);
        ObjectNode spec = o.putObject("spec");
        spec.putObject("savepoint").put("path", path).put("alreadyExists", true).put("disposeOnDelete", false)
                .put("formatType", "CANONICAL");
        spec.putObject("jobReference").put("kind", "FlinkDeployment").put("name", r.name);
        try {
            kube.post(snapshots, o);
            return name;
        } catch (Kube.Failed e) {
            if (e.code == 409)
                return name; // made by this POST, tried again after its connection broke
            if (e.code != 404)
                throw e;
            legacySavepoint(st, path);
            return null;
        }
    }

    /** savepointInfo.lastSavepoint and savepointHistory, as the legacy mode records an UPGRADE savepoint. */
    void legacySavepoint(ObjectNode st, String path) {
        ObjectNode sp = st.withObjectProperty("jobStatus").withObjectProperty("savepointInfo");
        ObjectNode lastSp = json.createObjectNode().put("location", path)
                .put("timeStamp", System.currentTimeMillis()).put("triggerType", "UPGRADE")
                .put("formatType", "CANONICAL");
        sp.set("lastSavepoint", lastSp);
        sp.withArrayProperty("savepointHistory").add(lastSp.deepCopy());
    }

    /** The snapshot's own reconcile: COMPLETED with the path (it already exists). */
    void completeSnapshot(String name, String path) throws IOException {
        ObjectNode p = json.createObjectNode();
        p.putObject("status").put("state", "COMPLETED").put("path", path)
                .put("resultTimestamp", Instant.now().toString()).put("failures", 0).putNull("error");
        kube.merge(snapshots + "/" + name + "/status", p);
        note("snapshot " + name + " COMPLETED");
    }

    /**
     * Nothing changed in the spec: does the job still run? One that ended is
     * FAILED, and the observer records its latest checkpoint as
     * upgradeSavepointPath (SnapshotObserver.java:91-94,453-469), which a
     * fix then redeploys from. The {@code fail-after-checkpoint} fault fails
     * the job once it has completed a checkpoint of its own (not the
     * savepoint it was restored from).
     */
    void observe(Res r, JsonNode item, ObjectNode st, Map<String, String> f) throws Exception {
        JobID id = r.job;
        if (id == null || !"RUNNING".equals(text(st.path("jobStatus").path("state"))))
            return;
        JobStatus s = flink.status(id);
        if (s == JobStatus.RUNNING && f.containsKey("fail-after-checkpoint") && !r.faulted.contains(id)
                && flink.latestCompleted(id) != null) {
            r.faulted.add(id);
            failJob(r, item == null ? null : item.path("spec"), id, "fail-after-checkpoint");
            s = flink.status(id);
        }
        if (s.isGloballyTerminalState()) {
            r.job = null;
            r.lastJob = id;
            String latest = flink.latestCheckpoint(id);
            if (latest != null)
                st.withObjectProperty("jobStatus").put("upgradeSavepointPath", latest);
            failed(r, st, "the job ended " + s + ": " + firstLine(flink.cause(id)));
        }
    }

    // ---- configuration and validation ----------------------------------

    static final String SAVEPOINT_DIR = "execution.checkpointing.savepoint-dir",
            SAVEPOINT_DIR_OLD = "state.savepoints.dir", CHECKPOINT_DIR = "execution.checkpointing.dir",
            CHECKPOINT_DIR_OLD = "state.checkpoints.dir",
            DRAIN = "kubernetes.operator.job.drain-on-savepoint-deletion",
            SNAPSHOT_RESOURCES = "kubernetes.operator.snapshot.resource.enabled",
            RETENTION = "execution.checkpointing.externalized-checkpoint-retention",
            UPGRADE_FAILURE = "org.apache.flink.kubernetes.operator.exception.UpgradeFailureException";

    /**
     * spec.flinkConfiguration as the operator reads it since 1.13
     * (ConfigObjectNode.java:62-94, asFlatMap): nested objects joined with
     * dots, an array as its elements' text joined with ';', any other value
     * (true, 10, "x") as its text.
     */
    public static Map<String, String> flatten(JsonNode conf) {
        Map<String, String> out = new LinkedHashMap<>();
        flatten(conf, "", out);
        return out;
    }

    static void flatten(JsonNode n, String key, Map<String, String> out) {
        if (n == null || n.isMissingNode())
            return;
        if (n.isObject()) {
            n.fields().forEachRemaining(e -> flatten(e.getValue(), key.isEmpty() ? e.getKey()
                    : key + "." + e.getKey(), out));
        } else if (n.isArray()) {
            List<String> parts = new ArrayList<>();
            n.forEach(x -> parts.add(x.asText()));
            out.put(key, String.join(";", parts));
        } else {
            out.put(key, n.asText());
        }
    }

    /**
     * The effective configuration of SPEC: the operator's default
     * configuration overlaid by its flattened spec.flinkConfiguration
     * (DefaultValidator.java:100-109; FlinkConfigManager.java:330-334).
     */
    public Map<String, String> effective(JsonNode spec) {
        Map<String, String> c = new HashMap<>(operatorConfig);
        c.putAll(flatten(spec.path("flinkConfiguration")));
        return c;
    }

    /**
     * The observe configuration (FlinkConfigManager.java:343-379): the
     * deployed spec's effective configuration, with the current spec's
     * kubernetes.operator.* (and job.autoscaler.*) keys and its savepoint dir.
     */
    Map<String, String> observeConfig(JsonNode deployed, JsonNode current) {
        Map<String, String> c = effective(deployed), cur = flatten(current.path("flinkConfiguration"));
        cur.forEach((k, v) -> {
            if (k.startsWith("kubernetes.operator.") || k.startsWith("job.autoscaler."))
                c.put(k, v);
        });
        String sp = conf(cur, SAVEPOINT_DIR, SAVEPOINT_DIR_OLD);
        if (sp != null)
            c.put(SAVEPOINT_DIR, sp);
        return c;
    }

    /**
     * KEY, or its deprecated name OLD when KEY is not set, as Flink's
     * Configuration reads an option with a deprecated key (the new name wins
     * when both are set).
     */
    public static String conf(Map<String, String> c, String key, String old) {
        return c.containsKey(key) ? c.get(key) : c.get(old);
    }

    static boolean flag(Map<String, String> c, String key, boolean dflt) {
        String v = c.get(key);
        return v == null ? dflt : Boolean.parseBoolean(v.trim());
    }

    /**
     * Snapshot resources on for a resource of configuration C: its own flag
     * and the operator-level one (FlinkStateSnapshotUtils.java:174-178); the
     * latter is the operator configuration's, forced off when the CRD was
     * missing at the operator's start (FlinkConfigManager.java:164-171).
     */
    boolean snapshotResources(Map<String, String> c) {
        return flag(c, SNAPSHOT_RESOURCES, true) && operatorSnapshotResources();
    }

    public boolean operatorSnapshotResources() {
        return !snapshotResourcesForcedOff && !Boolean.FALSE.equals(snapshotCrdAtStart)
                && flag(operatorConfig, SNAPSHOT_RESOURCES, true);
    }

    /**
     * DefaultValidator.validateJobSpec (DefaultValidator.java:243-272), on
     * the effective configuration: upgradeMode savepoint or last-state needs
     * a checkpoint dir; savepoint (or a savepointTriggerNonce) a savepoint
     * dir. Its message, or null.
     */
    public static String validationError(JsonNode spec, Map<String, String> c) {
        JsonNode job = spec.path("job");
        if (!job.isObject())
            return null;
        String mode = job.path("upgradeMode").asText("stateless");
        if (!mode.equals("stateless") && blank(conf(c, CHECKPOINT_DIR, CHECKPOINT_DIR_OLD)))
            return "Checkpoint directory[" + CHECKPOINT_DIR
                    + "] must be defined for last-state and savepoint upgrade modes";
        if (blank(conf(c, SAVEPOINT_DIR, SAVEPOINT_DIR_OLD))) {
            if (mode.equals("savepoint"))
                return "Job could not be upgraded with savepoint while config key[" + SAVEPOINT_DIR
                        + "] is not set";
            if (job.hasNonNull("savepointTriggerNonce"))
                return "Savepoint could not be manually triggered for the running job while config key["
                        + SAVEPOINT_DIR + "] is not set";
        }
        return null;
    }

    static boolean blank(String s) {
        return s == null || s.isBlank();
    }

    /**
     * status.error as the operator writes an exception
     * (FlinkResourceExceptionUtils.java:46-63,117-139; FlinkResourceException.
     * java: null fields left out, no stack trace by default): TYPE and
     * MESSAGE, then its causes as (type, message or null) pairs.
     */
    String errorJson(String type, String message, String... causes) {
        ObjectNode e = json.createObjectNode().put("type", type).put("message", message);
        e.putObject("additionalMetadata");
        ArrayNode list = e.putArray("throwableList");
        for (int i = 0; i + 1 < causes.length; i += 2) {
            ObjectNode c = list.addObject().put("type", causes[i]);
            if (causes[i + 1] != null)
                c.put("message", causes[i + 1]);
            c.putObject("additionalMetadata");
        }
        return e.toString();
    }

    /**
     * What the stand-in sets in the job's own configuration: checkpoints kept
     * on cancel and failure, as the operator sets by default
     * (FlinkConfigBuilder.java:168-171), unless the effective configuration
     * says otherwise.
     */
    Map<String, String> jobConf(JsonNode spec) {
        return Map.of(RETENTION, effective(spec).getOrDefault(RETENTION, "RETAIN_ON_CANCELLATION"));
    }

    static String firstLine(String s) {
        int i = s.indexOf('\n');
        return i < 0 ? s : s.substring(0, i);
    }

    /** Deleted (deletionTimestamp set): the job goes, then our finalizer. */
    void cleanup(Res r, JsonNode item, Map<String, String> f) throws Exception {
        slow(f);
        JobID id = r.job;
        r.job = null;
        if (id != null && !flink.status(id).isGloballyTerminalState()) {
            flink.cancel(id);
            note(r.name + ": deleted; its job " + id + " cancelled");
        }
        if (hasFinalizer(item.path("metadata")))
            setFinalizers(item, false);
        known.remove(r.name, r);
        note(r.name + ": deleted; finalizer removed, forgotten");
    }

    static boolean hasFinalizer(JsonNode meta) {
        for (JsonNode n : meta.path("finalizers"))
            if (n.asText().equals(FINALIZER))
                return true;
        return false;
    }

    /** Adds or removes our finalizer, on the version read (409 if it changed: the next poll tries again). */
    void setFinalizers(JsonNode item, boolean add) throws IOException {
        JsonNode meta = item.path("metadata");
        ObjectNode p = json.createObjectNode();
        ObjectNode m = p.putObject("metadata");
        m.put("resourceVersion", meta.path("resourceVersion").asText());
        ArrayNode fin = m.putArray("finalizers");
        for (JsonNode n : meta.path("finalizers"))
            if (!n.asText().equals(FINALIZER))
                fin.add(n.asText());
        if (add)
            fin.add(FINALIZER);
        kube.merge(deployments + "/" + meta.path("name").asText(), p);
    }

    /** The whole status, through /status (merge patch: the fields set to null go). */
    /**
     * status.conditions as 1.15 writes them at every reconcile of a
     * resource in application mode that has a reconciled spec
     * (FlinkDeploymentController.java:168, FlinkDeploymentStatus.java:81-108,
     * ConditionsUtils.java:62-69 and 112-124): one condition of type
     * Running, "True" only while the job is RUNNING, its reason the job
     * state in CamelCase, its lastTransitionTime kept while its status
     * stays the same.
     */
    static void runningCondition(ObjectNode st) {
        if (st.path("reconciliationStatus").path("lastReconciledSpec").asText("").isEmpty())
            return;
        String state = st.path("jobStatus").path("state").asText("");
        if (state.isEmpty())
            return;
        String status = "RUNNING".equals(state) ? "True" : "False";
        JsonNode was = null;
        for (JsonNode c : st.path("conditions"))
            if ("Running".equals(c.path("type").asText()))
                was = c;
        String since = was != null && status.equals(was.path("status").asText())
                ? was.path("lastTransitionTime").asText() : Instant.now().toString();
        ArrayNode cs = st.putArray("conditions");
        cs.addObject().put("type", "Running").put("status", status)
                .put("reason", state.charAt(0) + state.substring(1).toLowerCase(Locale.ROOT))
                .put("message", "Job status " + state).put("lastTransitionTime", since);
    }

    void writeStatus(Res r, ObjectNode st, String what) throws IOException {
        runningCondition(st);
        ObjectNode p = json.createObjectNode();
        p.set("status", st);
        kube.merge(deployments + "/" + r.name + "/status", p);
        note(r.name + ": " + what);
    }
}
