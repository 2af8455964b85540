/*
 * bench/streams: the peer gate-proxy is benchmarked against (issue 6), what a
 * user would write instead of gate-proxy: a Kafka Streams application with
 * processing.guarantee=exactly_once_v2 that splits topic S at an event-time
 * cutoff T into S.blue (event time < T) and S.green (>= T).
 *
 * Topology: source S (byte[] key and value) -> Router -> one sink whose
 * topic is chosen per record (TopicNameExtractor) and whose partition is the
 * source partition (StreamPartitioner), so S/p goes to S.blue/p and
 * S.green/p in source order. The event time is the JSON value's top-level
 * "ts" field (integer epoch ms). A record whose ts cannot be read goes to
 * the dead-letter topic S.dlq with gate-proxy's two headers
 * (gate-proxy.source = "S/P/OFFSET", gate-proxy.error), so gp-check --dlq
 * can judge it. Keys, values, headers and timestamps are passed through as
 * read (Streams forwards the input record's headers and timestamp).
 *
 * Run with --help for the options; bench/streams.sh builds and runs it.
 */
package gateproxy.bench;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Stream;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.TopicDescription;
import org.apache.kafka.clients.consumer.ConsumerConfig;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.ProducerConfig;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.errors.UnknownTopicOrPartitionException;
import org.apache.kafka.common.header.internals.RecordHeaders;
import org.apache.kafka.common.serialization.Deserializer;
import org.apache.kafka.common.serialization.Serde;
import org.apache.kafka.common.serialization.Serdes;
import org.apache.kafka.common.serialization.Serializer;
import org.apache.kafka.streams.KafkaStreams;
import org.apache.kafka.streams.StreamsBuilder;
import org.apache.kafka.streams.StreamsConfig;
import org.apache.kafka.streams.Topology;
import org.apache.kafka.streams.errors.StreamsUncaughtExceptionHandler;
import org.apache.kafka.streams.kstream.Consumed;
import org.apache.kafka.streams.kstream.Produced;
import org.apache.kafka.streams.processor.StreamPartitioner;
import org.apache.kafka.streams.processor.TopicNameExtractor;
import org.apache.kafka.streams.processor.api.Processor;
import org.apache.kafka.streams.processor.api.ProcessorContext;
import org.apache.kafka.streams.processor.api.Record;
import org.apache.kafka.streams.processor.api.RecordMetadata;

public final class SplitApp {

    static final String USAGE = String.join("\n",
        "usage: java -jar streams-split.jar --bootstrap HOST:PORT --source S --cutoff T",
        "           [--expect N] [--commit-interval-ms 100] [--application-id ID]",
        "           [--threads 1] [--exactly-once true|false] [--blue TOPIC] [--green TOPIC]",
        "           [--dlq TOPIC] [-X key=value]... [--quiet]",
        "",
        "A Kafka Streams application (exactly_once_v2) that splits topic S at the",
        "event-time cutoff T: a record whose JSON value has a top-level \"ts\" (integer",
        "epoch ms) below T goes to S.blue, one with ts >= T to S.green, one whose ts",
        "cannot be read to S.dlq with the headers gate-proxy.source=\"S/P/OFFSET\" and",
        "gate-proxy.error. Key, value, headers and timestamp are kept; record S/p@o",
        "goes to partition p of its topic (p mod the topic's partition count), in",
        "source order. The colour topics must exist; the DLQ only if it is needed.",
        "",
        "Options (each also as --name=value; there are no -D system properties):",
        "  --bootstrap HOST:PORT   bootstrap.servers (required)",
        "  --source S              the source topic (required)",
        "  --cutoff T              the cutoff, epoch ms (required)",
        "  --blue / --green / --dlq TOPIC   default S.blue, S.green, S.dlq",
        "  --commit-interval-ms N  commit.interval.ms (default 100, as gate-proxy's",
        "                          gate.commit.interval.ms)",
        "  --application-id ID     application.id, also the consumer group (default",
        "                          gp-streams-S-<epoch ms>: a new group on every run, so",
        "                          every run reads S from the beginning)",
        "  --threads N             num.stream.threads (default 1)",
        "  --exactly-once B        true (default): exactly_once_v2; false: at_least_once",
        "  --expect N              stop by itself once N records are processed and the",
        "                          consumer group's committed offsets cover them (a",
        "                          commit, i.e. a transaction, has completed), then close",
        "                          and exit 0. Without it: run until SIGTERM/SIGINT",
        "  -X key=value            any Streams, consumer. or producer. property",
        "                          (repeatable; overrides the settings below)",
        "  --quiet                 no progress lines",
        "  --help                  this text",
        "",
        "Settings: auto.offset.reset=earliest; producer linger.ms=5, batch.size=131072",
        "(larger batches, as a careful user sets for throughput; no compression);",
        "state.dir a fresh directory under /tmp, removed at exit; otherwise Kafka",
        "Streams 4.1 defaults. Logging: none (slf4j-nop).",
        "",
        "Output: every second on stderr, records so far and the rate over that",
        "second; a timing line on stderr at the end; on stdout at the end",
        "  streams: records=N seconds=S rate=R/s",
        "N the records processed (with --expect: when the N-th was reached), S from",
        "the first record processed to the commit that covers the N records (the",
        "moment they are visible to read_committed readers), R = N/S.",
        "With --expect, stderr also gets the second half alone (records N/2..N: the",
        "rate and the process CPU past most of the JIT's warm-up).",
        "Exit status: 0 done; 1 Kafka Streams failed (or did not commit in 60 s);",
        "2 usage error or a topic is missing.");

