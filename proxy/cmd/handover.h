/* proxy/cmd/handover.h: the command line of `gate-proxy handover`
 * (proxy/ops/handover.h does the hand-over). */
#ifndef GP_PROXY_CMD_HANDOVER_H
#define GP_PROXY_CMD_HANDOVER_H

int gp_handover_main(int argc, char **argv);

#endif
