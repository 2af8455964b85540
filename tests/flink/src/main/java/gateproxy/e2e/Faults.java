package gateproxy.e2e;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.common.TopicPartition;

import com.fasterxml.jackson.databind.JsonNode;

/**
 * The orchestrated exact path under faults: {@code gate-proxy handover}
 * hands one real Flink job through twelve hops (blue -> green -> blue ...), each
 * with one fault of the operator or of the API server, the way
 * {@link Orchestrated} sets the scene (the real kube-apiserver fixture, the
 * {@link Operator} stand-in, one gate-proxy, the job run uninterrupted
 * beside it for reference).
 *
 * <pre>
 *   Faults --bootstrap HOST:PORT --bin gate-proxy --work DIR --run NAME
 *          --namespace NS --kubeconfig PROXY_KC
 *          --api URL --token ADMIN_TOKEN --ca CA_FILE
 *          --apiserver tests/k8s/apiserver.sh [--job running] [--outage S]
 * </pre>
 *
 * The hops, each stopped by its fault with its error, then run again once
 * the fault is cleared:
 * <ol>
 * <li>{@code savepoint-error} on OLD: stops at suspend; OLD's job still runs;</li>
 * <li>{@code start-fail} on NEW: stops at start; the records at or after T
 * wait in NEW's topic; fixed by a new {@code spec.restartNonce}, NEW then
 * starts from the savepoint the first run recorded;</li>
 * <li>{@code stale-path} on OLD: the operator took no new savepoint; OLD is
 * resumed (spec.job.state running) as the command says, the rerun suspends
 * it again, with the same T;</li>
 * <li>{@code slow=15000} on OLD with {@code --timeout 5}: the suspend takes
 * too long; the rerun waits for it, one savepoint in all;</li>
 * <li>{@code conflict} on both: the command absorbs the 409s;</li>
 * <li>the API server away for {@code --outage} seconds (default 40) while the
 * command waits at suspend ({@code apiserver.sh restart}): it stops after
 * its 30 s of grace; the proxy keeps routing, the stand-in finishes the
 * suspend once it can write again, the rerun completes;</li>
 * <li>{@code drain}: OLD's spec.flinkConfiguration says
 * {@code kubernetes.operator.job.drain-on-savepoint-deletion: "true"}: the
 * command refuses before anything changes (no cutoff, OLD still running, no
 * savepoint); set to "false", the rerun completes (what a drained savepoint
 * does to a window job: Controls' drain control);</li>
 * <li>{@code stop-timeout} on OLD: the stop completes in Flink but the
 * operator reports the UpgradeFailureException "Timed out stopping the
 * job ..."; cleared, the operator suspends the stopped job with NOOP, no
 * UPGRADE FlinkStateSnapshot; the rerun takes the stop's savepoint;</li>
 * <li>{@code snapshot-create-fail} on OLD: the same, the error that of the
 * FlinkStateSnapshot's create;</li>
 * <li>{@code fail-before-suspend} on OLD: its job ends (CANCELED) as the
 * suspend arrives, the operator suspends with NOOP from its latest
 * checkpoint: the command names that path and wants it confirmed; the
 * rerun with {@code --savepoint PATH} completes;</li>
 * <li>{@code snapshots-off}: the operator-wide snapshot resources off
 * (savepointInfo.lastSavepoint, no FlinkStateSnapshot): the first run
 * completes;</li>
 * <li>{@code fail-after-checkpoint} on NEW: NEW fails after its first
 * checkpoint; fixed by a new spec.restartNonce it is redeployed from that
 * checkpoint, and the rerun completes.</li>
 * </ol>
 * No command is killed (flink.handover does that). Then, as in
 * {@link Orchestrated}: the output equals the uninterrupted job's, each
 * source record is in exactly one colour topic (its colour flips at each
 * cutoff it is at or after), the proxy's counts match, each new job started
 * at the first record of its era. Prints {@code e2e: path=handover-faults ...},
 * one {@code e2e-fault:} line per fault; exits 0 only if every check held.
 */
public final class Faults {
    static final int HOPS = 12;
    /** --timeout of a run that is meant to finish (as flink.handover's). */
    static final int TIMEOUT_S = 150;
    /** How often the conflict fault bumps each resource. */
    static final long BUMP_MS = 20;

    final Orchestrated o;
    final Jobs.Kind k;
    final String apiserver, src;
    final int outageS;
    final List<String> faultLines = new ArrayList<>(), handovers = new ArrayList<>();
    Operator op;
    Cluster flink;
    JobID ref;
    /** What the hop's check expects: the stand-in's savepoints of OLD, the path NEW runs from (null: the line's). */
    int wantTaken;
    String newFrom;

    Faults(Map<String, String> args) throws Exception {
        k = Jobs.Kind.valueOf(args.getOrDefault("job", "running").toUpperCase());
        o = new Orchestrated(args, List.of(k));
        apiserver = o.need("apiserver");
        outageS = Integer.parseInt(args.getOrDefault("outage", "40"));
        src = o.source.get(k);
    }

    static void say(String s) {
        Handover.say(s);
    }

    static String other(String colour) {
        return colour.equals("blue") ? "green" : "blue";
    }

