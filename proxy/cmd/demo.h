/* proxy/cmd/demo.h: `gate-proxy demo`: a blue -> green cutover on librdkafka's
 * in-process mock cluster, driven through the same code as the CLI, with a
 * live progress line and a tally read back from the colour topics.
 * The mock cluster does not honour read_committed, store transactional
 * offsets or fence: the demo shows routing, not exactly-once (that is
 * proven by the tests on a real broker). */
#ifndef GP_PROXY_CMD_DEMO_H
#define GP_PROXY_CMD_DEMO_H

int gp_demo_main(int argc, char **argv);

#endif
