#!/usr/bin/env bash
# examples/prometheus/weir-rules.yml: promtool checks it and runs its unit tests (weir-rules.test.yml),
# every alert has a test, and every metric a rule reads is one /metrics exports (tools/serve/src),
# except those declared ahead of the change that exports them. Exit 77 (ctest: Skipped) without promtool.
set -euo pipefail
src=${1:?usage: prometheus_rules_test.sh SOURCE_DIR}
dir=$src/examples/prometheus
declared_ahead=()  # metrics a rule may read before the change that exports them lands
if ! command -v promtool >/dev/null; then
  echo "SKIPPED LOUDLY: promtool is not installed (Debian: prometheus, scripts/deps.sh test): the alert rules were not checked" >&2
  exit 77
fi
promtool check rules "$dir/weir-rules.yml"
(cd "$dir" && promtool test rules weir-rules.test.yml)
status=0
for alert in $(sed -n 's/^ *- alert: *//p' "$dir/weir-rules.yml"); do
  n=$(grep -c "alertname: $alert\$" "$dir/weir-rules.test.yml" || true)
  if ((n < 3)); then  # silent, firing, and the healthy logger
    echo "FAIL: alert $alert has $n evaluation(s) in weir-rules.test.yml (silent, firing and healthy wanted)" >&2
    status=1
  fi
done
for metric in $(grep -v '^ *#' "$dir/weir-rules.yml" | grep -o 'weir_[a-z0-9_]*' | sort -u); do
  [[ " ${declared_ahead[*]:-} " == *" $metric "* ]] && continue
  if ! grep -rqF "\"$metric\"" "$src/tools/serve/src"; then
    echo "FAIL: rule reads $metric, which /metrics does not export (tools/serve/src)" >&2
    status=1
  fi
done
((status == 0)) && echo "weir-rules.yml: checked, unit tests pass, every alert tested, every metric exported"
exit $status
