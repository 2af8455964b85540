/* tests/unit/test_dlq.c: the dead-letter reasons of /metrics
 * (gp_dlq_reasons, proxy/loop/proxy.h) are the codes of the dead-letter
 * header (gate/extract.h) in their order, then late and other: a record is
 * counted under its code's index, never by comparing words. */
#include <criterion/criterion.h>
#include <string.h>

#include "gate/extract.h"
#include "proxy/loop/proxy.h"

Test(dlq, reasons_follow_the_codes) {
        cr_assert_null(gp_bad_name(GP_BAD_NONE));
        cr_assert_null(gp_bad_name(GP_BAD__COUNT));
        for (int c = GP_BAD_NONE + 1; c < GP_BAD__COUNT; c++) {
                const char *name = gp_bad_name((gp_bad_code_t)c);
                cr_assert_not_null(name, "code %d has no word", c);
                cr_assert_str_eq(gp_dlq_reasons[GP_DLQ_OF(c)], name, "code %d", c);
                for (int d = GP_BAD_NONE + 1; d < c; d++)
                        cr_assert_str_neq(gp_bad_name((gp_bad_code_t)d), name);
        }
        cr_assert_str_eq(gp_dlq_reasons[GP_DLQ_LATE], "late");
        cr_assert_str_eq(gp_dlq_reasons[GP_DLQ_OTHER], "other");
        cr_assert_eq(GP_DLQ_OTHER, GP_DLQ_REASONS - 1);
}
