package gateproxy.e2e;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.NewTopic;
import org.apache.kafka.clients.admin.OffsetSpec;
import org.apache.kafka.clients.consumer.ConsumerRecord;
import org.apache.kafka.clients.consumer.KafkaConsumer;
import org.apache.kafka.clients.consumer.OffsetAndMetadata;
import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.serialization.StringDeserializer;
import org.apache.kafka.common.serialization.StringSerializer;

/** What the tests ask of the broker, with the Kafka Java client. */
public final class Kafka implements AutoCloseable {
    private final String bootstrap;
    private final Admin admin;

    public Kafka(String bootstrap) {
        this.bootstrap = bootstrap;
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        admin = Admin.create(p);
    }

    public void createTopics(int partitions, String... names) throws Exception {
        List<NewTopic> l = new ArrayList<>();
        for (String n : names)
            l.add(new NewTopic(n, partitions, (short) 1));
        admin.createTopics(l).all().get(30, TimeUnit.SECONDS);
        // The controller has them; the broker's metadata, which the proxy
        // reads, may follow a moment later.
        long end = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        for (;;) {
            try {
                var d = admin.describeTopics(List.of(names)).allTopicNames().get(10, TimeUnit.SECONDS);
                if (d.values().stream().allMatch(t -> t.partitions().size() == partitions
                        && t.partitions().stream().allMatch(q -> q.leader() != null)))
                    return;
            } catch (java.util.concurrent.ExecutionException e) {
                // UnknownTopicOrPartition while the metadata catches up
            }
            if (System.nanoTime() > end)
                throw new IllegalStateException("topics not visible in the broker's metadata "
                        + "after 30 s: " + String.join(",", names));
            Thread.sleep(50);
        }
    }

    public KafkaProducer<String, String> producer() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.serializer", StringSerializer.class.getName());
        p.put("value.serializer", StringSerializer.class.getName());
        p.put("linger.ms", "5");
        p.put("enable.idempotence", "true");
        return new KafkaProducer<>(p);
    }

    private KafkaConsumer<String, String> consumer() {
        Properties p = new Properties();
        p.put("bootstrap.servers", bootstrap);
        p.put("key.deserializer", StringDeserializer.class.getName());
        p.put("value.deserializer", StringDeserializer.class.getName());
        p.put("isolation.level", "read_committed");
        p.put("enable.auto.commit", "false");
        return new KafkaConsumer<>(p);
    }

    private List<TopicPartition> partitions(KafkaConsumer<?, ?> c, String topic) {
        List<TopicPartition> l = new ArrayList<>();
        c.partitionsFor(topic, Duration.ofSeconds(30)).forEach(i -> l.add(new TopicPartition(topic, i.partition())));
        return l;
    }

    /** Every committed record of {@code topic}, read_committed, partition by partition. */
    public List<ConsumerRecord<String, String>> readAll(String topic) {
        try (KafkaConsumer<String, String> c = consumer()) {
            List<TopicPartition> tps = partitions(c, topic);
            c.assign(tps);
            c.seekToBeginning(tps);
            Map<TopicPartition, Long> end = c.endOffsets(tps); // the last stable offsets
            List<ConsumerRecord<String, String>> out = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (!reached(c, end)) {
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException("reading " + topic + " did not reach " + end);
                c.poll(Duration.ofMillis(200)).forEach(out::add);
            }
            return out;
        }
    }

    private static boolean reached(KafkaConsumer<?, ?> c, Map<TopicPartition, Long> end) {
        for (var e : end.entrySet())
            if (c.position(e.getKey()) < e.getValue())
                return false;
        return true;
    }

    /** The log-end offsets of {@code topic}. */
    public Map<TopicPartition, Long> ends(String topic) throws Exception {
        Map<TopicPartition, OffsetSpec> q = new HashMap<>();
        for (var i : admin.describeTopics(List.of(topic)).allTopicNames().get(30, TimeUnit.SECONDS)
                .get(topic).partitions())
            q.put(new TopicPartition(topic, i.partition()), OffsetSpec.latest());
        Map<TopicPartition, Long> out = new HashMap<>();
        admin.listOffsets(q).all().get(30, TimeUnit.SECONDS).forEach((k, v) -> out.put(k, v.offset()));
        return out;
    }

    public Map<TopicPartition, OffsetAndMetadata> committed(String group) throws Exception {
        return admin.listConsumerGroupOffsets(group).partitionsToOffsetAndMetadata()
                .get(30, TimeUnit.SECONDS);
    }

    /**
     * True when {@code group} has consumed every committed record of the
     * topics: no record lies at or after its committed offset, as a
     * read_committed reader starting there sees (a Flink job commits the
     * offset after its last record, short of the transaction marker).
     */
    public boolean drained(String group, Collection<String> topics) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> com = committed(group);
        try (KafkaConsumer<String, String> c = consumer()) {
            List<TopicPartition> tps = new ArrayList<>();
            for (String t : topics)
                tps.addAll(partitions(c, t));
            c.assign(tps);
            for (TopicPartition tp : tps) {
                OffsetAndMetadata o = com.get(tp);
                c.seek(tp, o == null ? 0 : o.offset());
            }
            Map<TopicPartition, Long> end = c.endOffsets(tps);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!reached(c, end)) {
                if (!c.poll(Duration.ofMillis(100)).isEmpty())
                    return false;
                if (System.nanoTime() > deadline)
                    throw new IllegalStateException("drain probe of " + group + " did not reach " + end);
            }
            return true;
        }
    }

    /**
     * Where a job of {@code group} starting now from its committed offsets
     * (earliest where it has none) begins on {@code topic}, against the first
     * offsets of its era {@code era}: the committed records it would read
     * before the era (a repeat of an earlier era's records), or, negative, the
     * records of the era it would skip. 0: it starts exactly at the era.
     */
    public long offEra(String group, String topic, Map<TopicPartition, Long> era) throws Exception {
        Map<TopicPartition, OffsetAndMetadata> com = committed(group);
        long off = 0;
        try (KafkaConsumer<String, String> c = consumer()) {
            List<TopicPartition> tps = partitions(c, topic);
            Map<TopicPartition, Long> first = c.beginningOffsets(tps);
            for (TopicPartition tp : tps) {
                long from = com.containsKey(tp) ? com.get(tp).offset() : first.get(tp);
                long to = era.getOrDefault(tp, 0L);
                long lo = Math.min(from, to), hi = Math.max(from, to), n = 0;
                c.assign(List.of(tp));
                c.seek(tp, lo);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (c.position(tp) < hi) {
                    for (ConsumerRecord<String, String> r : c.poll(Duration.ofMillis(100)))
                        if (r.offset() < hi)
                            n++;
                    if (System.nanoTime() > deadline)
                        throw new IllegalStateException("reading " + tp + " to " + hi + " took over 30 s");
                }
                off += from <= to ? n : -n;
            }
        }
        return off;
    }

    /** Polls {@link #drained} until it holds; returns the milliseconds it took. */
    public long awaitDrained(String group, Collection<String> topics, Duration max) throws Exception {
        long t0 = System.nanoTime(), end = t0 + max.toNanos();
        while (!drained(group, topics)) {
            if (System.nanoTime() > end)
                throw new IllegalStateException("group " + group + " has not consumed " + topics
                        + " after " + max + "; committed: " + committed(group));
            Thread.sleep(200);
        }
        return (System.nanoTime() - t0) / 1_000_000;
    }

    @Override
    public void close() {
        admin.close();
    }
}
