/* proxy/base/fault.h: named points where a test can stop the process dead, or
 * hold it.
 *
 * Compiled in only with GP_TEST_HOOKS (the test build). With
 * GP_FAULT=<point>[:<n>] in the environment, the n-th time (default 1) the
 * process passes <point> it dies with SIGKILL, as kill -9 would.
 * With GP_FAULT_HOLD=<prefix>, each time the process passes <point> while
 * the file <prefix>.<point> exists (the test "arms" it by creating it), it
 * creates <prefix>.<point>.held and waits until <prefix>.<point> is removed
 * (at most 60 s), then removes the .held file and goes on. A test uses it
 * to act at an exact place, e.g. between the proxy's read of the map and
 * its write. */
#ifndef GP_PROXY_BASE_FAULT_H
#define GP_PROXY_BASE_FAULT_H

#ifdef GP_TEST_HOOKS
void gp_fault_point(const char *name);
#define GP_FAULT(name) gp_fault_point(name)
#else
#define GP_FAULT(name) ((void)0)
#endif

#endif
