/* proxy/cmd/cli.c: the command line of gate-proxy: argv dispatch, --help for
 * each command, `run` with its signals and endpoints, the options of the
 * operator verbs (proxy/ops/verbs.c), demo and the configuration reference. */
#include <getopt.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <librdkafka/rdkafka.h>

#include "gate/control.h"
#include "gate/timeparse.h"
#include "proxy/ops/verbs.h"
#include "proxy/conf/conf.h"
#include "proxy/control/ctl.h"
#include "proxy/cmd/demo.h"
#include "proxy/cmd/handover.h"
#include "proxy/base/log.h"
#include "proxy/obs/endpoints.h"
#include "proxy/loop/kafka_clients.h"
#include "proxy/loop/proxy.h"

#define VERSION GP_VERSION

static const char *usage_main =
        "gate-proxy " VERSION ": hands a Kafka-fed Flink pipeline from its blue deployment\n"
        "to its green one (and back) record by record, exactly once.\n"
        "\n"
        "It reads each source topic S once and writes every record to S.blue or S.green\n"
        "in Kafka transactions, split at an event-time cutoff T that it chooses when a\n"
        "transition starts. It is steered by the blue/green ConfigMap of the Flink\n"
        "Kubernetes Operator's advanced mode: the ConfigMap itself, through the\n"
        "Kubernetes API, or a local JSON file holding one.\n"
        "\n"
        "Usage: gate-proxy <command> [options]\n"
        "\n"
        "Commands:\n"
        "  demo       a blue -> green cutover on an in-process Kafka, with a tally\n"
        "  run        run the proxy:           gate-proxy run -c gate-proxy.conf\n"
        "  init       create the control map:  gate-proxy init --control cm.json\n"
        "  cutover    start a transition:      gate-proxy cutover --control cm.json --to "
        "green\n"
        "  finish     after CLEAR_TO_TEARDOWN: gate-proxy finish --control cm.json\n"
        "  abort      give up a transition:    gate-proxy abort --control cm.json\n"
        "  status     show the map and the proxy's status keys\n"
        "  handover   the whole hand-over of two FlinkDeployments of the Flink Kubernetes\n"
        "             Operator: gate-proxy handover --k8s MAP --from orders-blue --to\n"
        "             orders-green\n"
        "\n"
        "  The operator commands take --k8s NAME [--namespace NS] [--kubeconfig PATH]\n"
        "  instead of --control FILE to work on the ConfigMap in Kubernetes.\n"
        "\n"
        "  --list-config     print the configuration reference (Markdown)\n"
        "  --example-config  print an example configuration file\n"
        "  --version, --help\n"
        "\n"
        "`gate-proxy <command> --help` explains each command.\n";

static const char *usage_run =
        "Usage: gate-proxy run -c FILE [-X key=value]...\n"
        "\n"
        "Runs the proxy for one pipeline until SIGTERM or SIGINT, which finish the open\n"
        "transaction and exit 0. FILE holds key=value lines (see `gate-proxy\n"
        "--example-config`); -X sets or overrides one key. At least:\n"
        "  kafka.bootstrap.servers=127.0.0.1:9092\n"
        "  gate.pipeline=orders\n"
        "  gate.source.topics=orders\n"
        "  control.file=/var/run/gate-proxy/orders-configmap.json\n"
        "or, with the map in Kubernetes, instead of control.file:\n"
        "  control.k8s.configmap=orders-configmap\n"
        "The source topics must exist (Kafka's kafka-topics.sh --create makes them);\n"
        "with gate.topics.create=true the proxy creates its colour topics. A second\n"
        "run of the same pipeline takes the first one's place (the first is fenced,\n"
        "exit 3) unless gate.membership=group, where it joins as one more member.\n"
        "\n"
        "Exit codes: 0 stopped cleanly; 1 fatal Kafka error (restart it); 2 bad\n"
        "command line or configuration; 3 fenced by a newer instance with the same\n"
        "transactional.id; 4 a source, colour or dead-letter topic is missing or has\n"
        "too few partitions; 5 the committed checkpoint cannot be read; 6 (with\n"
        "gate.membership=group) the consumer group has a member of another pipeline,\n"
        "or an instance of this one under other gate.* settings.\n";

