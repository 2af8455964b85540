/* proxy/main.c: the gate-proxy executable. Everything is in proxy/cli.c. */
#include "proxy/cli.h"

int main(int argc, char **argv) {
        return gp_cli_main(argc, argv);
}
