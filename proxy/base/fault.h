/* proxy/base/fault.h: named points where a test can stop the process dead, or
 * hold it, or make one call fail.
 *
 * Compiled in only with GP_TEST_HOOKS (the test build). With
 * GP_FAULT=<point>[:<n>] in the environment, the n-th time (default 1) the
 * process passes <point> it dies with SIGKILL, as kill -9 would.
 * With GP_FAULT_HOLD=<prefix>, each time the process passes <point> while
 * the file <prefix>.<point> exists (the test "arms" it by creating it), it
 * creates <prefix>.<point>.held and waits until <prefix>.<point> is removed
 * (at most 60 s), then removes the .held file and goes on. A test uses it
 * to act at an exact place, e.g. between the proxy's read of the map and
 * its write. After a commit (no transaction open) the point "promised"
 * is passed while a transition waits for T and a promise of this
 * instance is committed; "redelivering" after each status posted while
 * a re-delivery is open (committed, and in the status).
 * With GP_FAULT_STALL=<point>[:<n>], the n-th time the process passes
 * <point> its thread sleeps for good, as in a call that never returns
 * (the loop's watchdog, proxy/loop/watchdog.h, ends such a process; a hold
 * does not count as stuck: gp_fault_holding).
 * With GP_FAULT_FAIL=<point>[:<n>], GP_FAULT_FAILS(<point>) is true the
 * n-th time (default 1) the process passes <point>, and only then (with
 * <point>:<n>x<k>, k times in a row from the n-th on): the call it guards
 * fails as if Kafka had refused it, so a test sees what the caller does
 * with the failure. The points:
 *   assign   gp_assign_all (proxy/loop/restore.c): the consumer's
 *            assignment, at start (1st), then after each abort and each
 *            partition growth
 *   seek     gp_seek (proxy/loop/restore.c), with group after every
 *            rebalance and abort and at a re-delivery's start: the seek
 *            times out (_TIMED_OUT), as librdkafka's does when the
 *            consumer's threads are slow to answer
 * Without GP_TEST_HOOKS, GP_FAULT_FAILS is false and costs nothing. */
#ifndef GP_PROXY_BASE_FAULT_H
#define GP_PROXY_BASE_FAULT_H

#include <stdbool.h>
#include <stdint.h>

#ifdef GP_TEST_HOOKS
void gp_fault_point(const char *name);
bool gp_fault_fails(const char *name);
bool gp_fault_holding(void);
/* A bound the test build lets a test shorten: the milliseconds in the
 * environment variable env when it is set and positive, else otherwise. */
int64_t gp_test_ms(const char *env, int64_t otherwise);
#define GP_FAULT(name)       gp_fault_point(name)
#define GP_FAULT_FAILS(name) gp_fault_fails(name)
#else
#define GP_FAULT(name)             ((void)0)
#define GP_FAULT_FAILS(name)       false
#define gp_fault_holding()         false
#define gp_test_ms(env, otherwise) ((void)(env), (int64_t)(otherwise))
#endif

#endif
