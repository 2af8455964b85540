package example;

import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.serialization.SimpleStringSchema;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.connector.base.DeliveryGuarantee;
import org.apache.flink.connector.kafka.sink.KafkaRecordSerializationSchema;
import org.apache.flink.connector.kafka.sink.KafkaSink;
import org.apache.flink.connector.kafka.source.KafkaSource;
import org.apache.flink.connector.kafka.source.enumerator.initializer.OffsetsInitializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

/**
 * Orders per customer per minute, as a job that gate-proxy hands over from one
 * deployment to the next. Nothing in it knows about gate-proxy: what the
 * hand-over needs is configuration (deploy/README.md, "The Flink jobs").
 *
 * <pre>
 *   --colour blue|green     this deployment's colour; default: the -blue/-green
 *                           suffix of kubernetes.cluster-id, which the operator
 *                           gives each child of a FlinkBlueGreenDeployment
 *   --path exact|operator   how hand-overs are done (default exact): with the
 *                           operator's sequence the window state is per colour
 *   --bootstrap HOST:PORT   Kafka (default localhost:9092)
 *   --topic orders          the source topic gate-proxy reads; this job reads
 *                           orders.&lt;colour&gt;
 *   --out orders-per-minute the output topic
 * </pre>
 *
 * Records are JSON with the event time in epoch milliseconds in "ts" and the
 * customer in "customer", for example {"customer":"c7","ts":1700000000000}.
 */
public final class OrdersJob {
    static final long WINDOW_MS = 60_000, OUT_OF_ORDERNESS_MS = 2_000;
    static final ConfigOption<String> CLUSTER_ID =
            ConfigOptions.key("kubernetes.cluster-id").stringType().noDefaultValue();

    public static void main(String[] argv) throws Exception {
        Map<String, String> a = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2)
            a.put(argv[i].replaceFirst("^--", ""), argv[i + 1]);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        String colour = a.getOrDefault("colour", colourOf(env.getConfiguration().get(CLUSTER_ID)));
        if (!colour.equals("blue") && !colour.equals("green"))
            throw new IllegalArgumentException("--colour is blue or green, not " + colour);
        boolean exactPath = !a.getOrDefault("path", "exact").equals("operator");
        String bootstrap = a.getOrDefault("bootstrap", "localhost:9092");
        String topic = a.getOrDefault("topic", "orders");
        String out = a.getOrDefault("out", "orders-per-minute");

        // 1. Only this colour's topic, read_committed, from this colour's
        //    group offsets (earliest for the first job of a colour). The uid
        //    has the colour, so a job restored from the other colour's
        //    savepoint (with allowNonRestoredState) does not keep reading
        //    the other colour's topic.
        KafkaSource<String> source = KafkaSource.<String>builder()
                .setBootstrapServers(bootstrap)
                .setTopics(topic + "." + colour)
                .setGroupId(topic + "-" + colour)
                .setStartingOffsets(committedOrEarliest())
                .setProperty("isolation.level", "read_committed")
                .setValueOnlyDeserializer(new SimpleStringSchema())
                .build();
        // 2. Event time with a bounded out-of-orderness and no withIdleness: an
        //    idle source would swallow the drain's final watermark.
        DataStream<String> orders = env.fromSource(source,
                WatermarkStrategy.<String>forBoundedOutOfOrderness(Duration.ofMillis(OUT_OF_ORDERNESS_MS))
                        .withTimestampAssigner((v, t) -> field(v, "ts")), "orders " + colour)
                .uid("orders-source-" + colour);
        // 3. The window's uid: the same in both colours on the exact path (the
        //    new job fires the windows the old one had open), per colour with
        //    the operator's sequence (a restored window would fire half-full).
        DataStream<String> counts = orders
                .keyBy(v -> customer(v))
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(WINDOW_MS)))
                .process(new Count())
                .uid(exactPath ? "orders-per-minute" : "orders-per-minute-" + colour);
        // 4. Exactly-once into the output, with a sink uid and a transactional
        //    prefix of this colour, so that the two jobs never fence each
        //    other, and a transaction timeout under the broker's maximum.
        counts.sinkTo(KafkaSink.<String>builder()
                        .setBootstrapServers(bootstrap)
                        .setRecordSerializer(KafkaRecordSerializationSchema.builder()
                                .setTopic(out).setValueSerializationSchema(new SimpleStringSchema()).build())
                        .setDeliveryGuarantee(DeliveryGuarantee.EXACTLY_ONCE)
                        .setTransactionalIdPrefix(out + "-" + colour)
                        .setProperty("transaction.timeout.ms", "600000")
                        .build())
                .uid("orders-sink-" + colour);
        env.execute("orders per minute (" + colour + ")");
    }

    @SuppressWarnings("deprecation") // the connector's 5.0 signature takes OffsetResetStrategy
    static OffsetsInitializer committedOrEarliest() {
        return OffsetsInitializer.committedOffsets(org.apache.kafka.clients.consumer.OffsetResetStrategy.EARLIEST);
    }

    static String colourOf(String clusterId) {
        if (clusterId != null && clusterId.endsWith("-blue"))
            return "blue";
        if (clusterId != null && clusterId.endsWith("-green"))
            return "green";
        throw new IllegalArgumentException("no --colour, and kubernetes.cluster-id (" + clusterId
                + ") does not end in -blue or -green");
    }

    static long field(String json, String name) {
        int i = json.indexOf("\"" + name + "\":");
        if (i < 0)
            throw new IllegalArgumentException("no " + name + " in " + json);
        i += name.length() + 3;
        int j = i;
        while (j < json.length() && Character.isDigit(json.charAt(j)))
            j++;
        return Long.parseLong(json.substring(i, j));
    }

    static String customer(String json) {
        int i = json.indexOf("\"customer\":\"");
        if (i < 0)
            return "";
        i += 12;
        return json.substring(i, json.indexOf('"', i));
    }

    static final class Count extends ProcessWindowFunction<String, String, String, TimeWindow> {
        @Override
        public void process(String customer, Context ctx, Iterable<String> orders, Collector<String> out) {
            long n = 0;
            for (String ignored : orders)
                n++;
            out.collect("{\"customer\":\"" + customer + "\",\"minute\":" + ctx.window().getStart()
                    + ",\"orders\":" + n + "}");
        }
    }
}
