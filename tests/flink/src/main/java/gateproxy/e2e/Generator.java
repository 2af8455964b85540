package gateproxy.e2e;

import java.util.Collection;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import org.apache.kafka.clients.producer.KafkaProducer;
import org.apache.kafka.clients.producer.ProducerRecord;

/**
 * The source records of the hand-over runs: every tick, one record per key to
 * every source topic; per key strictly increasing event time, the keys of a
 * partition out of order within 3/5 of the bound. {@code idle} leaves
 * partition 1 without records; {@code stop} ends it.
 */
final class Generator extends Thread {
    final AtomicBoolean stop = new AtomicBoolean(), idle = new AtomicBoolean();
    final AtomicLong sent = new AtomicLong();
    volatile Exception failed;

    private final Kafka kafka;
    private final Collection<String> sources;
    private final int partitions, keys;
    private final long tickMs, boundMs;

    Generator(Kafka kafka, Collection<String> sources, int partitions, int keys, long tickMs, long boundMs) {
        this.kafka = kafka;
        this.sources = sources;
        this.partitions = partitions;
        this.keys = keys;
        this.tickMs = tickMs;
        this.boundMs = boundMs;
    }

    @Override
    public void run() {
        long t0 = System.currentTimeMillis() / 1000 * 1000, id = 0;
        try (KafkaProducer<String, String> p = kafka.producer()) {
            for (long tick = 0; !stop.get(); tick++) {
                long due = t0 + tick * tickMs, now = System.currentTimeMillis();
                if (due > now)
                    Thread.sleep(due - now);
                for (int i = 0; i < keys; i++) {
                    int part = i % partitions;
                    if (part == 1 && idle.get())
                        continue;
                    long ts = due - (i * 37L) % (boundMs * 3 / 5);
                    id++;
                    String v = Jobs.Rec.format(id, "k" + i, ts, id % 97 + 1);
                    for (String s : sources)
                        p.send(new ProducerRecord<>(s, part, ts, "k" + i, v));
                    sent.incrementAndGet();
                }
            }
            p.flush();
        } catch (Exception e) {
            failed = e;
        }
    }
}
