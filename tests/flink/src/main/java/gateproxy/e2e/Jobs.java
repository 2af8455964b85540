package gateproxy.e2e;

import java.nio.charset.StandardCharsets;
import java.time.Duration;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.serialization.AbstractDeserializationSchema;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.connector.kafka.source.reader.deserializer.KafkaRecordDeserializationSchema;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * The three reference jobs, each built by one factory from a {@link Spec} that
 * names the deployment's colour. They read {@code S.<colour>} read_committed
 * from the colour's group offsets (earliest when the group has none) and write
 * through an exactly-once KafkaSink:
 * <ul>
 * <li>STATELESS: every record, enriched ({@code S,id,key,2v+1,ts});</li>
 * <li>WINDOW: per key, event-time tumbling windows with count and sum
 * ({@code W,key,start,count,sum});</li>
 * <li>RUNNING: per key, the running total of v, emitted on every record
 * ({@code R,key,id,total}).</li>
 * </ul>
 * What a hand-over needs of a job is in its uids and restore settings, never
 * in its code: the source and the sink have a uid of their own colour, the
 * state keeps one uid across colours where the path carries state over.
 */
public final class Jobs {
    private Jobs() {}

    public enum Kind {
        STATELESS, WINDOW, RUNNING;

        public String tag() { return name().toLowerCase(); }
    }

    /** One deployment of one job. */
    public static final class Spec {
        public Kind kind;
        public String bootstrap;
        public String sourceTopic;
        public String group;
        public String outTopic;
        public String txnPrefix;
        public String sourceUid;
        public String stateUid;
        public String sinkUid;
        public int parallelism = 2;
        public long windowMs = 2000;
        public long boundMs = 500;
        /** withIdleness: only for the negative control that shows why not. */
        public long idleMs = 0;

        /**
         * A job of colour {@code colour} reading {@code source} and writing
         * {@code out}. {@code stateShared}: the state's uid is the same in
         * both colours, so a job restored from the other colour's savepoint
         * takes its state over; otherwise the state's uid has the colour too.
         */
        public static Spec of(Kind kind, String bootstrap, String run, String colour, String source,
                              String out, boolean stateShared) {
            Spec s = new Spec();
            s.kind = kind;
            s.bootstrap = bootstrap;
            s.sourceTopic = source;
            s.outTopic = out;
            s.group = run + "-" + colour; // one group per colour, each job on its own topic
            s.txnPrefix = run + "-" + kind.tag() + "-" + colour;
            s.sourceUid = "source-" + colour;
            s.sinkUid = "sink-" + colour;
            s.stateUid = stateShared ? "state" : "state-" + colour;
            return s;
        }
    }

    /** A source record: {"id":N,"k":"kI","ts":MS,"v":N}. */
    public static final class Rec {
        public long id;
        public String k;
        public long ts;
        public long v;

        public Rec() {}

        static Rec parse(String s) {
            Rec r = new Rec();
            r.id = num(s, "\"id\":");
            r.ts = num(s, "\"ts\":");
            r.v = num(s, "\"v\":");
            int i = s.indexOf("\"k\":\"") + 5, j = s.indexOf('"', i);
            if (i < 5 || j < 0)
                throw new IllegalArgumentException("no key in " + s);
            r.k = s.substring(i, j);
            return r;
        }

        private static long num(String s, String field) {
            int i = s.indexOf(field);
            if (i < 0)
                throw new IllegalArgumentException("no " + field + " in " + s);
            i += field.length();
            int j = i;
            while (j < s.length() && (Character.isDigit(s.charAt(j)) || s.charAt(j) == '-'))
                j++;
            return Long.parseLong(s.substring(i, j));
        }

        static String format(long id, String k, long ts, long v) {
            return "{\"id\":" + id + ",\"k\":\"" + k + "\",\"ts\":" + ts + ",\"v\":" + v + "}";
        }
    }

    /**
     * The jobs (by {@link Spec#txnPrefix}) whose next source record fails
     * them: a task exception, as a bug in the job would throw. For the
     * operator stand-in's faults (Operator.java); the jobs run in this JVM's
     * MiniCluster, so they see this set.
     */
    static final java.util.Set<String> FAIL = java.util.concurrent.ConcurrentHashMap.newKeySet();

