#!/usr/bin/env bash
# The layering and the banned functions, over the C sources (docs/DESIGN.md,
# Modules): fails, naming file:line, when
# - gate/ includes anything but libc headers and gate/ itself;
# - k8s/ includes proxy/;
# - librdkafka is included outside proxy/, tests/ and bench/;
# - a room of proxy/ includes a room above it, or a room beside it (the
#   order below, docs/DESIGN.md "Where things are"); nothing includes
#   proxy/cmd/ but proxy/cmd/;
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
report "os/ includes more than libc, POSIX and gate/" \
  "$(grep -nE '^\s*#\s*include\s*"' -r os --include='*.[ch]' \
     | grep -vE '#\s*include\s*"(gate|os)/[a-z_]+\.h"' || true)"
report "k8s/ reaches into proxy/" \
  "$(grep -nE '^\s*#\s*include\s*"proxy/' -r k8s --include='*.[ch]' || true)"
report "librdkafka outside proxy/, tests/ and bench/" \
  "$(grep -rnE '^\s*#\s*include\s*[<"]librdkafka/' --include='*.[ch]' . \
     | grep -vE '^\./(proxy|tests|bench|build|\.cache)/' || true)"
# The rooms of proxy/, lowest first; a file may include its own room and
# the rooms of a lower rank. Rooms of one rank do not include each other.
rank() {
  case "$1" in
    base) echo 0 ;; conf) echo 1 ;; schema|control) echo 2 ;; loop) echo 3 ;;
    obs|ops) echo 4 ;; cmd) echo 5 ;; *) echo "" ;;
  esac
}
wrong=""
while IFS= read -r hit; do
  file=${hit%%:*}
  rest=${hit#*:}
  line=${rest%%:*}
  inc=$(sed -nE 's/.*#\s*include\s*"proxy\/([a-z_]+)\/.*/\1/p' <<<"$rest")
  [ -n "$inc" ] || continue
  case "$file" in
    proxy/*/*) from=${file#proxy/}; from=${from%%/*} ;;
    *) from="" ;;
  esac
  if [ -z "$from" ]; then
    # outside proxy/ (tests, bench): anything but proxy/cmd/
    [ "$inc" = cmd ] && wrong+="$file:$line: includes proxy/$inc/ (nothing includes the commands)"$'\n'
    continue
  fi
  [ "$from" = "$inc" ] && continue
  rf=$(rank "$from"); ri=$(rank "$inc")
  if [ -z "$rf" ] || [ -z "$ri" ]; then
    wrong+="$file:$line: proxy/$from/ or proxy/$inc/ is not a room lint.sh knows"$'\n'
  elif [ "$ri" -ge "$rf" ]; then
    wrong+="$file:$line: proxy/$from/ includes proxy/$inc/ (rank $rf may include only lower ranks)"$'\n'
  fi
done < <(grep -rnE '^\s*#\s*include\s*"proxy/' --include='*.[ch]' proxy tests bench || true)
report "a proxy/ room includes one above or beside it" "${wrong%$'\n'}"
report "a source of proxy/ outside its rooms" \
  "$(find proxy -maxdepth 1 -name '*.[ch]' | sort || true)"
report "banned functions (use snprintf, strtol or gp_parse_i64, strtok_r)" \
  "$(grep -rnE '(^|[^a-z_])(strcpy|strcat|sprintf|vsprintf|strtok|atoi|atol|atoll|gets)\s*\(' \
     --include='*.[ch]' gate k8s proxy tests bench | grep -vE ':\s*(/?\*|//)' || true)"
if [ $bad -ne 0 ]; then
  echo "lint: FAILED" >&2
  exit 1
fi
echo "lint: gate/ pure, k8s/ below proxy/, proxy/ rooms one way, librdkafka only in proxy/ tests/ bench/, no banned function"