/* Where the map is: the end of every operator command's help. */
#define USAGE_WHERE_READ                                                                      \
        "\n"                                                                                  \
        "Where the map is (one of):\n"                                                        \
        "  --control FILE     a local JSON file (the proxy's control.file)\n"                 \
        "  --k8s NAME         the ConfigMap NAME through the Kubernetes API (the\n"           \
        "                     proxy's control.k8s.configmap)\n"                               \
        "  --namespace NS     its namespace (default: in a pod its own, with a\n"             \
        "                     kubeconfig its context's, else default)\n"                      \
        "  --kubeconfig PATH  how to reach the API server (default: in a pod its\n"           \
        "                     service account, else $KUBECONFIG, else ~/.kube/config)\n"
#define USAGE_WHERE                                                                           \
        USAGE_WHERE_READ                                                                      \
        "With --k8s a change is written only if the map is still the one read\n"              \
        "(resourceVersion); if it moved meanwhile (409 Conflict), it is read and\n"           \
        "checked again, up to 5 times.\n"

static const char *usage_init =
        "Usage: gate-proxy init (--control FILE | --k8s NAME [--namespace NS]\n"
        "                       [--kubeconfig PATH]) [--active blue|green] [--force]\n"
        "\n"
        "Writes a control map for a first deployment: every record goes to the active\n"
        "colour (default blue). Refuses to overwrite an existing file or ConfigMap\n"
        "without --force; with it, the map holds exactly the first-deployment keys.\n"
        "With --k8s the ConfigMap is created (this needs the create verb).\n"
        "\n"
        "Exit codes: 0 written; 1 refused or failed (the reason on stderr); 2 bad\n"
        "command line.\n" USAGE_WHERE;

static const char *usage_cutover =
        "Usage: gate-proxy cutover (--control FILE | --k8s NAME [--namespace NS]\n"
        "                          [--kubeconfig PATH]) --to blue|green [--delay-ms D]\n"
        "                          [--at T] [--align-ms A] [--wait] [--timeout S] [--force]\n"
        "\n"
        "Starts a transition to the given colour, as the operator would once the new\n"
        "deployment is stable: active-deployment-type=<TO>, stage=TRANSITIONING,\n"
        "is-first-deployment=false, deployment-deletion-delay-ms=D (default 0), and\n"
        "clears the watermark keys. The proxy then chooses the cutover\n"
        "  T = max(highest event time already routed + 1, watermark + D)\n"
        "rounded up to A (default: its gate.cutoff.align.ms), publishes it, routes\n"
        "ts < T to the old colour and ts >= T to the new one, and writes\n"
        "stage=CLEAR_TO_TEARDOWN once the old side has everything before T.\n"
        "\n"
        "  --at T       ask for this cutoff (epoch ms or RFC 3339); the proxy refuses it\n"
        "               (gate-proxy.error) if records at or after T already went to the\n"
        "               old colour, and routing stays unchanged; a T at or below the\n"
        "               proxy's watermark is refused here already\n"
        "  --wait       wait for CLEAR_TO_TEARDOWN, printing progress (--timeout S, default\n"
        "               600)\n"
        "  --force      start even while another transition is in progress or not\n"
        "               finished (CLEAR_TO_TEARDOWN before `gate-proxy finish`)\n"
        "\n"
        "Exit codes: 0 started (with --wait: and cleared); 1 refused, failed, or (with\n"
        "--wait) no CLEAR_TO_TEARDOWN within the timeout; 2 bad command line.\n" USAGE_WHERE;

