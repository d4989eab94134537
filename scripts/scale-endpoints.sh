#!/usr/bin/env bash
# The figures of several endpoints and of shards (docs/scale.md), measured
# by a Go benchmark and by tests that compare outcomes (never by timed
# assertions in tests). Run from anywhere; takes about two minutes.
#
# Figures to read:
#   BenchmarkEndpoints/throughput  attempts/s of one whole run (its start
#       included) against one fake Ollama endpoint and against two, in the
#       same benchmark: each endpoint answers 2 requests at once in a fixed
#       second, attempts have two turns, the concurrency is the slots.
#       speedup = two / one; target at least 1.9. speedup-attempts-only is
#       the same over the span of the attempts alone; share-of-ideal-N is
#       throughput over N×slots/(2×latency).
#   BenchmarkEndpoints/killed  one of the two endpoints stopped a third of
#       the way through: attempts-lost (target 0), attempts-retried (those
#       cut on the dead endpoint and finished on the other), infra-errors.
#   TestMergedShardsReportEqualsSingleRun  a 13-task, 2-arm run done in one
#       piece and as 3 shards in 3 files merged: PASS means the same report
#       (times aside) and the same advantage for every attempt.
#   TestEndpointKilledMidRunLosesNoAttempt  the same kill, asserted.
set -euo pipefail
cd "$(dirname "$0")/.."
echo "== go test -run '^\$' -bench Endpoints -benchtime 1x ./runner/"
go test -run '^$' -bench Endpoints -benchtime 1x ./runner/ | grep -E '^(Benchmark|ok|FAIL|PASS)'
echo "== go test -run 'TestMergedShardsReportEqualsSingleRun|TestEndpointKilledMidRunLosesNoAttempt' -v ./runner/"
go test -count=1 -run 'TestMergedShardsReportEqualsSingleRun|TestEndpointKilledMidRunLosesNoAttempt' -v ./runner/ | grep -E '^(--- |ok|FAIL)'