    static final long NO_TS = Long.MIN_VALUE;

    // ---- the event time ---------------------------------------------------

    static boolean ws(byte c) {
        return c == ' ' || c == '\t' || c == '\n' || c == '\r';
    }

    /**
     * The integer value of the top-level key "ts" of a JSON object, or NO_TS.
     * A minimal byte scan: tracks strings (with escapes) and nesting depth so
     * that only a key of the outer object matches, and reads an optional '-'
     * and 1 to 18 digits not followed by a fraction or an exponent. It does not
     * validate the rest of the document.
     */
    static long readTs(byte[] v) {
        if (v == null) return NO_TS;
        final int n = v.length;
        int i = 0;
        while (i < n && ws(v[i])) i++;
        if (i >= n || v[i] != '{') return NO_TS;
        i++;
        int depth = 1;
        while (i < n) {
            byte c = v[i];
            if (c == '"') {
                int start = i + 1, j = start;
                while (j < n) {
                    byte d = v[j];
                    if (d == '\\') { j += 2; continue; }
                    if (d == '"') break;
                    j++;
                }
                if (j >= n) return NO_TS;
                if (depth == 1 && j - start == 2 && v[start] == 't' && v[start + 1] == 's') {
                    int k = j + 1;
                    while (k < n && ws(v[k])) k++;
                    if (k < n && v[k] == ':') {
                        k++;
                        while (k < n && ws(v[k])) k++;
                        return readLong(v, k);
                    }
                }
                i = j + 1;
                continue;
            }
            if (c == '{' || c == '[') {
                depth++;
            } else if (c == '}' || c == ']') {
                if (--depth == 0) return NO_TS;
            }
            i++;
        }
        return NO_TS;
    }

    static long readLong(byte[] v, int k) {
        final int n = v.length;
        boolean neg = false;
        if (k < n && v[k] == '-') { neg = true; k++; }
        int d0 = k;
        long x = 0;
        while (k < n && v[k] >= '0' && v[k] <= '9') {
            if (k - d0 >= 18) return NO_TS;
            x = x * 10 + (v[k] - '0');
            k++;
        }
        if (k == d0) return NO_TS;
        if (k < n && (v[k] == '.' || v[k] == 'e' || v[k] == 'E')) return NO_TS;
        return neg ? -x : x;
    }

    // ---- the topology -----------------------------------------------------

    /** A value with where it goes: the sink's topic and partition. */
    static final class Routed {
        final byte[] value;
        final String topic;
        final int partition;

        Routed(byte[] value, String topic, int partition) {
            this.value = value;
            this.topic = topic;
            this.partition = partition;
        }
    }

    /** Writes the value bytes as read; the routing is not serialized. */
    static final class RoutedSerde implements Serde<Routed> {
        @Override
        public Serializer<Routed> serializer() {
            return (topic, r) -> r == null ? null : r.value;
        }

        @Override
        public Deserializer<Routed> deserializer() {
            return (topic, data) -> {
                throw new UnsupportedOperationException("Routed is never read");
            };
        }
    }

    /** Counters shared by the stream threads and the main thread. */
    static final class Stats {
        final LongAdder processed = new LongAdder();
        final LongAdder dead = new LongAdder();
        final AtomicLong firstNanos = new AtomicLong(0);
        /** per source partition: offset + 1 of the last record processed */
        final AtomicLongArray next;

