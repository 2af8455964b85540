#!/usr/bin/env bash
# The layering and the banned functions, over the C sources (docs/DESIGN.md,
# Modules): fails, naming file:line, when
# - gate/ includes anything but libc headers and gate/ itself;
# - k8s/ includes proxy/;
# - librdkafka is included outside proxy/, tests/ and bench/;
# - a source calls strcpy, strcat, sprintf, vsprintf, strtok, atoi, atol,
#   atoll or gets (unbounded, or without an error check).
#   tests/lint.sh [REPO_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
bad=0
report() { # WHAT LINES
  [ -n "$2" ] || return 0
  printf 'lint: %s:\n%s\n' "$1" "$2" >&2
  bad=1
}
libc='assert|ctype|errno|float|inttypes|limits|math|stdarg|stdbool|stddef|stdint|stdio|stdlib|string'
report "gate/ includes more than libc and gate/" \
  "$(grep -nE '^\s*#\s*include' -r gate --include='*.[ch]' \
     | grep -vE "#\s*include\s*(<($libc)\.h>|\"gate/[a-z_]+\.h\")" || true)"
report "k8s/ reaches into proxy/" \
  "$(grep -nE '^\s*#\s*include\s*"proxy/' -r k8s --include='*.[ch]' || true)"
report "librdkafka outside proxy/, tests/ and bench/" \
  "$(grep -rnE '^\s*#\s*include\s*[<"]librdkafka/' --include='*.[ch]' . \
     | grep -vE '^\./(proxy|tests|bench|build|\.cache)/' || true)"
report "banned functions (use snprintf, strtol or gp_parse_i64, strtok_r)" \
  "$(grep -rnE '(^|[^a-z_])(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atoll|gets)\s*\(' \
     --include='*.[ch]' gate k8s proxy tests bench | grep -vE ':\s*(/?\*|//)' || true)"
if [ $bad -ne 0 ]; then
  echo "lint: FAILED" >&2
  exit 1
fi
echo "lint: gate/ pure, k8s/ below proxy/, librdkafka only in proxy/ tests/ bench/, no banned function"
