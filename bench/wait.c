/* bench/wait.c: gp-benchwait, the stopwatch of make bench.
 *
 *   gp-benchwait --bootstrap B --group G --topic S --pid PID [--pid PID2 ...]
 *                [--timeout-s 600]
 *
 * Polls every 50 ms the offsets group G has committed on every partition
 * of S (as a read_committed reader: pending transactional commits are
 * waited for) until they reach S's end offsets. The clock starts at the
 * first commit seen (so the contender's start-up is left out) and stops
 * at the last; over that span it also samples process PID's CPU time
 * (/proc/PID/stat, user + system) and at the end its peak RSS (VmHWM).
 * With several --pid (the members of one consumer group), the CPU time is
 * the sum over them and the RSS the largest.
 * Prints, on one line:
 *   records=N seconds=S rate=R cpu_s=C cpu_s_per_m=CM rss_mb=M
 * N the records committed within the span. A progress line on stderr
 * every second. Exit 1 when PID dies first or the timeout passes.
 *
 *   gp-benchwait --bootstrap B --topic S --end
 *
 * prints the sum of S's end offsets (its record count when nothing was
 * deleted) and exits. */
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

static double now_s(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* user + system CPU seconds of pid, or -1 */
static double cpu_s(long pid) {
        char path[64], buf[4096];
        snprintf(path, sizeof path, "/proc/%ld/stat", pid);
        FILE *f = fopen(path, "r");
        if (!f)
                return -1;
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        fclose(f);
        buf[n] = '\0';
        char *p = strrchr(buf, ')');
        if (!p)
                return -1;
        unsigned long ut = 0, st = 0;
        /* fields after ')': state(3) ... utime(14) stime(15) */
        if (sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &ut, &st) !=
            2)
                return -1;
        return (double)(ut + st) / (double)sysconf(_SC_CLK_TCK);
}

static double rss_mb(long pid) {
        char path[64], line[256];
        snprintf(path, sizeof path, "/proc/%ld/status", pid);
        FILE *f = fopen(path, "r");
        double kb = -1;
        if (!f)
                return -1;
        while (fgets(line, sizeof line, f))
                if (!strncmp(line, "VmHWM:", 6))
                        kb = strtod(line + 6, NULL);
        fclose(f);
        return kb / 1024.0;
}

/* the CPU seconds of every pid together, or -1 (reported) when one is gone */
static double cpu_all(const long *pids, int n) {
        double sum = 0;
        for (int i = 0; i < n; i++) {
                double c = cpu_s(pids[i]);
                if (c < 0) {
                        fprintf(stderr, "gp-benchwait: process %ld is gone\n", pids[i]);
                        return -1;
                }
                sum += c;
        }
        return sum;
}

static double rss_all(const long *pids, int n) {
        double m = -1;
        for (int i = 0; i < n; i++) {
                double r = rss_mb(pids[i]);
                if (r > m)
                        m = r;
        }
        return m;
}

