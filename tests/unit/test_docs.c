/* tests/unit/test_docs.c: every configuration line in the README's and
 * deploy/README.md's code blocks, and of the configuration in
 * deploy/kubernetes/configmap-config.yaml, is one the configuration parser
 * accepts, so a snippet pasted into a file works. A line counts when it looks like
 * key=value with a key of gate-proxy's (gate., kafka., control.,
 * schema.registry., log.). Uses proxy/conf/conf.h. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "proxy/conf/conf.h"

static bool ours(const char *line) {
        static const char *const prefixes[] = {"gate.", "kafka.", "control.",
                                               "schema.registry.", "log."};
        for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
                if (!strncmp(line, prefixes[i], strlen(prefixes[i])))
                        return strchr(line, '=') != NULL;
        return false;
}

/* Sets every configuration line of rel's code blocks (all of a file that
 * is not Markdown, indented or not); returns how many. */
static int check_file(const char *rel) {
        char path[1024], line[4096], origin[1100];
        gp_err_t err;
        snprintf(path, sizeof path, "%s/%s", GP_SOURCE_DIR, rel);
        FILE *f = fopen(path, "r");
        cr_assert_not_null(f, "%s", path);
        bool md = strlen(rel) > 3 && !strcmp(rel + strlen(rel) - 3, ".md");
        bool code = !md;
        int n = 0, lineno = 0;
        while (fgets(line, sizeof line, f)) {
                lineno++;
                line[strcspn(line, "\n")] = '\0';
                if (md && !strncmp(line, "```", 3)) {
                        code = !code;
                        continue;
                }
                char *l = line;
                while (!md && (*l == ' ' || *l == '\t'))
                        l++;
                if (!code || !ours(l))
                        continue;
                char *eq = strchr(l, '=');
                *eq = '\0';
                gp_conf_t c;
                gp_conf_init(&c);
                snprintf(origin, sizeof origin, "%s:%d", rel, lineno);
                int rc = gp_conf_set(&c, l, eq + 1, origin, &err);
                gp_conf_destroy(&c);
                cr_expect_eq(rc, 0, "%s", err.msg);
                n++;
        }
        fclose(f);
        return n;
}

Test(docs, readme_config_lines_parse) {
        cr_expect_gt(check_file("README.md"), 5, "no configuration lines found in README.md");
}

Test(docs, deploy_config_lines_parse) {
        check_file("deploy/README.md");
        cr_expect_gt(
                check_file("deploy/kubernetes/configmap-config.yaml"), 3,
                "no configuration lines found in deploy/kubernetes/configmap-config.yaml");
}
