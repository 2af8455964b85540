/* proxy/cmd/handover.c: the command line of `gate-proxy handover`: its
 * options, their checks and its usage; the hand-over itself is
 * proxy/ops/handover.c. May use the rooms of proxy/ below cmd, k8s/ and
 * gate/. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "gate/timeparse.h"
#include "k8s/flinkdep.h"
#include "k8s/kubeconfig.h"
#include "proxy/cmd/handover.h"
#include "proxy/loop/proxy.h"
#include "proxy/ops/handover.h"

static const char *usage =
        "Usage: gate-proxy handover --k8s MAP [--namespace NS] [--kubeconfig PATH]\n"
        "                           --from OLD --to NEW [--to-file F] [--timeout S]\n"
        "                           [--savepoint PATH] [--no-checkpoint-request]\n"
        "       gate-proxy handover --k8s MAP ... --abort\n"
        "\n"
        "Hands the pipeline from the FlinkDeployment OLD to the FlinkDeployment NEW\n"
        "exactly: one uninterrupted job's output, nothing lost, nothing twice. With the\n"
        "released Flink Kubernetes Operator (basic mode) and a gate-proxy steered by MAP:\n"
        "\n"
        "  cutover  the proxy splits at an event-time cutoff T: records before T go\n"
        "           to OLD's colour, records at or after T to NEW's, where they wait\n"
        "  clear    waits for CLEAR_TO_TEARDOWN: OLD has read everything before T\n"
        "  suspend  OLD to spec.job.state suspended, upgradeMode savepoint; waits for\n"
        "           SUSPENDED, FINISHED and a savepoint the suspend took\n"
        "  start    NEW to state running from that savepoint; waits for STABLE, RUNNING\n"
        "  finish   stage=RUNNING on MAP; deletes OLD\n"
        "\n"
        "Before: OLD runs (STABLE, RUNNING) in MAP's active colour, and its\n"
        "spec.flinkConfiguration sets, as the operator reads it (nested or flat):\n"
        "  " GP_FLINKDEP_FALLBACK_KEY ": \"false\"\n"
        "  " GP_FLINKDEP_DRAIN_KEY ": \"false\"\n"
        "  " GP_FLINKDEP_SAVEPOINT_DIR " (or " GP_FLINKDEP_SAVEPOINT_DIR_OLD ")\n"
        "  " GP_FLINKDEP_CHECKPOINT_DIR " (or " GP_FLINKDEP_CHECKPOINT_DIR_OLD ")\n"
        "NEW exists with spec.job.state suspended and was never deployed (so\n"
        "spec.job.initialSavepointPath applies), reading the other colour's topics\n"
        "(deploy/README.md, The Flink jobs). Operator 1.10 to 1.15 (deploy/README.md).\n"
        "\n"
        "Each step is written to MAP (gate-proxy.handover.*) before it is taken: when\n"
        "the command stops (killed, a timeout, a failure), run it again with the same\n"
        "--from and --to and it finishes the same hand-over, with the same T and the\n"
        "same savepoint. Nothing is lost at any stop: records before T stay with OLD,\n"
        "records at or after T wait in NEW's topic.\n"
        "\n"
        "  --to-file F  create NEW first from the manifest F (YAML or JSON), with\n"
        "               spec.job.state suspended whatever F says; an existing NEW is\n"
        "               taken as it is\n"
        "  --timeout S  how long each step waits for the proxy or the operator\n"
        "               (default 900: a savepoint may take the job's\n"
        "               execution.checkpointing.timeout, 10 min by default)\n"
        "  --savepoint PATH  the state NEW starts from, when the operator suspended\n"
        "               OLD without taking a savepoint this command can prove (it\n"
        "               stops and says so, with the path it saw): a savepoint or a\n"
        "               checkpoint of OLD completed after CLEAR_TO_TEARDOWN\n"
        "  --no-checkpoint-request  do not ask the operator for a checkpoint of OLD\n"
        "               once the proxy has closed OLD's side (by default a\n"
        "               FlinkStateSnapshot of checkpoint type: OLD's Kafka source\n"
        "               commits its offsets on it, so the proxy's drain check\n"
        "               passes without waiting for OLD's next periodic checkpoint)\n"
        "  --abort      give the hand-over up while OLD runs: every record goes back\n"
        "               to OLD's colour; after T the proxy also re-delivers to OLD what\n"
        "               went to NEW's topic (gate.abort.redeliver), and the command\n"
        "               waits for it (--timeout), showing the progress. Refused once\n"
        "               OLD was suspended: fix NEW and run again\n"
        "\n"
        "It prints each change of state, then one line:\n"
        "  handover: from=OLD to=NEW T=... savepoint=... new_job_running_after_ms=... ok\n"
        "\n"
        "Exit codes: 0 handed over (or aborted); 1 stopped, with the reason and what\n"
        "to do; 2 bad command line.\n"
        "\n"
        "Where the map is:\n"
        "  --k8s NAME         the ConfigMap NAME (the proxy's control.k8s.configmap)\n"
        "  -n, --namespace NS its namespace and the FlinkDeployments' (default: the\n"
        "                     kubeconfig context's, in a pod its own, else default)\n"
        "  --kubeconfig PATH  how to reach the API server (default: in a pod its\n"
        "                     service account, else $KUBECONFIG, else ~/.kube/config)\n"
        "The RBAC it needs: deploy/kubernetes/handover/role.yaml.\n";

enum {
        O_K8S = 1,
        O_NS,
        O_KC,
        O_FROM,
        O_TO,
        O_TO_FILE,
        O_TIMEOUT,
        O_ABORT,
        O_SAVEPOINT,
        O_NO_CHECKPOINT
};

int gp_handover_main(int argc, char **argv) {
        static const struct option opts[] = {
                {"k8s", required_argument, 0, O_K8S},
                {"namespace", required_argument, 0, O_NS},
                {"kubeconfig", required_argument, 0, O_KC},
                {"from", required_argument, 0, O_FROM},
                {"to", required_argument, 0, O_TO},
                {"to-file", required_argument, 0, O_TO_FILE},
                {"timeout", required_argument, 0, O_TIMEOUT},
                {"abort", no_argument, 0, O_ABORT},
                {"savepoint", required_argument, 0, O_SAVEPOINT},
                {"no-checkpoint-request", no_argument, 0, O_NO_CHECKPOINT},
                {0, 0, 0, 0},
        };
        gp_handover_opts_t o = {.timeout_ms = 900000};
        int abort_it = 0, c;
        for (int i = 1; i < argc; i++)
                if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h"))
                        return fputs(usage, stdout), 0;
        optind = 1;
        opterr = 0;
        while ((c = getopt_long(argc, argv, "n:", opts, NULL)) != -1) {
                switch (c) {
                case O_K8S:
                        o.map = optarg;
                        break;
                case 'n':
                case O_NS:
                        o.ns = optarg;
                        break;
                case O_KC:
                        o.kubeconfig = optarg;
                        break;
                case O_FROM:
                        o.from = optarg;
                        break;
                case O_TO:
                        o.to = optarg;
                        break;
                case O_TO_FILE:
                        o.to_file = optarg;
                        break;
                case O_ABORT:
                        abort_it = 1;
                        break;
                case O_SAVEPOINT:
                        o.savepoint = optarg;
                        break;
                case O_NO_CHECKPOINT:
                        o.no_checkpoint = true;
                        break;
                case O_TIMEOUT: {
                        int64_t s;
                        const char *why;
                        if (gp_parse_i64(optarg, strlen(optarg), &s, &why) || s < 1 ||
                            s > 86400) {
                                fprintf(stderr,
                                        "gate-proxy handover: --timeout: '%s' is not "
                                        "a number of seconds from 1 to 86400\n",
                                        optarg);
                                return GP_EXIT_USAGE;
                        }
                        o.timeout_ms = s * 1000;
                        break;
                }
                default:
                        fprintf(stderr,
                                "gate-proxy handover: unknown or incomplete option "
                                "'%s'\n(see `gate-proxy handover --help`)\n",
                                argv[optind - 1]);
                        return GP_EXIT_USAGE;
                }
        }
        const char *bad =
                optind < argc           ? "unexpected argument"
                : !o.map                ? "--k8s MAP is required (the hand-over "
                                          "drives FlinkDeployments in Kubernetes)"
                : abort_it              ? NULL
                : !o.from || !o.to      ? "--from OLD and --to NEW are required"
                : !strcmp(o.from, o.to) ? "--from and --to name the same "
                                          "FlinkDeployment"
                : o.savepoint && (!*o.savepoint ||
                                  !strcmp(o.savepoint, "KUBERNETES_OPERATOR_LAST_STATE"))
                        ? "--savepoint needs the path of a savepoint or checkpoint"
                        : NULL;
        if (!bad && !abort_it && (!gp_k8s_name_ok(o.from) || !gp_k8s_name_ok(o.to)))
                bad = "--from and --to must be FlinkDeployment names (lower-case letters, "
                      "digits, '-' and '.')";
        if (bad) {
                fprintf(stderr,
                        "gate-proxy handover: %s\n(see `gate-proxy handover --help`)\n", bad);
                return GP_EXIT_USAGE;
        }
        return abort_it ? gp_handover_abort(&o) : gp_handover_run(&o);
}
