#!/usr/bin/env bash
# The harness's own speed, measured by Go benchmarks (never by timed
# assertions in tests). Run from anywhere; prints Go's benchmark lines.
#
#   scripts/bench.sh            all of them
#   scripts/bench.sh attempt    only the per-attempt harness time
#
# Figures to read:
#   BenchmarkAttempt/concurrency=1   harness-ms/attempt: the harness's own
#       time per attempt (5 scripted turns against an instant fake model
#       over real HTTP, workspace copy, tools, SQLite), the hidden-test
#       process subtracted. Target: under 20 ms on 2 cores.
#   BenchmarkAttempt/concurrency=N   attempts/s at concurrency 1, 2, 4.
#   BenchmarkSaveAttempt             one attempt's SQLite transaction.
#   BenchmarkEndpoints (runner)      one run against one and two endpoints:
#       scripts/scale.sh runs it with the shard-merge check.
#   BenchmarkCallRoundTrip (agent/mcp) tool call through the harness to the
#       project's MCP server over stdio, p50/p99, against relaunching it.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
run() { echo "== $*"; go test -run '^$' "$@"; }
run -bench Attempt -benchtime 200x ./runner/
[ "$what" = attempt ] && exit 0
run -bench SaveAttempt ./results/
run -bench . -benchtime 100x ./agent/mcp/ || true
run -bench Resolve ./agent/
[ "$what" = all ] || [ "$what" = environments ] || exit 0
# Warm environments (#11): semver-compare's hidden tests in a prepared
# environment against a warm go test on the host (ratio, target <= 3), and
# the README's first command over the example suite with an instant model,
# cold and warm cache (target < 2 minutes).
run -bench SemverHiddenTests -benchtime 5x ./environment/
run -bench ExampleSuiteRun -benchtime 1x ./cmd/bench/