    /** A check: when it does not hold, a problem (the run goes on, and fails at the end). */
    void expect(boolean ok, String what) {
        if (!ok) {
            o.problems.add(what);
            say("problem: " + what);
        }
    }

    // ---- the command ---------------------------------------------------

    /** One run of {@code gate-proxy handover}: its exit code, final line, first line of stderr, stderr, stdout. */
    record Run(int exit, String line, String firstErr, String err, long ms, String out) {
        boolean says(String s) {
            return err.contains(s);
        }

        /** In its stdout or its stderr. */
        boolean said(String s) {
            return err.contains(s) || out.contains(s);
        }
    }

    /** A run under way, with where its output starts in the hop's files. */
    final class Started {
        final Process p;
        final Path out, err;
        final long outMark, errMark, t0 = System.nanoTime();

        Started(int hop, String from, String to, int timeoutS, String... extra) throws Exception {
            out = o.work.resolve("handover-" + hop + ".out");
            err = o.work.resolve("handover-" + hop + ".err");
            List<String> cmd = new ArrayList<>(List.of(o.bin, "handover", "--k8s", src, "--namespace", o.ns,
                    "--kubeconfig", o.kubeconfig, "--from", from, "--to", to, "--timeout",
                    Integer.toString(timeoutS)));
            cmd.addAll(List.of(extra));
            String head = "=== " + String.join(" ", cmd) + "\n";
            for (Path f : List.of(out, err))
                Files.writeString(f, head, StandardCharsets.UTF_8, StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            outMark = Files.size(out);
            errMark = Files.size(err);
            p = new ProcessBuilder(cmd).redirectOutput(ProcessBuilder.Redirect.appendTo(out.toFile()))
                    .redirectError(ProcessBuilder.Redirect.appendTo(err.toFile())).start();
        }

        /** Waits for its exit (at most MAX: then it is killed and this fails). */
        Run end(Duration max) throws Exception {
            if (!p.waitFor(max.toMillis(), TimeUnit.MILLISECONDS)) {
                p.destroyForcibly().waitFor();
                throw new IllegalStateException("gate-proxy handover still running after " + max);
            }
            long ms = (System.nanoTime() - t0) / 1_000_000;
            String stdout = since(out, outMark), stderr = since(err, errMark), line = null, first = "";
            for (String l : stdout.split("\n"))
                if (l.startsWith("handover: from="))
                    line = l.trim();
            for (String l : stderr.split("\n"))
                if (!l.isBlank()) {
                    first = l.trim();
                    break;
                }
            return new Run(p.exitValue(), line, first, stderr, ms, stdout);
        }
    }

    static String since(Path f, long mark) throws Exception {
        byte[] all = Files.readAllBytes(f);
        return new String(all, (int) mark, all.length - (int) mark, StandardCharsets.UTF_8);
    }

    Run handover(int hop, String from, String to, int timeoutS, String... extra) throws Exception {
        Run r = new Started(hop, from, to, timeoutS, extra).end(Duration.ofSeconds(300));
        say("hop " + hop + ": gate-proxy handover --timeout " + timeoutS
                + (extra.length == 0 ? "" : " " + String.join(" ", extra)) + " exited " + r.exit + " after " + r.ms
                + " ms" + (r.exit == 0 ? ": " + r.line : ": " + r.firstErr));
        return r;
    }

    /** The first run must stop: exit 1, its reason saying each of WANT, at step STEP of the map. */
    void stopped(int hop, String fault, Run r, String step, String... want) throws Exception {
        expect(r.exit == 1, "hop " + hop + " " + fault + ": the command exited " + r.exit + ", not 1: "
                + r.firstErr);
        for (String w : want)
            expect(r.says(w), "hop " + hop + " " + fault + ": its stderr does not say \"" + w + "\": " + r.err);
        expect(r.says("stopped at step " + step + ";"), "hop " + hop + " " + fault + ": not stopped at step "
                + step + ": " + r.err);
        String at = o.proxies.get(k).status().get(Orchestrated.STEP);
        expect(step.equals(at), "hop " + hop + " " + fault + ": the map's step is " + at + ", not " + step);
    }

    /** The run that must complete: exit 0 with the final line; its line. */
    String done(int hop, String fault, Run r) {
        if (r.exit != 0 || r.line == null)
            throw new IllegalStateException("hop " + hop + " " + fault + ": the rerun exited " + r.exit
                    + " without its final line; stderr: " + r.err);
        return r.line;
    }

    void faultLine(String fault, Run first, String rest) {
        String line = "fault=" + fault + " stopped=\"" + (first.exit == 0 ? "(did not stop: exit 0 at the first run)"
                : first.firstErr.replace("\"", "'")) + "\" " + rest;
        faultLines.add(line);
        say("e2e-fault: " + line);
    }

    // ---- the scene -------------------------------------------------------

    /** The map's data as the proxy's CLI reads it. */
    Map<String, String> map() throws Exception {
        return o.proxies.get(k).status();
    }

