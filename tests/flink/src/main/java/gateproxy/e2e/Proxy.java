package gateproxy.e2e;

import java.io.File;
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
 * follows (a control file or a ConfigMap, as {@code where} says).
 */
public final class Proxy {
    private final String bin;
    private final Path conf;
    private final File log;
    private final List<String> where;
    private Process proc;

    public Proxy(String bin, Path conf, Path log, List<String> where) {
        this.bin = bin;
        this.conf = conf;
        this.log = log.toFile();
        this.where = where;
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
        long end = System.nanoTime() + max.toNanos();
        while (true) {
            Map<String, String> m = status();
            if (cond.test(m))
                return m;
            if (!alive())
                throw new IllegalStateException("gate-proxy died while waiting for " + what
                        + " (log: " + log + ")");
            if (System.nanoTime() > end)
                throw new IllegalStateException("no " + what + " after " + max + "; map: " + m);
            Thread.sleep(200);
        }
    }
}