        Stats(int partitions) {
            next = new AtomicLongArray(partitions);
        }
    }

    static final class Router implements Processor<byte[], byte[], byte[], Routed> {
        private final String source, blue, green, dlq;
        private final long cutoff;
        private final Stats stats;
        private ProcessorContext<byte[], Routed> ctx;

        Router(String source, String blue, String green, String dlq, long cutoff, Stats stats) {
            this.source = source;
            this.blue = blue;
            this.green = green;
            this.dlq = dlq;
            this.cutoff = cutoff;
            this.stats = stats;
        }

        @Override
        public void init(ProcessorContext<byte[], Routed> context) {
            this.ctx = context;
        }

        @Override
        public void process(Record<byte[], byte[]> r) {
            if (stats.firstNanos.get() == 0) stats.firstNanos.compareAndSet(0, System.nanoTime());
            RecordMetadata md = ctx.recordMetadata().orElseThrow();
            int p = md.partition();
            long ts = readTs(r.value());
            if (ts != NO_TS) {
                ctx.forward(r.withValue(new Routed(r.value(), ts < cutoff ? blue : green, p)));
            } else {
                // A copy: the input record's headers object is shared with its
                // record context.
                RecordHeaders h = new RecordHeaders(r.headers().toArray());
                h.add("gate-proxy.source",
                      (md.topic() + "/" + p + "/" + md.offset()).getBytes(StandardCharsets.UTF_8));
                h.add("gate-proxy.error",
                      "event time: no integer top-level \"ts\" in the JSON value"
                          .getBytes(StandardCharsets.UTF_8));
                ctx.forward(r.withValue(new Routed(r.value(), dlq, p)).withHeaders(h));
                stats.dead.increment();
            }
            if (p < stats.next.length()) stats.next.lazySet(p, md.offset() + 1);
            stats.processed.increment();
        }
    }

    /** Partition p of the sink topic for source partition p (mod its count). */
    static final class SamePartition implements StreamPartitioner<byte[], Routed> {
        private final Map<Integer, Optional<Set<Integer>>> cache = new java.util.concurrent.ConcurrentHashMap<>();

        @Override
        public Optional<Set<Integer>> partitions(String topic, byte[] key, Routed v, int numPartitions) {
            int p = v.partition < numPartitions ? v.partition : v.partition % numPartitions;
            return cache.computeIfAbsent(p, q -> Optional.of(Set.of(q)));
        }
    }

    static Topology topology(String source, String blue, String green, String dlq, long cutoff,
                             Stats stats) {
        StreamsBuilder b = new StreamsBuilder();
        TopicNameExtractor<byte[], Routed> where = (k, v, rc) -> v.topic;
        b.stream(source, Consumed.with(Serdes.ByteArray(), Serdes.ByteArray()))
         .process(() -> new Router(source, blue, green, dlq, cutoff, stats))
         .to(where, Produced.with(Serdes.ByteArray(), new RoutedSerde())
                            .withStreamPartitioner(new SamePartition()));
        return b.build();
    }

    // ---- the command line ---------------------------------------------------

    static final class Usage extends Exception {
        Usage(String m) {
            super(m);
        }
    }

    static final class Opts {
        String bootstrap, source, blue, green, dlq, appId;
        Long cutoff;
        long expect = -1;
        long commitMs = 100;
        int threads = 1;
        boolean eos = true, quiet = false, help = false;
        final Map<String, String> extra = new HashMap<>();
    }

    static long num(String name, String v, long min, long max) throws Usage {
        long x;
        try {
            x = Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw new Usage(name + ": '" + v + "' is not an integer");
        }
        if (x < min || x > max) throw new Usage(name + ": " + x + " is not in [" + min + ", " + max + "]");
        return x;
    }

