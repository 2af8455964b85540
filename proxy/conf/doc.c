/* proxy/conf/doc.c: the two documents generated from the key table
 * (proxy/conf/keys.c) and the librdkafka table (proxy/conf/kafka_keys.c):
 * configs/CONFIGURATION.md (gate-proxy --list-config) and
 * configs/gate-proxy.conf.example (gate-proxy --example-config). */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "proxy/conf/table.h"

/* ------------------------------------------------------------------ */
/* Documents                                                           */

/* What a key accepts, in words: "milliseconds, 10 to 60000". */
static void type_text(const prop_t *p, char *buf, size_t len) {
        switch (p->type) {
        case PT_STR:
                snprintf(buf, len, "%s", p->allowed);
                return;
        case PT_BOOL:
                snprintf(buf, len, "true or false");
                return;
        case PT_INT:
                if (p->minus1)
                        snprintf(buf, len, "-1 (broker default) or an integer, %lld to %lld",
                                 (long long)p->min, (long long)p->max);
                else
                        snprintf(buf, len, "integer, %lld to %lld", (long long)p->min,
                                 (long long)p->max);
                return;
        case PT_MS:
                snprintf(buf, len, "milliseconds, %lld to %lld", (long long)p->min,
                         (long long)p->max);
                return;
        case PT_ENUM: {
                size_t o = (size_t)snprintf(buf, len, "one of ");
                for (int i = 0; p->words[i] && o < len; i++)
                        o += (size_t)snprintf(buf + o, len - o, "%s%s", i ? ", " : "",
                                              p->words[i]);
                return;
        }
        }
}

/* Text for Markdown: '*' and '|' (emphasis, table cells) escaped. */
static void md_text(FILE *out, const char *s) {
        for (; *s; s++) {
                if (*s == '*' || *s == '|')
                        fputc('\\', out);
                fputc(*s, out);
        }
}

/* Markdown type text: the allowed words as code. */
static void md_type(FILE *out, const prop_t *p) {
        char buf[256];
        if (p->type != PT_ENUM) {
                type_text(p, buf, sizeof buf);
                md_text(out, buf);
                return;
        }
        fputs("one of ", out);
        for (int i = 0; p->words[i]; i++)
                fprintf(out, "%s`%s`", i ? ", " : "", p->words[i]);
}

static void md_default(FILE *out, const prop_t *p) {
        if (p->def)
                fprintf(out, "`%s`", p->def);
        else if (p->optional)
                fputs("unset", out);
        else
                fputs("required", out);
}

void gp_conf_write_markdown(FILE *out) {
        fputs("# gate-proxy configuration\n"
              "\n"
              "<!-- Generated from the key table in proxy/conf/keys.c by "
              "`gate-proxy --list-config`; edit the table, not this file. -->\n"
              "\n"
              "gate-proxy reads one configuration file of `key=value` lines. "
              "Whitespace around the key and the value is ignored, lines whose first "
              "character is `#` are comments, and blank lines are skipped. A value "
              "is taken as written, up to the end of the line: it may contain `=` "
              "and `#`, and is not quoted. A line may be 16384 bytes long, the file "
              "1 MiB.\n"
              "\n"
              "`-X key=value` on the command line sets a key too, and wins over the "
              "file. When a key is set twice, the later setting wins. An unknown "
              "key, or a value outside what is allowed, stops gate-proxy at start "
              "with an error such as\n"
              "\n"
              "```\n"
              "/etc/gate-proxy/gate-proxy.conf:12: gate.delivery: expected one of "
              "exactly-once, at-least-once\n"
              "```\n"
              "\n"
              "Booleans are `true` or `false`. Integers and durations are plain "
              "decimal numbers (durations in milliseconds, no unit suffix). In the "
              "keys that allow them, `{pipeline}` is replaced by `gate.pipeline` and "
              "`{topic}` by the name of a source topic.\n"
              "\n"
              "## librdkafka properties (`kafka.*`)\n"
              "\n"
              "Keys that start with `kafka.` are passed to librdkafka without the "
              "prefix, in the order they were set: `kafka.bootstrap.servers=broker:9092` "
              "sets librdkafka's `bootstrap.servers`, `kafka.security.protocol=SSL` its "
              "`security.protocol`. See librdkafka's CONFIGURATION.md for the "
              "properties. `kafka.bootstrap.servers` is required.\n"
              "\n"
              "gate-proxy sets these properties itself; setting them is an error:\n"
              "\n"
              "| Key | Reason |\n"
              "|---|---|\n",
              out);
        for (const gp_kafka_key_t *k = gp_kafka_keys; k->key; k++)
                if (k->refused)
                        fprintf(out, "| `kafka.%s` | %s |\n", k->key, k->refused);
        fputs("\ngate-proxy bounds librdkafka's queues so that its memory stays flat "
              "(23 to 29 MB in make bench, from 1 to 48 partitions and 100-byte to 10 KB "
              "records); it sets these "
              "unless the configuration does (`kafka.KEY` or `kafka.ROLE.KEY`):\n"
              "\n"
              "| Client | librdkafka property | gate-proxy's value |\n"
              "|---|---|---|\n",
              out);
        for (const gp_kafka_key_t *d = gp_bounded_defaults; d->key; d++)
                fprintf(out, "| %s | `%s` | %s |\n", d->role, d->key, d->value);
        fputs("\n`fetch.max.bytes` is left to librdkafka when `message.max.bytes` is set, "
              "and `queue.buffering.max.kbytes` grows to hold two records of the "
              "producer's `message.max.bytes` (which `gate.record.max.bytes` raises). "
              "A partition whose prefetch queue is full is fetched again after "
              "`fetch.queue.backoff.ms`; librdkafka's 1 s would leave a queue this small "
              "empty for most of that second, so gate-proxy waits 10 ms. Larger "
              "queues buy some throughput for large records at the cost of memory, "
              "and while a backlog written in large batches is read they let every "
              "partition advance together, so the watermark, and a cutover's close, "
              "do not wait for the last partition (docs/BENCHMARKS.md, Memory).\n",
              out);

        fputs("\n## Summary\n\n| Key | Allowed | Default |\n|---|---|---|\n", out);
        for (size_t i = 0; i < gp_conf_n_props; i++) {
                fprintf(out, "| [`%s`](#", gp_conf_props[i].name);
                for (const char *c = gp_conf_props[i].name; *c; c++)
                        if (*c != '.')
                                fputc(*c, out);
                fputs(") | ", out);
                md_type(out, &gp_conf_props[i]);
                fputs(" | ", out);
                md_default(out, &gp_conf_props[i]);
                fputs(" |\n", out);
        }

        for (size_t i = 0; i < gp_conf_n_props; i++) {
                const prop_t *p = &gp_conf_props[i];
                if (p->section)
                        fprintf(out, "\n## %s\n", p->section);
                fprintf(out, "\n### `%s`\n\n", p->name);
                md_text(out, p->desc);
                fputs("\n\n- Allowed: ", out);
                md_type(out, p);
                fputs("\n- Default: ", out);
                md_default(out, p);
                if (p->optional) {
                        fputs(": ", out);
                        md_text(out, p->unset);
                } else if (!p->def)
                        fprintf(out, " (e.g. `%s`)", p->example);
                fputs("\n", out);
        }
}