    /**
     * The map, once the proxy's user may read it again: an API server that
     * starts answers 403 to RBAC users for a moment, until its authorizer
     * has synced.
     */
    Map<String, String> mapAgain(Duration max) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            try {
                return map();
            } catch (IllegalStateException e) {
                if (System.nanoTime() > end)
                    throw e;
                Thread.sleep(500);
            }
        }
    }

    JsonNode awaitStable(String name, Duration max) throws Exception {
        return o.awaitFd(name, "STABLE and RUNNING", max, f -> f != null
                && "STABLE".equals(Orchestrated.lifecycle(f))
                && "RUNNING".equals(f.path("status").path("jobStatus").path("state").asText())
                && f.path("status").path("observedGeneration").asLong(-1)
                        == f.path("metadata").path("generation").asLong());
    }

    void mergeSpec(String name, String patch) throws Exception {
        o.kube.merge(o.deployments() + "/" + name, o.json.readTree(patch));
    }

    static long sum(Map<TopicPartition, Long> m) {
        long n = 0;
        for (long v : m.values())
            n += v;
        return n;
    }

    /** What GROUP has committed on TOPIC, summed over its partitions. */
    long committed(String group, String topic) throws Exception {
        long n = 0;
        for (var e : o.kafka.committed(group).entrySet())
            if (e.getKey().topic().equals(topic) && e.getValue() != null)
                n += e.getValue().offset();
        return n;
    }

    /** The API server's count of 409 answers to writes of FlinkDeployments (its /metrics). */
    long conflicts409() throws Exception {
        long n = 0;
        for (String l : o.kube.text("/metrics").split("\n"))
            if (l.startsWith("apiserver_request_total{") && l.contains("code=\"409\"")
                    && l.contains("resource=\"flinkdeployments\""))
                n += (long) Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1));
        return n;
    }

    int run() throws Exception {
        o.prepare();
        List<Operator.Kube.Watch> watches = new ArrayList<>();
        try {
            o.startProxies(watches);
            try (Cluster c = new Cluster(o.work.resolve("flink"), 4 * Orchestrated.PARTITIONS * 2)) {
                flink = c;
                try {
                    hops();
                } finally {
                    o.gen.stop.set(true);
                    if (op != null)
                        op.close(); // before the MiniCluster goes
                }
            }
        } catch (Exception e) {
            for (Proxy p : o.proxies.values())
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
        for (Proxy p : o.proxies.values())
            p.stop();
        return verify();
    }

    /** The reference job and blue, the six hops, the drain at the end. */
    void hops() throws Exception {
        o.savepointDir = flink.savepointDir();
        o.checkpointDir = flink.checkpointDir();
        op = new Operator(o.kube, o.ns, flink,
                (kind, colour) -> o.spec(Jobs.Kind.valueOf(kind.toUpperCase()), colour));
        o.op = op;
        op.start();
        ref = flink.submit(o.spec(k, "ref"), null);
        o.kube.post(o.deployments(), o.flinkDeployment(k, "blue", "running"));
        flink.awaitRunning(ref, Duration.ofSeconds(120));
        awaitStable(o.fd(k, "blue"), Duration.ofSeconds(120));
        o.gen.start();
        say("the reference job and the blue FlinkDeployment running; records flowing into " + src);
        Thread.sleep(4000);

        String old = "blue";
        for (int hop = 1; hop <= HOPS; hop++) {
            String neu = other(old), from = o.fd(k, old), to = o.fd(k, neu);
            o.gen.idle.set(true);
            say("hop " + hop + ": " + old + " -> " + neu + " (partition 1 idle)");
            o.startsAtEra(k, neu, o.kafka.ends(src + "." + neu));
            o.kube.post(o.deployments(), o.flinkDeployment(k, neu, "suspended"));
            o.awaitFd(to, "lifecycleState CREATED", Duration.ofSeconds(30),
                    f -> f != null && "CREATED".equals(Orchestrated.lifecycle(f)));
            int sp0 = op.savepointsTaken(from);
            wantTaken = 1;
            newFrom = null;
            // Each colour's FlinkDeployment has one name in every hop: the
            // pair's first cutoff is this hop's, not that of two hops ago.
            o.maps.get(k).firstCutoff.remove(from + ">" + to);
            String line;
            switch (hop) {
            case 1: line = savepointError(hop, from, to); break;
            case 2: line = startFail(hop, from, to, neu); break;
            case 3: line = stalePath(hop, from, to); break;
            case 4: line = slow(hop, from, to, sp0); break;
            case 5: line = conflict(hop, from, to); break;
            case 6: line = outage(hop, from, to, neu); break;
            case 7: line = drain(hop, from, to, sp0); break;
            case 8: line = noopAfterError(hop, from, to, "stop-timeout"); break;
            case 9: line = noopAfterError(hop, from, to, "snapshot-create-fail"); break;
            case 10: line = failBeforeSuspend(hop, from, to); break;
            case 11: line = snapshotsOff(hop, from, to); break;
            default: line = failAfterCheckpoint(hop, from, to); break;
            }
            o.cutoffs.get(k).add(o.checkHandover(hop, k, from, to, line, sp0, wantTaken, newFrom));
            handovers.add("hop=" + hop + " " + line);
            o.gen.idle.set(false);
            say("hop " + hop + ": " + neu + " owns the traffic");
            old = neu;
            Thread.sleep(3000);
        }

        o.gen.stop.set(true);
        o.gen.join();
        if (o.gen.failed != null)
            throw o.gen.failed;
        say("generator stopped after " + o.gen.sent.get() + " records");
        o.awaitProxyConsumed(k);
        // The last job is drained by hand; the stand-in stops first, so it sees no job end.
        JobID live = op.job(o.fd(k, old));
        op.close();
        o.kafka.awaitDrained(o.spec(k, old).group, List.of(src + "." + old), Duration.ofSeconds(120));
        o.kafka.awaitDrained(o.spec(k, "ref").group, List.of(src), Duration.ofSeconds(120));
        flink.stop(live, true);
        flink.stop(ref, true);
        say("last job drained and stopped");
    }

    // ---- the faults ------------------------------------------------------

    /** Hop 1: the operator cannot take the savepoint; OLD's job keeps running. */
    String savepointError(int hop, String from, String to) throws Exception {
        op.fault(from, "savepoint-error");
        Run r = handover(hop, from, to, TIMEOUT_S);
        stopped(hop, "savepoint-error", r, "suspend",
                "the operator could not stop " + o.ns + "/" + from + " with a savepoint: status.error=SavepointError",
                "Nothing is lost");
        JobID j = op.job(from);
        JobStatus s = j == null ? null : flink.status(j);
        expect(s == JobStatus.RUNNING, "hop " + hop + " savepoint-error: the old job is " + s + ", not RUNNING");
        op.fault(from, null);
        String line = done(hop, "savepoint-error", handover(hop, from, to, TIMEOUT_S));
        faultLine("savepoint-error", r, "rerun=ok old_job=" + s + " step=suspend");
        return line;
    }

    /**
     * Hop 2: NEW fails to start. Its records wait: NEW's topic grows, its
     * group does not move. A user's fix (a new spec.restartNonce) and the
     * rerun start it from the savepoint the first run recorded.
     */
    String startFail(int hop, String from, String to, String neu) throws Exception {
        op.fault(to, "start-fail");
        Run r = handover(hop, from, to, TIMEOUT_S);
        stopped(hop, "start-fail", r, "start", "the new job failed to start", "Nothing is lost");
        String sp = map().get(Orchestrated.SAVEPOINT);
        String topic = src + "." + neu, group = o.spec(k, neu).group;
        long e1 = sum(o.kafka.ends(topic)), c1 = committed(group, topic);
        Thread.sleep(2000);
        long e2 = sum(o.kafka.ends(topic)), c2 = committed(group, topic);
        expect(e2 > e1 && c2 == c1 && c2 < e2 && op.job(to) == null, "hop " + hop + " start-fail: the records at "
                + "or after T do not wait in " + topic + ": ends " + e1 + " -> " + e2 + ", " + group
                + " committed " + c1 + " -> " + c2 + ", job " + op.job(to));
        op.fault(to, null);
        mergeSpec(to, "{\"spec\":{\"restartNonce\":1}}");
        String line = done(hop, "start-fail", handover(hop, from, to, TIMEOUT_S));
        Matcher m = Orchestrated.LINE.matcher(line);
        expect(m.matches() && m.group(4).equals(sp), "hop " + hop + " start-fail: the new job ran from "
                + (m.matches() ? m.group(4) : line) + ", not from the savepoint first recorded, " + sp);
        faultLine("start-fail", r, "rerun=ok waiting=" + (e2 - c2) + " topic_end=" + e1 + "->" + e2
                + " group_committed=" + c1 + "->" + c2 + " fix=spec.restartNonce same_savepoint="
                + (m.matches() && m.group(4).equals(sp)));
        return line;
    }

    /**
     * Hop 3: the suspend falls back to last-state, no new savepoint. As the
     * command says: OLD resumed (spec.job.state running), then the rerun
     * suspends it again for a real savepoint, with the same T.
     */
    String stalePath(int hop, String from, String to) throws Exception {
        op.fault(from, "stale-path");
        Run r = handover(hop, from, to, TIMEOUT_S);
        stopped(hop, "stale-path", r, "suspend", "is SUSPENDED but the operator took no new savepoint",
                "Nothing is lost");
        String t = map().get(Orchestrated.CUTOFF);
        op.fault(from, null);
        mergeSpec(from, "{\"spec\":{\"job\":{\"state\":\"running\"}}}");
        awaitStable(from, Duration.ofSeconds(120));
        boolean lastState = false;
        for (String e : op.events())
            lastState |= e.startsWith(from + ": resumed") && e.contains("from its last state");
        expect(lastState, "hop " + hop + " stale-path: " + from + " was not resumed from its last state");
        say("hop " + hop + ": " + from + " resumed from its last state and running again");
        String line = done(hop, "stale-path", handover(hop, from, to, TIMEOUT_S));
        Matcher m = Orchestrated.LINE.matcher(line);
        boolean same = m.matches() && m.group(3).equals(t) && t.equals(map().get(Orchestrated.CUTOFF));
        expect(same, "hop " + hop + " stale-path: T moved: " + t + " at the stop, then " + line);
        faultLine("stale-path", r, "rerun=ok resumed=" + (lastState ? "last-state" : "?") + " same_T=" + same);
        return line;
    }

    /** Hop 4: the operator takes longer than --timeout; the rerun waits for the same suspend. */
    String slow(int hop, String from, String to, int sp0) throws Exception {
        op.fault(from, "slow=15000");
        Run r;
        int clearStops = 0;
        while (true) {
            // A 5 s timeout applies to each step: the clear may take longer
            // than that too, and a run again goes on waiting.
            r = handover(hop, from, to, 5);
            if (r.exit == 1 && r.says("no CLEAR_TO_TEARDOWN within 5 s") && clearStops++ < 10)
                continue;
            break;
        }
        stopped(hop, "slow", r, "suspend", "did not stop with a savepoint within 5 s", "Nothing is lost");
        op.fault(from, null);
        String line = done(hop, "slow", handover(hop, from, to, TIMEOUT_S));
        faultLine("slow=15000", r, "rerun=ok timeout=5 stops_at_clear=" + clearStops + " savepoints="
                + (op.savepointsTaken(from) - sp0));
        return line;
    }

    /**
     * Hop 5: an annotation bumped every BUMP_MS on both resources, so that
     * the command's conditional patches meet 409s; it absorbs them.
     */
    String conflict(int hop, String from, String to) throws Exception {
        long api0 = conflicts409(), own0 = o.kube.conflicts.get(), bumps0 = op.bumps.get();
        op.fault(from, "conflict=" + BUMP_MS);
        op.fault(to, "conflict=" + BUMP_MS);
        Run r = handover(hop, from, to, TIMEOUT_S);
        op.fault(from, null);
        op.fault(to, null);
        // The stand-in's own conditional writes (its finalizers) meet them too.
        long all = conflicts409() - api0, own = o.kube.conflicts.get() - own0;
        expect(r.exit == 0, "hop " + hop + " conflict: the command exited " + r.exit + ": " + r.err);
        String line = done(hop, "conflict", r);
        faultLine("conflict", r, "rerun=none bump_every_ms=" + BUMP_MS + " bumps=" + (op.bumps.get() - bumps0)
                + " conflicts_409="
                + (all - own) + " (the API server's 409s on flinkdeployments: " + all + ", the stand-in's own: "
                + own + ")");
        return line;
    }

    /**
     * Hop 6: the API server away while the command waits at suspend. The
     * stand-in's suspend is held 20 s (slow), so that it stops the job while
     * the server is down and records it once it is back.
     */
    String outage(int hop, String from, String to, String neu) throws Exception {
        op.fault(from, "slow=20000");
        Started run = new Started(hop, from, to, TIMEOUT_S);
        String topic = src + "." + neu;
        Path log = o.work.resolve("apiserver-restart.log");
        long e0, away;
        Process restart;
        Run r;
        try {
            // Once OLD's spec says suspended, the command waits at suspend.
            o.awaitFd(from, "spec.job.state suspended", Duration.ofSeconds(120),
                    f -> f != null && "suspended".equals(f.path("spec").path("job").path("state").asText()));
            e0 = sum(o.kafka.ends(topic));
            say("hop " + hop + ": the command waits at suspend; the API server goes away for " + outageS + " s");
            away = System.nanoTime();
            restart = new ProcessBuilder("bash", apiserver, "restart", Integer.toString(outageS))
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.appendTo(log.toFile()))
                    .start();
            r = run.end(Duration.ofSeconds(outageS + 120));
        } finally {
            if (run.p.isAlive())
                run.p.destroyForcibly(); // no command left behind on a failure here
        }
        long stoppedMs = (System.nanoTime() - away) / 1_000_000;
        say("hop " + hop + ": gate-proxy handover exited " + r.exit + " " + stoppedMs
                + " ms after the API server was told to stop: " + r.firstErr);
        long e1 = sum(o.kafka.ends(topic));
        boolean proxyUp = o.proxies.get(k).alive();
        if (!restart.waitFor(outageS + 150, TimeUnit.SECONDS)) {
            restart.destroyForcibly();
            throw new IllegalStateException("apiserver.sh restart did not end: " + Orchestrated.lastLines(log, 20));
        }
        if (restart.exitValue() != 0)
            throw new IllegalStateException("apiserver.sh restart failed: " + Orchestrated.lastLines(log, 20));
        say("hop " + hop + ": the API server is back (" + Orchestrated.lastLines(log, 1) + ")");
        expect(e1 > e0 && proxyUp, "hop " + hop + " outage: the proxy did not keep routing while the API server was "
                + "away: " + topic + " ends " + e0 + " -> " + e1 + ", proxy alive " + proxyUp);
        // The map as the command left it, read once the server answers again.
        Map<String, String> m = mapAgain(Duration.ofSeconds(30));
        expect("suspend".equals(m.get(Orchestrated.STEP)), "hop " + hop + " outage: the map's step is "
                + m.get(Orchestrated.STEP) + ", not suspend");
        expect(r.exit == 1 && r.says("nothing is lost: run the same command again once the API server answers")
                && r.says("stopped at step suspend;"), "hop " + hop + " outage: the command did not stop saying "
                + "the API server does not answer: exit " + r.exit + ": " + r.err);
        op.fault(from, null);
        String line = done(hop, "outage", handover(hop, from, to, TIMEOUT_S));
        faultLine("apiserver-away", r, "rerun=ok down_s=" + outageS + " stopped_after_ms=" + stoppedMs
                + " routed_to_" + neu + "_while_down=" + (e1 - e0) + " proxy_alive=" + proxyUp);
        return line;
    }

    /**
     * The FlinkStateSnapshots of savepoint type whose job reference is
     * resource NAME (the command's own requests, of checkpoint type, are
     * not the operator's savepoints).
     */
    int snapshotsOf(String name) throws Exception {
        int n = 0;
        JsonNode l = o.kube.get("/apis/" + Operator.API + "/namespaces/" + o.ns + "/flinkstatesnapshots");
        if (l != null)
            for (JsonNode s : l.path("items"))
                if (name.equals(s.path("spec").path("jobReference").path("name").asText())
                        && !s.path("spec").path("savepoint").isMissingNode())
                    n++;
        return n;
    }

    static String upgradePath(JsonNode fd) {
        JsonNode p = fd == null ? null : fd.path("status").path("jobStatus").path("upgradeSavepointPath");
        return p == null || p.isMissingNode() || p.isNull() ? null : p.asText();
    }

    /** The first run stops: exit 1, its stderr saying each of WANT (at whatever step); the map's step. */
    String stoppedSaying(int hop, String fault, Run r, String... want) throws Exception {
        expect(r.exit == 1, "hop " + hop + " " + fault + ": the command exited " + r.exit + ", not 1: "
                + r.firstErr);
        for (String w : want)
            expect(r.says(w), "hop " + hop + " " + fault + ": its stderr does not say \"" + w + "\": " + r.err);
        return map().get(Orchestrated.STEP);
    }

    /**
     * Hop 7: drain-on-savepoint-deletion true in OLD's spec. The command
     * refuses before anything changes: no cutoff for this hop, the map's
     * toggle value and stage as they were, OLD still running, no savepoint.
     * Set to "false", the rerun completes.
     */
    String drain(int hop, String from, String to, int sp0) throws Exception {
        String key = "kubernetes.operator.job.drain-on-savepoint-deletion";
        // Into the nested form the resources are written in (a boolean, as
        // YAML gives it): the merge patch replaces that one value.
        String nested = "{\"spec\":{\"flinkConfiguration\":{\"kubernetes.operator\":{\"job\":"
                + "{\"drain-on-savepoint-deletion\":%s}}}}}";
        mergeSpec(from, String.format(nested, "true"));
        awaitStable(from, Duration.ofSeconds(60));
        Map<String, String> before = map();
        Run r = handover(hop, from, to, TIMEOUT_S);
        Map<String, String> after = map();
        expect(r.exit == 1 && r.says(key), "hop " + hop + " drain: the command did not refuse naming " + key
                + ": exit " + r.exit + ": " + r.err);
        boolean same = true;
        for (String f : List.of("watermark-toggle-value", "stage", Orchestrated.FROM, Orchestrated.TO,
                Orchestrated.STEP, Orchestrated.CUTOFF, Orchestrated.SAVEPOINT))
            same &= java.util.Objects.equals(before.get(f), after.get(f));
        boolean noCutoff = !o.maps.get(k).firstCutoff.containsKey(from + ">" + to);
        expect(same && noCutoff, "hop " + hop + " drain: the map changed at the refusal: " + before + " -> "
                + after + (noCutoff ? "" : "; a cutoff was recorded: " + o.maps.get(k).firstCutoff.get(from + ">" + to)));
        JsonNode fd = o.kube.get(o.deployments() + "/" + from);
        JobID j = op.job(from);
        JobStatus s = j == null ? null : flink.status(j);
        boolean oldRuns = s == JobStatus.RUNNING && fd != null
                && "running".equals(fd.path("spec").path("job").path("state").asText())
                && "RUNNING".equals(fd.path("status").path("jobStatus").path("state").asText());
        int taken = op.savepointsTaken(from) - sp0;
        expect(oldRuns && taken == 0, "hop " + hop + " drain: after the refusal the old job is " + s + ", "
                + (fd == null ? "(gone)" : "spec.job.state " + fd.path("spec").path("job").path("state").asText())
                + ", savepoints taken " + taken);
        mergeSpec(from, String.format(nested, "false"));
        awaitStable(from, Duration.ofSeconds(60));
        String line = done(hop, "drain", handover(hop, from, to, TIMEOUT_S));
        Boolean drained = op.stopDrained(from);
        expect(Boolean.FALSE.equals(drained), "hop " + hop + " drain: the rerun's stop drained: " + drained);
        faultLine("drain", r, "refused_before_cutover=" + (r.exit == 1 && same && noCutoff && oldRuns && taken == 0)
                + " rerun=ok map_unchanged=" + same + " old_job=" + s + " savepoints_at_refusal=" + taken
                + " rerun_drained=" + drained);
        return line;
    }

    /**
     * Hops 8, 9: the stop completes in Flink, then the operator fails the
     * reconcile (FAULT: stop-timeout or snapshot-create-fail, held until
     * cleared): the command stops with the error. Cleared, the operator
     * suspends the FINISHED job with NOOP (no UPGRADE FlinkStateSnapshot,
     * upgradeSavepointPath the stop's savepoint); the rerun accepts it.
     */
    String noopAfterError(int hop, String from, String to, String fault) throws Exception {
        int snaps0 = snapshotsOf(from);
        op.fault(from, fault + "=120000");
        Run r = handover(hop, from, to, TIMEOUT_S);
        String step = stoppedSaying(hop, fault, r, "could not stop");
        String stop = op.lastStop(from);
        op.fault(from, null); // and the hold: the operator's next reconcile
        JsonNode fd = o.awaitFd(from, "SUSPENDED", Duration.ofSeconds(60),
                f -> f != null && "SUSPENDED".equals(Orchestrated.lifecycle(f)));
        String upgrade = upgradePath(fd);
        Run again = handover(hop, from, to, TIMEOUT_S);
        String line = done(hop, fault, again);
        expect(again.said("no UPGRADE FlinkStateSnapshot"), "hop " + hop + " " + fault + ": the rerun does not say "
                + "\"no UPGRADE FlinkStateSnapshot\": " + again.out + again.err);
        String used = map().get(Orchestrated.SAVEPOINT);
        boolean exact = stop != null && stop.equals(upgrade) && stop.equals(used);
        expect(exact, "hop " + hop + " " + fault + ": the new job did not start from the stop's savepoint: stop "
                + stop + ", OLD's upgradeSavepointPath " + upgrade + ", the map's savepoint " + used);
        int snaps = snapshotsOf(from) - snaps0;
        expect(snaps == 0, "hop " + hop + " " + fault + ": " + snaps + " FlinkStateSnapshots of " + from);
        faultLine(fault, r, "step=" + step + " rerun=ok noop_suspend=true upgrade_snapshots=" + snaps
                + " new_job_from_the_stops_savepoint=" + exact);
        return line;
    }

    /**
     * Hop 10: OLD's job ends (cancelled) as the suspend arrives; the operator
     * suspends with NOOP from its latest checkpoint. The command names that
     * path and stops; the rerun with {@code --savepoint} it completes (the
     * checkpoint was taken after CLEAR_TO_TEARDOWN: every record before T).
     */
    String failBeforeSuspend(int hop, String from, String to) throws Exception {
        op.fault(from, "fail-before-suspend");
        Run r = handover(hop, from, to, TIMEOUT_S);
        String step = stoppedSaying(hop, "fail-before-suspend", r, "no savepoint", "--savepoint");
        op.fault(from, null);
        JsonNode fd = o.awaitFd(from, "SUSPENDED", Duration.ofSeconds(60),
                f -> f != null && "SUSPENDED".equals(Orchestrated.lifecycle(f)));
        String chk = upgradePath(fd);
        boolean named = chk != null && chk.contains("/chk-") && r.says(chk);
        expect(named, "hop " + hop + " fail-before-suspend: OLD's upgradeSavepointPath " + chk
                + " is no checkpoint, or the command does not name it: " + r.err);
        String line = done(hop, "fail-before-suspend", handover(hop, from, to, TIMEOUT_S, "--savepoint", chk));
        Matcher m = Orchestrated.LINE.matcher(line);
        expect(m.matches() && m.group(4).equals(chk), "hop " + hop + " fail-before-suspend: the new job ran from "
                + (m.matches() ? m.group(4) : line) + ", not from " + chk);
        wantTaken = 0; // no stop: the job had ended
        faultLine("fail-before-suspend", r, "step=" + step + " old_job=CANCELED named_checkpoint=" + named
                + " rerun=ok --savepoint=" + chk.replaceAll(".*/(chk-\\d+)$", "$1"));
        return line;
    }

    /** Hop 11: snapshot resources off operator-wide: savepointInfo.lastSavepoint, the first run completes. */
    String snapshotsOff(int hop, String from, String to) throws Exception {
        int snaps0 = snapshotsOf(from);
        op.snapshotResourcesOff(true);
        Run r;
        try {
            r = handover(hop, from, to, TIMEOUT_S);
        } finally {
            op.snapshotResourcesOff(false);
        }
        expect(r.exit == 0, "hop " + hop + " snapshots-off: the command exited " + r.exit + ": " + r.err);
        String line = done(hop, "snapshots-off", r);
        expect(r.said("lastSavepoint"), "hop " + hop + " snapshots-off: the command does not say lastSavepoint: "
                + r.out + r.err);
        int snaps = snapshotsOf(from) - snaps0;
        expect(snaps == 0, "hop " + hop + " snapshots-off: " + snaps + " FlinkStateSnapshots of " + from);
        faultLine("snapshots-off", r, "rerun=none said_lastSavepoint=" + r.said("lastSavepoint")
                + " upgrade_snapshots=" + snaps + " run_ms=" + r.ms);
        return line;
    }

    /**
     * Hop 12: NEW fails once it has checkpointed (records at or after T flow
     * into its topic). The command stops; a user's fix (a new
     * spec.restartNonce) redeploys NEW from its own latest checkpoint; the
     * rerun accepts that.
     */
    String failAfterCheckpoint(int hop, String from, String to) throws Exception {
        op.fault(to, "fail-after-checkpoint");
        Run r = handover(hop, from, to, TIMEOUT_S);
        String step = stoppedSaying(hop, "fail-after-checkpoint", r, "the new job failed");
        op.fault(to, null);
        JsonNode fd = o.awaitFd(to, "FAILED", Duration.ofSeconds(60),
                f -> f != null && "FAILED".equals(Orchestrated.lifecycle(f)));
        String chk = upgradePath(fd);
        String sp = map().get(Orchestrated.SAVEPOINT);
        mergeSpec(to, "{\"spec\":{\"restartNonce\":" + (System.currentTimeMillis() % 1000000) + "}}");
        awaitStable(to, Duration.ofSeconds(120));
        Run again = handover(hop, from, to, TIMEOUT_S);
        String line = done(hop, "fail-after-checkpoint", again);
        boolean own = chk != null && chk.contains("/chk-") && !chk.equals(sp);
        expect(own, "hop " + hop + " fail-after-checkpoint: NEW's upgradeSavepointPath after its failure is " + chk
                + ", not a checkpoint of its own (the savepoint: " + sp + ")");
        expect(again.said("its own checkpoint"), "hop " + hop + " fail-after-checkpoint: the rerun does not say "
                + "\"its own checkpoint\": " + again.out + again.err);
        newFrom = chk;
        faultLine("fail-after-checkpoint", r, "step=" + step + " fix=spec.restartNonce redeployed_from="
                + (chk == null ? "?" : chk.replaceAll(".*/(chk-\\d+)$", "$1")) + " rerun=ok said_its_own_checkpoint="
                + again.said("its own checkpoint"));
        return line;
    }

    // ---- the checks --------------------------------------------------------

    /** The colour of a record at event time TS: blue, flipped at each cutoff it is at or after. */
    static String colour(long ts, List<Long> cutoffs) {
        int flips = 0;
        for (long t : cutoffs)
            if (ts >= t)
                flips++;
        return flips % 2 == 0 ? "blue" : "green";
    }

    int verify() throws Exception {
        int bad = o.problems.size();
        for (String p : o.problems)
            say("FAIL: " + p);
        List<Long> ts = o.cutoffs.get(k);
        for (int i = 1; i < ts.size(); i++)
            if (ts.get(i) <= ts.get(i - 1)) {
                say("FAIL: the cutoffs do not increase: " + ts);
                bad++;
            }
        Map<String, Integer> seen = new HashMap<>();
        long misrouted = 0, blue = 0, green = 0;
        for (String c : List.of("blue", "green"))
            for (ConsumerRecord<String, String> r : o.kafka.readAll(src + "." + c)) {
                if (!colour(Jobs.Rec.parse(r.value()).ts, ts).equals(c))
                    misrouted++;
                seen.merge(r.value(), 1, Integer::sum);
                if (c.equals("blue")) blue++; else green++;
            }
        List<ConsumerRecord<String, String>> source = o.kafka.readAll(src);
        long lost = 0, dup = 0;
        for (ConsumerRecord<String, String> r : source) {
            Integer n = seen.get(r.value());
            if (n == null) lost++; else dup += n - 1;
        }
        Map<String, String> st = map();
        say("colours: job=" + k.tag() + " records=" + source.size() + " lost=" + lost + " duplicated=" + dup
                + " misrouted=" + misrouted + " blue=" + blue + " green=" + green + " proxy_blue="
                + st.get("gate-proxy.count.blue") + " proxy_green=" + st.get("gate-proxy.count.green"));
        if (lost + dup + misrouted > 0
                || Long.parseLong(st.getOrDefault("gate-proxy.count.blue", "-1")) != blue
                || Long.parseLong(st.getOrDefault("gate-proxy.count.green", "-1")) != green) {
            say("FAIL: the colour topics or the proxy's counts");
            bad++;
        }
        List<String> want = Handover.values(o.kafka.readAll(src + ".reference"));
        List<String> got = Handover.values(o.kafka.readAll(src + ".out"));
        Check c = Check.compare(k, want, got);
        StringBuilder t = new StringBuilder();
        for (long v : ts)
            t.append(t.length() == 0 ? "" : ",").append(v);
        System.out.println("e2e: path=handover-faults job=" + k.tag() + " hops=" + HOPS + " records="
                + source.size() + " " + c + " T=" + t);
        if (!c.exact() || want.isEmpty()) {
            say("FAIL: job " + k.tag() + " on the handover-faults path");
            bad++;
        }
        for (String f : faultLines)
            System.out.println("e2e-fault: " + f);
        for (String h : handovers)
            System.out.println("e2e-handover: path=handover-faults " + h);
        System.out.println("e2e-handover: path=handover-faults operator stand-in: " + op.events().size()
                + " actions; savepoints taken: " + op.savepoints);
        System.out.println("e2e-starts: path=handover-faults new jobs started exactly at the first record of "
                + "their era: " + o.eraExact + " of " + o.eraChecks);
        if (o.eraExact != o.eraChecks || o.eraChecks != HOPS || faultLines.size() != HOPS || ts.size() != HOPS)
            bad++;
        return bad == 0 ? 0 : 1;
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = Handover.options(argv);
        System.exit(new Faults(a).run());
    }
}
