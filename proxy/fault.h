/* proxy/fault.h: named points where a test can stop the process dead.
 *
 * Compiled in only with GP_TEST_HOOKS (the test build). With
 * GP_FAULT=<point>[:<n>] in the environment, the n-th time (default 1) the
 * process passes <point> it dies with SIGKILL, as kill -9 would. */
#ifndef GP_PROXY_FAULT_H
#define GP_PROXY_FAULT_H

#ifdef GP_TEST_HOOKS
void gp_fault_point(const char *name);
#define GP_FAULT(name) gp_fault_point(name)
#else
#define GP_FAULT(name) ((void)0)
#endif

#endif
