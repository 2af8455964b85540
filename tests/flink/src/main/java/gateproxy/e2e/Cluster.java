package gateproxy.e2e;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.execution.ExecutionState;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * A Flink MiniCluster in this JVM, and the few things the hand-over does with
 * a job: submit it (fresh or from a savepoint, with non-restored state
 * allowed, as the operator's {@code spec.job.allowNonRestoredState: true}),
 * wait until it runs, take a savepoint, stop it with one.
 */
public final class Cluster implements AutoCloseable {
    private final MiniCluster mc;
    private final Path dir;
    private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(10)).build();

    public Cluster(Path dir, int slots) throws Exception {
        this.dir = dir;
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("restart-strategy.type", "none");
        conf.setString("taskmanager.memory.managed.size", "16m");
        conf.setString("taskmanager.memory.network.min", "96m");
        conf.setString("taskmanager.memory.network.max", "96m");
        mc = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setNumTaskManagers(1).setNumSlotsPerTaskManager(slots)
                .setConfiguration(conf).build());
        mc.start();
    }

    /** Submits the job of {@code s}; {@code restore}: a savepoint path, or null. */
    public JobID submit(Jobs.Spec s, String restore) throws Exception {
        return submit(s, restore, true);
    }

    /**
     * As {@link #submit(Jobs.Spec, String)}, with non-restored state allowed
     * only if {@code allowNonRestored} (the operator's
     * {@code spec.job.allowNonRestoredState}).
     */
    public JobID submit(Jobs.Spec s, String restore, boolean allowNonRestored) throws Exception {
        return submit(s, restore, allowNonRestored, Map.of());
    }

    /** As {@link #submit(Jobs.Spec, String, boolean)}, with {@code extra} set in the job's configuration too. */
    public JobID submit(Jobs.Spec s, String restore, boolean allowNonRestored, Map<String, String> extra)
            throws Exception {
        Configuration conf = new Configuration();
        conf.setString("execution.checkpointing.interval", "1 s");
        conf.setString("execution.checkpointing.dir", checkpointDir());
        conf.setString("pipeline.name", s.txnPrefix);
        extra.forEach(conf::setString);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(s.parallelism);
        Jobs.build(env, s);
        JobGraph g = env.getStreamGraph().getJobGraph();
        if (restore != null)
            g.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(restore, allowNonRestored));
        mc.submitJob(g).get(60, TimeUnit.SECONDS);
        return g.getJobID();
    }

    public JobStatus status(JobID id) throws Exception {
        return mc.getJobStatus(id).get(30, TimeUnit.SECONDS);
    }

    /** Waits until every task of the job runs; fails if it ends meanwhile. */
    public void awaitRunning(JobID id, Duration max) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            JobStatus st = status(id);
            if (st == JobStatus.RUNNING && allTasksRunning(id))
                return;
            if (st.isGloballyTerminalState())
                throw new IllegalStateException("job " + id + " ended " + st + ": " + cause(id));
            if (System.nanoTime() > end)
                throw new IllegalStateException("job " + id + " not running after " + max + " (" + st + ")");
            Thread.sleep(100);
        }
    }

    private boolean allTasksRunning(JobID id) throws Exception {
        boolean any = false;
        for (var v : mc.getArchivedExecutionGraph(id).get(30, TimeUnit.SECONDS)
                .getAllExecutionVertices()) {
            if (v.getExecutionState() != ExecutionState.RUNNING)
                return false;
            any = true;
        }
        return any;
    }

    /** The failure of an ended job, or "" when it has none. */
    public String cause(JobID id) {
        try {
            JobResult r = mc.requestJobResult(id).get(30, TimeUnit.SECONDS);
            return r.getSerializedThrowable()
                    .map(t -> t.getFullStringifiedStackTrace()).orElse("");
        } catch (Exception e) {
            return "(no result: " + e + ")";
        }
    }

    /** An intermediate savepoint; the job keeps running. */
    public String savepoint(JobID id) throws Exception {
        return mc.triggerSavepoint(id, dir.resolve("savepoints").toUri().toString(), false,
                SavepointFormatType.CANONICAL).get(120, TimeUnit.SECONDS);
    }

    /** One checkpoint of a running job now (as the operator's checkpoint FlinkStateSnapshot asks): its path. */
    public String checkpoint(JobID id) throws Exception {
        return mc.triggerCheckpoint(id).get(120, TimeUnit.SECONDS);
    }

    /** Where {@link #savepoint} and {@link #stop} write (a file: URI). */
    public String savepointDir() {
        return dir.resolve("savepoints").toUri().toString();
    }

    /** Where the jobs write their checkpoints (a file: URI), one directory per job under it. */
    public String checkpointDir() {
        return dir.resolve("checkpoints").toUri().toString();
    }

    /**
     * The latest completed checkpoint or savepoint of the job, as its
     * checkpoint statistics report it (REST {@code /jobs/:id/checkpoints},
     * also for an ended job): the {@code external_path} of the entry with the
     * highest id among {@code latest.restored}, {@code latest.completed} and
     * {@code latest.savepoint}; null when there is none. The REST handlers
     * cache a job's statistics for a few seconds (web.refresh-interval): a
     * local path already gone (subsumed by a later checkpoint) is read again
     * for up to 10 s.
     */
    public String latestCheckpoint(JobID id) throws Exception {
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            String p = latestCheckpointOnce(id);
            if (p == null || !p.startsWith("file:") || System.nanoTime() > end
                    || java.nio.file.Files.exists(Path.of(URI.create(p))))
                return p;
            Thread.sleep(300);
        }
    }

    private String latestCheckpointOnce(JobID id) throws Exception {
        URI rest = mc.getRestAddress().get(30, TimeUnit.SECONDS);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(rest.resolve("/jobs/" + id + "/checkpoints"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200)
            throw new IllegalStateException("GET /jobs/" + id + "/checkpoints: HTTP " + r.statusCode() + " " + r.body());
        JsonNode latest = new ObjectMapper().readTree(r.body()).path("latest");
        JsonNode best = null;
        for (String k : new String[] {"restored", "completed", "savepoint"}) {
            JsonNode c = latest.path(k);
            if (!c.hasNonNull("id") || !c.hasNonNull("external_path"))
                continue;
            if (best == null || c.path("id").asLong() > best.path("id").asLong())
                best = c;
        }
        return best == null ? null : best.path("external_path").asText();
    }

    /**
     * The job's latest completed checkpoint or savepoint of its own
     * ({@code latest.completed} and {@code latest.savepoint}, not the one it
     * was restored from); null when it has none yet.
     */
    public String latestCompleted(JobID id) throws Exception {
        URI rest = mc.getRestAddress().get(30, TimeUnit.SECONDS);
        HttpResponse<String> r = http.send(HttpRequest.newBuilder(rest.resolve("/jobs/" + id + "/checkpoints"))
                .timeout(Duration.ofSeconds(30)).GET().build(), HttpResponse.BodyHandlers.ofString());
        if (r.statusCode() != 200)
            throw new IllegalStateException("GET /jobs/" + id + "/checkpoints: HTTP " + r.statusCode() + " " + r.body());
        JsonNode latest = new ObjectMapper().readTree(r.body()).path("latest");
        for (String k : new String[] {"completed", "savepoint"})
            if (latest.path(k).hasNonNull("external_path"))
                return latest.path(k).path("external_path").asText();
        return null;
    }

    /** Waits until the job has ended (FAILED, CANCELED, FINISHED); its final status. */
    public JobStatus awaitEnded(JobID id, Duration max) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        JobStatus st;
        while (!(st = status(id)).isGloballyTerminalState()) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("job " + id + " not ended after " + max + " (" + st + ")");
            Thread.sleep(50);
        }
        return st;
    }

    /** Cancels the job (no savepoint) and waits until it has ended. */
    public void cancel(JobID id) throws Exception {
        if (!status(id).isGloballyTerminalState())
            mc.cancelJob(id).get(30, TimeUnit.SECONDS);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!status(id).isGloballyTerminalState()) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("job " + id + " not ended 60 s after its cancel");
            Thread.sleep(50);
        }
    }

    /** Stop-with-savepoint; {@code drain} sends MAX_WATERMARK first. */
    public String stop(JobID id, boolean drain) throws Exception {
        return stop(id, drain, null);
    }

    /** As {@link #stop(JobID, boolean)}, into {@code target} (a directory URI), or {@link #savepointDir} when null. */
    public String stop(JobID id, boolean drain, String target) throws Exception {
        String p = mc.stopWithSavepoint(id, target != null ? target : savepointDir(), drain,
                SavepointFormatType.CANONICAL).get(120, TimeUnit.SECONDS);
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (status(id) != JobStatus.FINISHED) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("job " + id + " not FINISHED after its stop");
            Thread.sleep(50);
        }
        return p;
    }

    @Override
    public void close() throws Exception {
        mc.close();
    }
}