static const char *usage_finish =
        "Usage: gate-proxy finish (--control FILE | --k8s NAME [--namespace NS]\n"
        "                         [--kubeconfig PATH]) [--force]\n"
        "\n"
        "What the operator does after it has stopped the old deployment: stage=RUNNING.\n"
        "Refuses unless the proxy has written CLEAR_TO_TEARDOWN (or --force). After an\n"
        "abort (stage FAILING) it ends the abandoned transition: stage=RUNNING, the\n"
        "survivor stays active.\n"
        "\n"
        "Exit codes: 0 written; 1 refused or failed; 2 bad command line.\n" USAGE_WHERE;

static const char *usage_abort =
        "Usage: gate-proxy abort (--control FILE | --k8s NAME [--namespace NS]\n"
        "                        [--kubeconfig PATH]) [--to blue|green]\n"
        "\n"
        "Abandons the transition, as the operator does: is-first-deployment=true,\n"
        "stage=FAILING, active-deployment-type=<survivor> (default: the colour that\n"
        "owned traffic before the transition). Every record then goes to the survivor;\n"
        "the proxy reports in gate-proxy.aborted-routed how many records had already\n"
        "gone to the other colour (event time at or after T) and, when the survivor\n"
        "is the old colour, re-delivers them to it: it reads the source again from\n"
        "where the split began and sends exactly those records once, after what the\n"
        "survivor had (gate.abort.redeliver; `gate-proxy status` shows the progress).\n"
        "Refused when no transition is in progress. The map stays at stage=FAILING\n"
        "until `gate-proxy finish` (stage=RUNNING) or the next cutover, which waits\n"
        "for the re-delivery.\n"
        "\n"
        "Exit codes: 0 written; 1 refused or failed; 2 bad command line.\n" USAGE_WHERE;

static const char *usage_status =
        "Usage: gate-proxy status (--control FILE | --k8s NAME [--namespace NS]\n"
        "                         [--kubeconfig PATH]) [--json]\n"
        "\n"
        "Prints the control map: what is asked (operator keys) and what the proxy\n"
        "reports (gate-proxy.* keys), and whether a proxy reports at all: \"no proxy\n"
        "has reported\" without a heartbeat, \"stale\" when it is over 30 s old.\n"
        "--json prints the data as a JSON object.\n"
        "\n"
        "Exit codes: 0 shown; 1 the map cannot be read or is invalid (shown with\n"
        "INVALID); 2 bad command line.\n" USAGE_WHERE_READ;

static int want_help(int argc, char **argv) {
        for (int i = 1; i < argc; i++)
                if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                        return 1;
        return 0;
}

static int bad_usage(const char *cmd, const char *msg) {
        fprintf(stderr, "gate-proxy %s: %s\n(see `gate-proxy %s --help`)\n", cmd, msg, cmd);
        return GP_EXIT_USAGE;
}

static int parse_colour(const char *cmd, const char *s, gp_colour_t *out) {
        if (gp_colour_parse(s, out)) {
                fprintf(stderr, "gate-proxy %s: '%s' is not blue or green\n", cmd, s);
                return -1;
        }
        return 0;
}

static int parse_num(const char *cmd, const char *opt, const char *s, int64_t min,
                     int64_t *out) {
        int rc = gp_parse_i64(s, strlen(s), out, NULL);
        if (rc || *out < min) {
                if (rc == GP_PARSE_RANGE)
                        fprintf(stderr,
                                "gate-proxy %s: %s: '%s' is too large (at most "
                                "%lld)\n",
                                cmd, opt, s, (long long)INT64_MAX);
                else
                        fprintf(stderr,
                                "gate-proxy %s: %s: '%s' is not a whole number >= "
                                "%lld\n",
                                cmd, opt, s, (long long)min);
                return -1;
        }
        return 0;
}

/* ---- run ----------------------------------------------------------------- */

static gp_proxy_t *volatile running;

static volatile sig_atomic_t signalled;

/* The first SIGTERM or SIGINT asks the loop to finish its open transaction
 * and stop (exit 0); a second ends the process at once, with 128 + the
 * signal's number, as a shell reports it: the open transaction is left to
 * the broker to abort, and a restart goes on from the last commit. */