    static Opts parse(String[] args) throws Usage {
        Opts o = new Opts();
        for (int i = 0; i < args.length; i++) {
            String a = args[i], v = null;
            if (a.equals("--help") || a.equals("-h")) { o.help = true; continue; }
            if (a.equals("--quiet")) { o.quiet = true; continue; }
            int eq = a.indexOf('=');
            if (a.startsWith("--") && eq > 0) {
                v = a.substring(eq + 1);
                a = a.substring(0, eq);
            } else if (a.equals("-X") || a.startsWith("--")) {
                if (i + 1 >= args.length) throw new Usage(a + " needs a value");
                v = args[++i];
            } else {
                throw new Usage("unexpected argument '" + a + "'");
            }
            switch (a) {
                case "--bootstrap": o.bootstrap = v; break;
                case "--source": o.source = v; break;
                case "--blue": o.blue = v; break;
                case "--green": o.green = v; break;
                case "--dlq": o.dlq = v; break;
                case "--application-id": o.appId = v; break;
                case "--cutoff": o.cutoff = num(a, v, Long.MIN_VALUE + 1, Long.MAX_VALUE); break;
                case "--expect": o.expect = num(a, v, 1, Long.MAX_VALUE); break;
                case "--commit-interval-ms": o.commitMs = num(a, v, 1, 3_600_000); break;
                case "--threads": o.threads = (int) num(a, v, 1, 256); break;
                case "--exactly-once":
                    if (v.equals("true")) o.eos = true;
                    else if (v.equals("false")) o.eos = false;
                    else throw new Usage("--exactly-once: '" + v + "' is not true or false");
                    break;
                case "-X": {
                    int e = v.indexOf('=');
                    if (e <= 0) throw new Usage("-X: '" + v + "' is not key=value");
                    o.extra.put(v.substring(0, e), v.substring(e + 1));
                    break;
                }
                default: throw new Usage("unknown option " + a);
            }
        }
        if (o.help) return o;
        if (o.bootstrap == null) throw new Usage("--bootstrap is required");
        if (o.source == null) throw new Usage("--source is required");
        if (o.cutoff == null) throw new Usage("--cutoff is required");
        if (o.blue == null) o.blue = o.source + ".blue";
        if (o.green == null) o.green = o.source + ".green";
        if (o.dlq == null) o.dlq = o.source + ".dlq";
        if (o.appId == null) o.appId = "gp-streams-" + o.source + "-" + System.currentTimeMillis();
        return o;
    }

    // ---- main -----------------------------------------------------------------

    static void err(String s) {
        System.err.println("streams: " + s);
    }

    static void deleteTree(Path p) {
        try (Stream<Path> s = Files.walk(p)) {
            s.sorted(Comparator.reverseOrder()).forEach(q -> q.toFile().delete());
        } catch (IOException e) {
            // best effort
        }
    }

    /** Partition counts of the topics (absent: the topic does not exist). */
    static Map<String, Integer> partitionCounts(Admin admin, List<String> topics) throws Exception {
        Map<String, Integer> out = new HashMap<>();
        var res = admin.describeTopics(topics).topicNameValues();
        for (String t : topics) {
            try {
                TopicDescription d = res.get(t).get(30, TimeUnit.SECONDS);
                out.put(t, d.partitions().size());
            } catch (java.util.concurrent.ExecutionException e) {
                if (!(e.getCause() instanceof UnknownTopicOrPartitionException)) throw e;
            }
        }
        return out;
    }

    /** Counted down when main is done; a shutdown hook (SIGTERM) waits for it. */
    static final CountDownLatch FINISHED = new CountDownLatch(1);
    static volatile boolean shuttingDown = false;

    public static void main(String[] args) throws Exception {
        int rc = 1;
        try {
            rc = run(args);
        } finally {
            FINISHED.countDown();
        }
        // After SIGTERM/SIGINT the JVM is already exiting (status 128+signal);
        // System.exit would block behind the hook.
        if (!shuttingDown) System.exit(rc);
    }