    /** Fails job {@code txnPrefix} at the next record it reads ({@link #FAIL}); {@link #recover} undoes it. */
    public static void failNext(String txnPrefix) {
        FAIL.add(txnPrefix);
    }

    public static void recover(String txnPrefix) {
        FAIL.remove(txnPrefix);
    }

    static final class RecSchema extends AbstractDeserializationSchema<Rec> {
        private static final long serialVersionUID = 1L;
        private final String job;

        RecSchema(String job) {
            this.job = job;
        }

        @Override
        public Rec deserialize(byte[] b) {
            if (!FAIL.isEmpty() && FAIL.contains(job))
                throw new IllegalStateException("job " + job + " fails on purpose (a fault of the test harness)");
            return Rec.parse(new String(b, StandardCharsets.UTF_8));
        }
    }

    /** Adds the job of {@code s} to {@code env}. */
    @SuppressWarnings("deprecation") // OffsetResetStrategy: the connector's 5.0 signature
    public static void build(StreamExecutionEnvironment env, Spec s) {
        KafkaSource<Rec> source = KafkaSource.<Rec>builder()
                .setBootstrapServers(s.bootstrap)
                .setTopics(s.sourceTopic)
                .setGroupId(s.group)
                .setStartingOffsets(OffsetsInitializer.committedOffsets(
                        org.apache.kafka.clients.consumer.OffsetResetStrategy.EARLIEST))
                .setProperty("isolation.level", "read_committed")
                .setDeserializer(KafkaRecordDeserializationSchema.valueOnly(new RecSchema(s.txnPrefix)))
                .build();
        WatermarkStrategy<Rec> wm = WatermarkStrategy.<Rec>forBoundedOutOfOrderness(
                Duration.ofMillis(s.boundMs)).withTimestampAssigner((r, t) -> r.ts);
        if (s.idleMs > 0)
            wm = wm.withIdleness(Duration.ofMillis(s.idleMs));
        DataStream<Rec> in = env.fromSource(source, wm, "source " + s.sourceTopic)
                .uid(s.sourceUid).setParallelism(s.parallelism);
        DataStream<String> out;
        switch (s.kind) {
        case STATELESS:
            out = in.map(r -> "S," + r.id + "," + r.k + "," + (2 * r.v + 1) + "," + r.ts)
                    .uid(s.stateUid).name("enrich");
            break;
        case WINDOW:
            out = in.keyBy(r -> r.k)
                    .window(TumblingEventTimeWindows.of(Duration.ofMillis(s.windowMs)))
                    .process(new CountSum()).uid(s.stateUid).name("window");
            break;
        default:
            out = in.keyBy(r -> r.k).process(new RunningTotal()).uid(s.stateUid).name("total");
        }
        KafkaSink<String> sink = KafkaSink.<String>builder()
                .setBootstrapServers(s.bootstrap)
                .setRecordSerializer(KafkaRecordSerializationSchema.builder()
                        .setTopic(s.outTopic)
                        .setValueSerializationSchema(new SimpleStringSchema())
                        .build())
                .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                .setTransactionalIdPrefix(s.txnPrefix)
                .setProperty("transaction.timeout.ms", "60000")
                .build();
        out.sinkTo(sink).uid(s.sinkUid).name("sink " + s.outTopic);
    }

    static final class CountSum extends ProcessWindowFunction<Rec, String, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<Rec> recs, Collector<String> out) {
            long n = 0, sum = 0;
            for (Rec r : recs) {
                n++;
                sum += r.v;
            }
            out.collect("W," + key + "," + ctx.window().getStart() + "," + n + "," + sum);
        }
    }

    static final class RunningTotal extends KeyedProcessFunction<String, Rec, String> {
        private transient ValueState<Long> total;

        @Override
        public void open(OpenContext ctx) {
            total = getRuntimeContext().getState(new ValueStateDescriptor<>("total", Long.class));
        }

        @Override
        public void processElement(Rec r, Context ctx, Collector<String> out) throws Exception {
            Long t = total.value();
            long now = (t == null ? 0 : t) + r.v;
            total.update(now);
            out.collect("R," + r.k + "," + r.id + "," + now);
        }
    }
}