static void on_signal(int sig) {
        if (signalled++) {
                static const char msg[] = "gate-proxy: second signal: exiting at once\n";
                ssize_t w = write(2, msg, sizeof(msg) - 1);
                (void)w;
                _exit(128 + sig);
        }
        if (running)
                gp_proxy_stop(running);
}

static int cmd_run(int argc, char **argv) {
        gp_conf_t conf;
        gp_err_t err;
        const char *file = NULL;
        int code = GP_EXIT_USAGE;

        if (want_help(argc, argv)) {
                fputs(usage_run, stdout);
                return 0;
        }
        gp_conf_init(&conf);
        /* The file first, then every -X over it, in order. */
        for (int i = 1; i < argc; i++) {
                if (!strcmp(argv[i], "-c") && i + 1 < argc)
                        file = argv[++i];
                else if (!strcmp(argv[i], "-X") && i + 1 < argc)
                        i++;
                else {
                        gp_conf_destroy(&conf);
                        return bad_usage("run", "expected -c FILE and -X key=value options");
                }
        }
        if (argc == 1) {
                gp_conf_destroy(&conf);
                return bad_usage("run", "needs -c FILE, the pipeline's configuration (start "
                                        "from configs/gate-proxy.conf.example; gate-proxy "
                                        "--list-config lists every key)");
        }
        if (file && gp_conf_load_file(&conf, file, &err))
                goto fail;
        for (int i = 1; i < argc; i++) {
                if (strcmp(argv[i], "-X"))
                        continue;
                char *kv = argv[++i], *eq = strchr(kv, '=');
                if (!eq) {
                        gp_err_set(&err, GP_ERR_INVALID, "-X: %s: expected key=value", kv);
                        goto fail;
                }
                *eq = '\0';
                int rc = gp_conf_set(&conf, kv, eq + 1, "-X", &err);
                *eq = '=';
                if (rc)
                        goto fail;
        }
        if (gp_conf_finalize(&conf, &err))
                goto fail;
        gp_log_set_level(conf.log_level);
        gp_log_set_format(!strcmp(conf.log_format, "json"), conf.pipeline);
        /* The threads gp_proxy_new starts (watch, drain check; librdkafka
         * blocks signals in its own) inherit a mask with SIGTERM and SIGINT
         * blocked, so both reach this thread's handler only. A write to a
         * closed socket is an error return, never SIGPIPE. */
        sigset_t stops, was;
        sigemptyset(&stops);
        sigaddset(&stops, SIGTERM);
        sigaddset(&stops, SIGINT);
        pthread_sigmask(SIG_BLOCK, &stops, &was);
        signal(SIGPIPE, SIG_IGN);
        gp_proxy_t *p = gp_proxy_new(&conf, &err);
        /* The endpoints read the pipeline through its accessors, on
         * libmicrohttpd's thread (with the same mask). */
        gp_endpoints_t *ep = NULL;
        if (p && conf.http_listen && !(ep = gp_endpoints_start(&conf, p, &err))) {
                gp_proxy_destroy(p);
                p = NULL;
        }
        if (!p) {
                pthread_sigmask(SIG_SETMASK, &was, NULL);
                goto fail;
        }
        running = p;
        /* Said once the configuration is known to be good. */
        char warning[400];
        gp_conf_drain_warning(&conf, warning, sizeof(warning));
        if (*warning)
                gp_warn("%s", warning);
        struct sigaction sa = {.sa_handler = on_signal};
        sigemptyset(&sa.sa_mask);
        sigaction(SIGTERM, &sa, NULL);
        sigaction(SIGINT, &sa, NULL);
        pthread_sigmask(SIG_SETMASK, &was, NULL);
        code = gp_proxy_run(p);
        running = NULL;
        gp_endpoints_stop(ep); /* first: its handlers read p */
        gp_proxy_destroy(p);
        gp_conf_destroy(&conf);
        return code;
fail:
        fprintf(stderr, "gate-proxy: %s\n", err.msg);
        gp_conf_destroy(&conf);
        return GP_EXIT_USAGE;
}

