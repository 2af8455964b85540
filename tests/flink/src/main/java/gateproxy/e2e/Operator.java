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
 * Conflict).
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

    /** Polls the FlinkDeployments every 200 ms from now on. */
    public Operator start() {
        timer.scheduleWithFixedDelay(this::poll, 0, POLL_MS, TimeUnit.MILLISECONDS);
        timer.scheduleWithFixedDelay(this::bump, BUMP_TICK_MS, BUMP_TICK_MS, TimeUnit.MILLISECONDS);
        return this;
    }

    /** Sets the faults of resource NAME from the harness (as the annotation would); null or "" clears them. */
    public void fault(String name, String faults) {
        if (faults == null || faults.isEmpty())
            harnessFaults.remove(name);
        else
            harnessFaults.put(name, faults);
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
            if (!closed)
                pollOnce();
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
            if (r.busy)
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
        observe(r, st);
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
                id = flink.submit(job, restore, allow);
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
            ObjectNode c = (ObjectNode) s.path("flinkConfiguration");
            List<String> drop = new ArrayList<>();
            c.fieldNames().forEachRemaining(k -> {
                if (k.startsWith("kubernetes.operator.") || k.startsWith("job.autoscaler.")
                        || k.equals("parallelism.default"))
                    drop.add(k);
            });
            c.remove(drop);
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
            suspend(r, item, st, f);
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
            // savepoint it knows, status.jobStatus.upgradeSavepointPath.
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

    /** running -> suspended: stop-with-savepoint (no drain); the status changes only when it is done. */
    void suspend(Res r, JsonNode item, ObjectNode st, Map<String, String> f) throws Exception {
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
            try {
                path = flink.stop(id, false);
            } catch (Exception e) {
                String why = "SavepointError: stop-with-savepoint of job " + id + " failed: " + e.getMessage();
                st.put("error", why.length() > 400 ? why.substring(0, 400) + "..." : why);
                writeStatus(r, st, why);
                return;
            }
            savepoints.computeIfAbsent(r.name, k -> new AtomicInteger()).incrementAndGet();
            js.put("upgradeSavepointPath", path);
        }
        r.job = null;
        js.put("state", "FINISHED");
        js.put("updateTime", now());
        ObjectNode rs = st.withObjectProperty("reconciliationStatus");
        String reconciled = reconciledSpec(rec, false);
        rs.put("state", "DEPLOYED");
        rs.put("lastReconciledSpec", reconciled);
        rs.put("lastStableSpec", reconciled); // a suspended spec counts as stable
        rs.put("reconciliationTimestamp", System.currentTimeMillis());
        st.put("observedGeneration", generation);
        st.put("lifecycleState", "SUSPENDED");
        st.putNull("error");
        // The job is gone: until this is written, the next reconcile
        // writes it first (the snapshot keeps its name: one per savepoint).
        String snapshotName = r.name + "-savepoint-upgrade-" + System.currentTimeMillis(), sp = path;
        Recording record = () -> {
            String snapshot = stale ? null : createSnapshot(r, snapshotName, sp, st);
            writeStatus(r, st, stale ? "suspended by the last-state fallback (stale-path fault): job " + id
                    + " cancelled, no savepoint, upgradeSavepointPath still " + sp
                    : "suspended: job " + id + " stopped with savepoint " + sp + " (SUSPENDED)");
            if (snapshot != null)
                completeSnapshot(snapshot, sp);
        };
        r.unrecorded = record;
        record.write();
        r.unrecorded = null;
    }

    /**
     * The UPGRADE snapshot the operator records for a suspend's savepoint;
     * its name, or null when the FlinkStateSnapshot CRD is not there (the
     * operator's legacy mode: the path goes to savepointInfo instead).
     */
    String createSnapshot(Res r, String name, String path, ObjectNode st) throws IOException {
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
            ObjectNode sp = st.withObjectProperty("jobStatus").withObjectProperty("savepointInfo");
            ObjectNode lastSp = json.createObjectNode().put("location", path)
                    .put("timeStamp", System.currentTimeMillis()).put("triggerType", "UPGRADE")
                    .put("formatType", "CANONICAL");
            sp.set("lastSavepoint", lastSp);
            sp.withArrayProperty("savepointHistory").add(lastSp.deepCopy());
            return null;
        }
    }

    /** The snapshot's own reconcile: COMPLETED with the path (it already exists). */
    void completeSnapshot(String name, String path) throws IOException {
        ObjectNode p = json.createObjectNode();
        p.putObject("status").put("state", "COMPLETED").put("path", path)
                .put("resultTimestamp", Instant.now().toString()).put("failures", 0).putNull("error");
        kube.merge(snapshots + "/" + name + "/status", p);
        note("snapshot " + name + " COMPLETED");
    }

    /** Nothing changed in the spec: does the job still run? */
    void observe(Res r, ObjectNode st) throws Exception {
        JobID id = r.job;
        if (id == null || !"RUNNING".equals(text(st.path("jobStatus").path("state"))))
            return;
        JobStatus s = flink.status(id);
        if (s.isGloballyTerminalState()) {
            r.job = null;
            failed(r, st, "the job ended " + s + ": " + firstLine(flink.cause(id)));
        }
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
    void writeStatus(Res r, ObjectNode st, String what) throws IOException {
        ObjectNode p = json.createObjectNode();
        p.set("status", st);
        kube.merge(deployments + "/" + r.name + "/status", p);
        note(r.name + ": " + what);
    }
}
