/* proxy/cmd/main.c: the gate-proxy executable. Everything is in proxy/cmd/cli.c. */
#include "proxy/ops/verbs.h"

int main(int argc, char **argv) {
        return gp_cli_main(argc, argv);
}