/* Writes text as '#' comment lines of at most `width` columns. */
static void comment_wrapped(FILE *out, const char *text, size_t width) {
        const char *p = text;
        while (*p) {
                size_t n = strlen(p), cut = n;
                if (n > width - 2) {
                        cut = width - 2;
                        while (cut > 0 && p[cut] != ' ')
                                cut--;
                        if (cut == 0) /* one long word */
                                for (cut = width - 2; p[cut] && p[cut] != ' '; cut++)
                                        ;
                }
                fprintf(out, "# %.*s\n", (int)cut, p);
                p += cut;
                while (*p == ' ')
                        p++;
        }
}

void gp_conf_write_example(FILE *out) {
        char type[256];
        fputs("# gate-proxy example configuration, generated from proxy/conf/keys.c\n"
              "# (gate-proxy --example-config). Every key is listed with its default,\n"
              "# commented out; the required keys have placeholder values to replace.\n"
              "#\n"
              "# One key=value per line; lines starting with # are comments. Values\n"
              "# are not quoted. -X key=value on the command line wins over this file.\n"
              "# Keys starting with kafka. go to librdkafka without the prefix.\n"
              "# Reference: configs/CONFIGURATION.md.\n",
              out);
        for (size_t i = 0; i < gp_conf_n_props; i++) {
                const prop_t *p = &gp_conf_props[i];
                if (p->section)
                        fprintf(out, "\n## %s\n", p->section);
                fputs("\n", out);
                comment_wrapped(out, p->desc, 78);
                type_text(p, type, sizeof type);
                fprintf(out, "# Allowed: %s.\n", type);
                if (p->def) {
                        fprintf(out, "#%s=%s\n", p->name, p->def);
                } else if (p->optional) {
                        char unset[512];
                        snprintf(unset, sizeof unset, "Unset: %s.", p->unset);
                        comment_wrapped(out, unset, 78);
                        fprintf(out, "%s%s=%s\n", p->example_set ? "" : "#", p->name,
                                p->example);
                } else {
                        fprintf(out, "# Required.\n%s=%s\n", p->name, p->example);
                }
        }
        fputs("\n## librdkafka (kafka.*)\n\n", out);
        comment_wrapped(out,
                        "Brokers to connect to, host:port separated by commas. Required. "
                        "Any other librdkafka property can be set the same way, e.g. "
                        "kafka.security.protocol=SSL.",
                        78);
        fputs("kafka.bootstrap.servers=localhost:9092\n\n", out);
        char list[512];
        size_t o = (size_t)snprintf(list, sizeof list, "Set by gate-proxy and refused here:");
        bool first = true;
        for (const gp_kafka_key_t *k = gp_kafka_keys; k->key && o < sizeof list; k++) {
                if (!k->refused)
                        continue;
                o += (size_t)snprintf(list + o, sizeof list - o, "%s kafka.%s",
                                      first ? "" : ",", k->key);
                first = false;
        }
        if (o < sizeof list - 1)
                snprintf(list + o, sizeof list - o, ".");
        comment_wrapped(out, list, 78);
}