/* ---- the operator commands' options ------------------------------------ */

enum {
        O_CONTROL = 1,
        O_TO,
        O_DELAY,
        O_AT,
        O_ALIGN,
        O_WAIT,
        O_TIMEOUT,
        O_FORCE,
        O_JSON,
        O_ACTIVE,
        O_NAME,
        O_K8S,
        O_NAMESPACE,
        O_KUBECONFIG
};

static const struct option opts[] = {
        {"control", required_argument, 0, O_CONTROL},
        {"to", required_argument, 0, O_TO},
        {"delay-ms", required_argument, 0, O_DELAY},
        {"at", required_argument, 0, O_AT},
        {"align-ms", required_argument, 0, O_ALIGN},
        {"wait", no_argument, 0, O_WAIT},
        {"timeout", required_argument, 0, O_TIMEOUT},
        {"force", no_argument, 0, O_FORCE},
        {"json", no_argument, 0, O_JSON},
        {"active", required_argument, 0, O_ACTIVE},
        {"name", required_argument, 0, O_NAME},
        {"k8s", required_argument, 0, O_K8S},
        {"namespace", required_argument, 0, O_NAMESPACE},
        {"kubeconfig", required_argument, 0, O_KUBECONFIG},
        {0, 0, 0, 0},
};

static int cmd_operator(const char *cmd, const char *usage, int argc, char **argv) {
        const char *control = NULL, *k8s = NULL, *ns = NULL, *kubeconfig = NULL;
        gp_cutover_opts_t co = {.at = GP_TS_NONE};
        int has_to = 0, wait = 0, force = 0, json = 0, has_timeout = 0;
        int64_t timeout_s = 600;
        gp_colour_t active = GP_BLUE;
        int c;

        if (want_help(argc, argv)) {
                fputs(usage, stdout);
                return 0;
        }
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "", opts, NULL)) != -1) {
                switch (c) {
                case O_CONTROL:
                        control = optarg;
                        break;
                case O_K8S:
                        k8s = optarg;
                        break;
                case O_NAMESPACE:
                        ns = optarg;
                        break;
                case O_KUBECONFIG:
                        kubeconfig = optarg;
                        break;
                case O_TO:
                        if (parse_colour(cmd, optarg, &co.to))
                                return GP_EXIT_USAGE;
                        has_to = 1;
                        break;
                case O_ACTIVE:
                        if (parse_colour(cmd, optarg, &active))
                                return GP_EXIT_USAGE;
                        break;
                case O_DELAY:
                        if (parse_num(cmd, "--delay-ms", optarg, 0, &co.delay_ms))
                                return GP_EXIT_USAGE;
                        break;
                case O_AT: {
                        const char *why = NULL;
                        if (gp_time_parse(optarg, strlen(optarg), GP_UNIT_MS, &co.at, &why)) {
                                fprintf(stderr,
                                        "gate-proxy %s: --at: '%s': %s (epoch ms or "
                                        "RFC 3339)\n",
                                        cmd, optarg, why);
                                return GP_EXIT_USAGE;
                        }
                        if (co.at < 0) {
                                fprintf(stderr,
                                        "gate-proxy %s: --at: '%s' is before 1970; "
                                        "event times are epoch milliseconds\n",
                                        cmd, optarg);
                                return GP_EXIT_USAGE;
                        }
                        break;
                }
                case O_ALIGN:
                        if (parse_num(cmd, "--align-ms", optarg, 1, &co.align_ms))
                                return GP_EXIT_USAGE;
                        break;
                case O_TIMEOUT:
                        if (parse_num(cmd, "--timeout", optarg, 1, &timeout_s))
                                return GP_EXIT_USAGE;
                        has_timeout = 1;
                        break;
                case O_WAIT:
                        wait = 1;
                        break;
                case O_FORCE:
                        force = 1;
                        break;
                case O_JSON:
                        json = 1;
                        break;
                case O_NAME:
                        break;
                default: {
                        char msg[200];
                        snprintf(msg, sizeof(msg), "unknown or incomplete option '%s'",
                                 argv[optind - 1]);
                        return bad_usage(cmd, msg);
                }
                }
        }
        if (optind < argc)
                return bad_usage(cmd, "unexpected argument");
        if (!control && !k8s)
                return bad_usage(cmd, "--control FILE or --k8s NAME is required");
        if (control && k8s)
                return bad_usage(cmd, "give --control FILE or --k8s NAME, not both");
        if (!k8s && (ns || kubeconfig))
                return bad_usage(cmd, ns ? "--namespace needs --k8s NAME"
                                         : "--kubeconfig needs --k8s NAME");
        if (!strcmp(cmd, "cutover") && !has_to)
                return bad_usage(cmd, "--to blue|green is required");
        if (has_timeout && !wait)
                return bad_usage(cmd, "--timeout needs --wait (it bounds the wait for "
                                      "CLEAR_TO_TEARDOWN)");

        gp_ctl_t *ctl;
        if (k8s) {
                gp_err_t err;
                if (!(ctl = gp_ctl_new_k8s(k8s, ns, kubeconfig, false, &err))) {
                        fprintf(stderr, "gate-proxy %s: %s\n", cmd, err.msg);
                        return 1;
                }
        } else if (!(ctl = gp_ctl_new_file(control))) {
                fprintf(stderr, "gate-proxy %s: out of memory\n", cmd);
                return 1;
        }
        int rc;
        if (!strcmp(cmd, "init")) {
                rc = gp_ops_ctl_init(ctl, active, force);
        } else if (!strcmp(cmd, "cutover")) {
                co.force = force;
                rc = gp_ops_ctl_cutover(ctl, &co);
                if (!rc && wait)
                        rc = gp_ops_ctl_wait_clear(ctl, timeout_s * 1000, 0);
        } else if (!strcmp(cmd, "finish")) {
                rc = gp_ops_ctl_finish(ctl, force);
        } else if (!strcmp(cmd, "abort")) {
                rc = gp_ops_ctl_abort(ctl, has_to, co.to);
        } else {
                rc = gp_ops_ctl_status(ctl, json);
        }
        gp_ctl_destroy(ctl);
        return rc;
}