    static int run(String[] args) throws Exception {
        final long jvmStartMs = ManagementFactory.getRuntimeMXBean().getStartTime();
        Opts o;
        try {
            o = parse(args);
        } catch (Usage u) {
            err(u.getMessage());
            System.err.println(USAGE);
            return 2;
        }
        if (o.help) {
            System.out.println(USAGE);
            return 0;
        }

        Path stateDir = Files.createTempDirectory(Path.of("/tmp"), "gp-streams-state-");
        Properties props = new Properties();
        props.put(StreamsConfig.APPLICATION_ID_CONFIG, o.appId);
        props.put(StreamsConfig.BOOTSTRAP_SERVERS_CONFIG, o.bootstrap);
        props.put(StreamsConfig.PROCESSING_GUARANTEE_CONFIG,
                  o.eos ? StreamsConfig.EXACTLY_ONCE_V2 : StreamsConfig.AT_LEAST_ONCE);
        props.put(StreamsConfig.COMMIT_INTERVAL_MS_CONFIG, Long.toString(o.commitMs));
        props.put(StreamsConfig.NUM_STREAM_THREADS_CONFIG, Integer.toString(o.threads));
        props.put(StreamsConfig.STATE_DIR_CONFIG, stateDir.toString());
        props.put(StreamsConfig.consumerPrefix(ConsumerConfig.AUTO_OFFSET_RESET_CONFIG), "earliest");
        props.put(StreamsConfig.producerPrefix(ProducerConfig.LINGER_MS_CONFIG), "5");
        props.put(StreamsConfig.producerPrefix(ProducerConfig.BATCH_SIZE_CONFIG), "131072");
        props.putAll(o.extra);

        StreamsConfig sc = new StreamsConfig(props);
        Admin admin = Admin.create(sc.getAdminConfigs(o.appId + "-bench-admin"));
        try {
            Map<String, Integer> parts = partitionCounts(admin, List.of(o.source, o.blue, o.green, o.dlq));
            for (String t : List.of(o.source, o.blue, o.green)) {
                if (!parts.containsKey(t)) {
                    err("topic " + t + " does not exist (create it first; auto-creation is not assumed)");
                    return 2;
                }
            }
            if (!parts.containsKey(o.dlq))
                err("note: dead-letter topic " + o.dlq + " does not exist; a record without a readable ts will fail the application");
            int srcParts = parts.get(o.source);
            for (String t : List.of(o.blue, o.green))
                if (parts.get(t) != srcParts)
                    err("note: " + t + " has " + parts.get(t) + " partitions, " + o.source + " has " + srcParts
                        + ": records go to partition p mod " + parts.get(t));
            return runStreams(o, props, admin, srcParts, stateDir, jvmStartMs);
        } finally {
            admin.close(Duration.ofSeconds(5));
            deleteTree(stateDir);
        }
    }

    /** CPU time of the whole JVM process (all threads, JIT and GC too), or -1. */
    static long cpuNanos() {
        var os = ManagementFactory.getOperatingSystemMXBean();
        if (os instanceof com.sun.management.OperatingSystemMXBean)
            return ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime();
        return -1;
    }

    static String fmtRate(double r) {
        return String.format("%.0f", r);
    }

