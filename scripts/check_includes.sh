#!/usr/bin/env bash
# Fails, naming each file, when code outside core/ includes one of core's detail headers
# (weir/core/detail/...): other modules read the arena through core's public API
# (docs/design/read_api.md). tests/core/ may include them: it tests core's internals.
set -euo pipefail
cd "$(dirname "$0")/.."
dirs=()
for d in */; do
  case "$d" in core/ | build*/) ;; *) dirs+=("$d") ;; esac
done
offenders=$(grep -rlE '#[[:space:]]*include[[:space:]]*[<"]weir/core/detail/' \
              --include='*.cpp' --include='*.hpp' --include='*.h' --include='*.cc' --include='*.c' \
              "${dirs[@]}" | grep -v '^tests/core/' || true)
if [[ -n "$offenders" ]]; then
  echo "check_includes: files outside core/ include weir/core/detail/ (use core's public headers):" >&2
  echo "$offenders" | sed 's/^/  /' >&2
  exit 1
fi
echo "check_includes: no weir/core/detail/ includes outside core/"
