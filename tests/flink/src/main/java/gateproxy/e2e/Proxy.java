package gateproxy.e2e;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;

/**
 * The gate-proxy process under test and its CLI: {@code run -c CONF} in the
 * background (log appended to a file), SIGKILL and restart, and
 * {@code status --json} / {@code cutover} / {@code finish} on the map it
 * follows (a control file or a ConfigMap, as {@code where} says); with
 * {@code http.listen} set, its /metrics.
 */
public final class Proxy {
    private final String bin;
    private final Path conf;
    private final File log;
    private final List<String> where;
    private final String http;
    private Process proc;

    public Proxy(String bin, Path conf, Path log, List<String> where) {
        this(bin, conf, log, where, null);
    }

    /** HTTP: the configuration's {@code http.listen} (HOST:PORT), or null. */
    public Proxy(String bin, Path conf, Path log, List<String> where, String http) {
        this.bin = bin;
        this.conf = conf;
        this.log = log.toFile();
        this.where = where;
        this.http = http;
    }

    public void start() throws Exception {
        proc = new ProcessBuilder(bin, "run", "-c", conf.toString())
                .redirectErrorStream(true)
                .redirectOutput(ProcessBuilder.Redirect.appendTo(log)).start();
    }

    /** SIGKILL, then a new process on the same configuration. */
    public void killAndRestart() throws Exception {
        proc.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
        start();
    }

    /** SIGTERM; the proxy must exit 0. */
    public void stop() throws Exception {
        proc.destroy();
        if (!proc.waitFor(30, TimeUnit.SECONDS))
            throw new IllegalStateException("gate-proxy did not stop within 30 s of SIGTERM");
        if (proc.exitValue() != 0)
            throw new IllegalStateException("gate-proxy exited " + proc.exitValue() + " after SIGTERM");
    }

    public boolean alive() { return proc != null && proc.isAlive(); }

    /** Runs {@code gate-proxy ARGS WHERE}; returns its output, throws unless it exits 0. */
    public String cli(String... args) throws Exception {
        List<String> cmd = new ArrayList<>(List.of(bin));
        cmd.addAll(List.of(args));
        cmd.addAll(where);
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0)
            throw new IllegalStateException(String.join(" ", cmd) + " failed: " + out);
        return out;
    }

    /** The map's data, as {@code gate-proxy status --json} prints it. */
    public Map<String, String> status() throws Exception {
        JsonNode n = new ObjectMapper().readTree(cli("status", "--json"));
        Map<String, String> m = new HashMap<>();
        n.fields().forEachRemaining(e -> m.put(e.getKey(), e.getValue().asText()));
        return m;
    }

    /** Polls the map until {@code cond} holds; the proxy must stay up meanwhile. */
    public Map<String, String> await(String what, Duration max, Predicate<Map<String, String>> cond)
            throws Exception {
        return await(List.of(this), what, max, cond);
    }

    /**
     * Polls the map (the one every instance of ALL follows, read with the
     * first's CLI) until {@code cond} holds; each of ALL must stay up
     * meanwhile.
     */
    public static Map<String, String> await(List<Proxy> all, String what, Duration max,
            Predicate<Map<String, String>> cond) throws Exception {
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            Map<String, String> m = all.get(0).status();
            if (cond.test(m))
                return m;
            for (Proxy p : all)
                if (!p.alive())
                    throw new IllegalStateException("gate-proxy died while waiting for " + what
                            + " (log: " + p.log + ")");
            if (System.nanoTime() > end)
                throw new IllegalStateException("no " + what + " after " + max + "; map: " + m);
            Thread.sleep(200);
        }
    }

    /**
     * The value of an unlabelled sample of this process's /metrics, e.g.
     * {@code gate_proxy_partitions_assigned}; -1 when /metrics does not
     * answer (the process is starting) or has no such sample.
     */
    public long metric(String name) throws Exception {
        if (http == null)
            throw new IllegalStateException("no http.listen for " + log);
        HttpRequest req = HttpRequest.newBuilder(URI.create("http://" + http + "/metrics"))
                .timeout(Duration.ofSeconds(5)).build();
        String body;
        try {
            body = HTTP.send(req, HttpResponse.BodyHandlers.ofString()).body();
        } catch (IOException e) {
            return -1;
        }
        for (String line : body.split("\n"))
            if (line.startsWith(name + " "))
                return Long.parseLong(line.substring(name.length() + 1).trim());
        return -1;
    }

    private static final HttpClient HTTP = HttpClient.newBuilder()
            .connectTimeout(Duration.ofSeconds(2)).build();

    /** The log's length now: where {@link #logSince} starts reading. */
    public long logSize() { return log.length(); }

    /** What the process (and those before it on this log) wrote from OFFSET on. */
    public String logSince(long offset) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(log, "r")) {
            if (offset >= f.length())
                return "";
            byte[] b = new byte[(int) (f.length() - offset)];
            f.seek(offset);
            f.readFully(b);
            return new String(b, StandardCharsets.UTF_8);
        }
    }

    /** The log file's name, e.g. in a message. */
    public String logName() { return log.getName(); }
}