    static int runStreams(Opts o, Properties props, Admin admin, int srcParts, Path stateDir,
                          long jvmStartMs) throws Exception {
        Stats stats = new Stats(srcParts);
        Topology topo = topology(o.source, o.blue, o.green, o.dlq, o.cutoff, stats);
        KafkaStreams ks = new KafkaStreams(topo, props);

        AtomicReference<Throwable> failure = new AtomicReference<>();
        ks.setUncaughtExceptionHandler(e -> {
            failure.compareAndSet(null, e);
            return StreamsUncaughtExceptionHandler.StreamThreadExceptionResponse.SHUTDOWN_CLIENT;
        });
        AtomicLong runningMs = new AtomicLong(0);
        ks.setStateListener((now, old) -> {
            if (now == KafkaStreams.State.RUNNING) runningMs.compareAndSet(0, System.currentTimeMillis());
        });

        CountDownLatch stopped = new CountDownLatch(1);
        Thread hook = new Thread(() -> {
            shuttingDown = true;
            stopped.countDown();
            try {
                FINISHED.await(90, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "gp-streams-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        ks.start();
        final long startNanos = System.nanoTime();
        long lastPrint = startNanos, lastCount = 0;
        long doneNanos = 0, committedNanos = 0, atN = 0;
        long halfNanos = 0, halfCount = 0, halfCpu = -1, endCpu = -1;
        long[] target = null;
        long nextPoll = 0;
        boolean bySignal = false;
        int rc = 0;

        while (true) {
            if (stopped.await(10, TimeUnit.MILLISECONDS)) { bySignal = true; break; }
            KafkaStreams.State st = ks.state();
            if (st == KafkaStreams.State.ERROR || st == KafkaStreams.State.PENDING_ERROR
                || st == KafkaStreams.State.NOT_RUNNING || st == KafkaStreams.State.PENDING_SHUTDOWN) {
                Throwable t = failure.get();
                err("Kafka Streams stopped (state " + st + ")" + (t != null ? ": " + t : ""));
                rc = 1;
                break;
            }
            long now = System.nanoTime();
            long count = stats.processed.sum();
            if (!o.quiet && now - lastPrint >= 1_000_000_000L) {
                double dt = (now - lastPrint) / 1e9;
                err(String.format("%.1f s records=%d rate=%s/s state=%s", (now - startNanos) / 1e9, count,
                                  fmtRate((count - lastCount) / dt), st));
                lastPrint = now;
                lastCount = count;
            }
            if (o.expect > 0 && halfNanos == 0 && count >= (o.expect + 1) / 2) {
                halfNanos = now;
                halfCount = count;
                halfCpu = cpuNanos();
            }
            if (o.expect > 0 && target == null && count >= o.expect) {
                doneNanos = now;
                atN = count;
                target = new long[srcParts];
                for (int p = 0; p < srcParts; p++) target[p] = stats.next.get(p);
            }
            if (target != null && now >= nextPoll) {
                nextPoll = now + 10_000_000L;
                Map<TopicPartition, OffsetAndMetadata> c =
                    admin.listConsumerGroupOffsets(o.appId).partitionsToOffsetAndMetadata().get(10, TimeUnit.SECONDS);
                boolean all = true;
                for (int p = 0; p < srcParts && all; p++) {
                    if (target[p] == 0) continue;
                    OffsetAndMetadata om = c.get(new TopicPartition(o.source, p));
                    if (om == null || om.offset() < target[p]) all = false;
                }
                if (all) {
                    committedNanos = System.nanoTime();
                    endCpu = cpuNanos();
                    break;
                }
                if (now - doneNanos > 60_000_000_000L) {
                    err("the committed offsets did not reach the processed ones within 60 s");
                    rc = 1;
                    break;
                }
            }
        }

        long closeStart = System.nanoTime();
        boolean closed = ks.close(Duration.ofSeconds(60));
        long closeEnd = System.nanoTime();
        if (!closed) {
            err("KafkaStreams.close() timed out");
            rc = 1;
        }
        if (failure.get() != null && rc == 0) rc = 1;

        long first = stats.firstNanos.get();
        long records = o.expect > 0 && atN > 0 ? atN : stats.processed.sum();
        long end = committedNanos != 0 ? committedNanos : closeEnd;
        double secs = first == 0 ? 0 : (end - first) / 1e9;
        long firstWallMs = first == 0 ? 0
            : System.currentTimeMillis() - (System.nanoTime() - first) / 1_000_000;
        err(String.format(
            "timing: jvm-start->running=%s ms jvm-start->first-record=%s ms process=%.3f s "
                + "commit-wait=%.0f ms close=%.0f ms dead-lettered=%d%s",
            runningMs.get() == 0 ? "-" : Long.toString(runningMs.get() - jvmStartMs),
            first == 0 ? "-" : Long.toString(firstWallMs - jvmStartMs),
            doneNanos != 0 && first != 0 ? (doneNanos - first) / 1e9 : 0.0,
            committedNanos != 0 ? (committedNanos - doneNanos) / 1e6 : 0.0,
            (closeEnd - closeStart) / 1e6, stats.dead.sum(),
            bySignal ? " (stopped by a signal)" : ""));
        if (halfNanos != 0 && committedNanos != 0) {
            // The second half alone: past the JIT's warm-up, a steadier rate.
            double hs = (committedNanos - halfNanos) / 1e9;
            long hn = records - halfCount;
            String cpu = halfCpu >= 0 && endCpu >= 0
                ? String.format(" cpu=%.3f s (%.2f us/record, %.0f%% of one core)", (endCpu - halfCpu) / 1e9,
                                (endCpu - halfCpu) / 1e3 / Math.max(hn, 1), 100.0 * (endCpu - halfCpu) / 1e9 / hs)
                : "";
            err(String.format("second half: records=%d seconds=%.3f rate=%s/s%s", hn, hs,
                              fmtRate(hs > 0 ? hn / hs : 0), cpu));
        }
        long totalCpu = cpuNanos();
        if (totalCpu >= 0) err(String.format("process cpu since jvm start: %.3f s", totalCpu / 1e9));
        System.out.println(String.format("streams: records=%d seconds=%.3f rate=%s/s", records, secs,
                                         fmtRate(secs > 0 ? records / secs : 0)));
        System.out.flush();
        if (!bySignal) {
            try {
                Runtime.getRuntime().removeShutdownHook(hook);
            } catch (IllegalStateException e) {
                // a signal arrived just now: the hook waits for FINISHED
            }
        }
        return rc;
    }
}