int gp_cli_main(int argc, char **argv) {
        if (argc < 2 || !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h") ||
            !strcmp(argv[1], "help")) {
                fputs(usage_main, argc < 2 ? stderr : stdout);
                return argc < 2 ? GP_EXIT_USAGE : 0;
        }
        const char *cmd = argv[1];
        if (!strcmp(cmd, "--version")) {
                /* The librdkafka that is loaded, not the one compiled
                 * against: what an image or a host really runs. */
                char features[512];
                printf("gate-proxy %s (librdkafka %s)\nlibrdkafka features: %s\n", VERSION,
                       rd_kafka_version_str(), gp_rdkafka_features(features, sizeof features));
                return 0;
        }
        if (!strcmp(cmd, "--list-config")) {
                gp_conf_write_markdown(stdout);
                return 0;
        }
        if (!strcmp(cmd, "--example-config")) {
                gp_conf_write_example(stdout);
                return 0;
        }
        if (!strcmp(cmd, "run"))
                return cmd_run(argc - 1, argv + 1);
        if (!strcmp(cmd, "demo"))
                return gp_demo_main(argc - 1, argv + 1);
        if (!strcmp(cmd, "handover"))
                return gp_handover_main(argc - 1, argv + 1);
        const struct {
                const char *name, *usage;
        } ops[] = {{"init", usage_init},
                   {"cutover", usage_cutover},
                   {"finish", usage_finish},
                   {"abort", usage_abort},
                   {"status", usage_status}};
        for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
                if (!strcmp(cmd, ops[i].name))
                        return cmd_operator(cmd, ops[i].usage, argc - 1, argv + 1);
        fprintf(stderr, "gate-proxy: unknown command '%s'\n\n%s", cmd, usage_main);
        return GP_EXIT_USAGE;
}