int main(int argc, char **argv) {
        const char *boot = NULL, *group = NULL, *topic = NULL;
        long pids[16], timeout = 600;
        int npids = 0;
        int o, end_only = 0;
        static const struct option opts[] = {
                {"bootstrap", required_argument, NULL, 'b'},
                {"group", required_argument, NULL, 'g'},
                {"topic", required_argument, NULL, 't'},
                {"pid", required_argument, NULL, 'p'},
                {"timeout-s", required_argument, NULL, 'T'},
                {"end", no_argument, NULL, 'e'},
                {NULL, 0, NULL, 0},
        };
        while ((o = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (o) {
                case 'b':
                        boot = optarg;
                        break;
                case 'g':
                        group = optarg;
                        break;
                case 't':
                        topic = optarg;
                        break;
                case 'p':
                        if (npids == (int)(sizeof pids / sizeof pids[0])) {
                                fputs("gp-benchwait: at most 16 --pid\n", stderr);
                                return 2;
                        }
                        pids[npids++] = strtol(optarg, NULL, 10);
                        break;
                case 'T':
                        timeout = strtol(optarg, NULL, 10);
                        break;
                case 'e':
                        end_only = 1;
                        group = "gp-benchwait";
                        pids[0] = 1;
                        npids = 1;
                        break;
                default:
                        return 2;
                }
        }
        for (int i = 0; i < npids; i++)
                if (pids[i] <= 0)
                        npids = 0;
        if (!boot || !group || !topic || npids == 0) {
                fputs("usage: gp-benchwait --bootstrap B --group G --topic S --pid PID "
                      "[--pid PID2 ...] [--timeout-s 600]\n",
                      stderr);
                return 2;
        }
        char err[512];
        rd_kafka_conf_t *c = rd_kafka_conf_new();
        if (rd_kafka_conf_set(c, "bootstrap.servers", boot, err, sizeof err) ||
            rd_kafka_conf_set(c, "group.id", group, err, sizeof err) ||
            rd_kafka_conf_set(c, "isolation.level", "read_committed", err, sizeof err)) {
                fprintf(stderr, "gp-benchwait: %s\n", err);
                return 2;
        }
        rd_kafka_t *rk = rd_kafka_new(RD_KAFKA_CONSUMER, c, err, sizeof err);
        if (!rk) {
                fprintf(stderr, "gp-benchwait: %s\n", err);
                return 2;
        }
        const struct rd_kafka_metadata *md;
        rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
        if (rd_kafka_metadata(rk, 0, rkt, &md, 10000) || md->topic_cnt != 1 ||
            md->topics[0].err || md->topics[0].partition_cnt < 1) {
                fprintf(stderr, "gp-benchwait: no metadata for %s\n", topic);
                return 2;
        }
        int np = md->topics[0].partition_cnt;
        rd_kafka_metadata_destroy(md);
        rd_kafka_topic_destroy(rkt);
        int64_t end = 0;
        for (int i = 0; i < np; i++) {
                int64_t lo, hi;
                if (rd_kafka_query_watermark_offsets(rk, topic, i, &lo, &hi, 10000)) {
                        fprintf(stderr, "gp-benchwait: end offsets of %s unknown\n", topic);
                        return 2;
                }
                end += hi;
        }
        if (end_only) {
                printf("%" PRId64 "\n", end);
                rd_kafka_destroy(rk);
                return 0;
        }
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(np);
        for (int i = 0; i < np; i++)
                rd_kafka_topic_partition_list_add(l, topic, i);

        double t_start = now_s(), t0 = 0, cpu0 = 0, next = t_start + 1;
        int64_t c0 = -1, sum = 0;
        for (;;) {
                double cpu_now = cpu_all(pids, npids);
                if (cpu_now < 0)
                        return 1;
                double t = now_s();
                if (!rd_kafka_committed(rk, l, 10000)) {
                        sum = 0;
                        for (int i = 0; i < np; i++)
                                if (l->elems[i].offset > 0)
                                        sum += l->elems[i].offset;
                }
                if (c0 < 0 && sum > 0) {
                        c0 = sum;
                        t0 = t;
                        cpu0 = cpu_now;
                }
                if (sum >= end) {
                        double secs = t - t0, cpu = cpu_all(pids, npids) - cpu0;
                        int64_t n = sum - c0;
                        if (n <= 0 || secs <= 0) {
                                fprintf(stderr,
                                        "gp-benchwait: everything was committed at the "
                                        "first look: nothing to time\n");
                                return 1;
                        }
                        printf("records=%" PRId64 " seconds=%.3f rate=%.0f cpu_s=%.2f "
                               "cpu_s_per_m=%.2f rss_mb=%.1f\n",
                               n, secs, (double)n / secs, cpu, cpu * 1e6 / (double)n,
                               rss_all(pids, npids));
                        break;
                }
                if (t >= next) {
                        fprintf(stderr,
                                "gp-benchwait: %s: %" PRId64 " of %" PRId64 " committed\n",
                                group, sum, end);
                        next = t + 1;
                }
                if (t - t_start > (double)timeout) {
                        fprintf(stderr,
                                "gp-benchwait: timed out at %" PRId64 " of %" PRId64 "\n", sum,
                                end);
                        return 1;
                }
                usleep(50000);
        }
        rd_kafka_topic_partition_list_destroy(l);
        rd_kafka_destroy(rk);
        return 0;
}
