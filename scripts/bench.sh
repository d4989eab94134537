#!/usr/bin/env bash
# The harness's own speed, measured by Go benchmarks and scripts/scale.sh
# (never by timed assertions in tests). Run from anywhere; prints Go's
# benchmark lines. docs/performance.md has the figures and what they mean.
#
#   scripts/bench.sh              all but scale (a few minutes)
#   scripts/bench.sh attempt      the agent loop: harness cost per attempt
#   scripts/bench.sh chat         one /api/chat request, official client beside bench's
#   scripts/bench.sh throughput   whole runs at fixed model latency, N = 1..16 slots
#   scripts/bench.sh mcp          MCP tool calls: bench's client beside the seed lesson's
#   scripts/bench.sh store        one attempt's SQLite transaction
#   scripts/bench.sh scale [N]    bench runs, report and export at N attempts (scripts/scale.sh)
#   scripts/bench.sh harbor       a Harbor task: preparing it once, each attempt's copy and verifier
#   scripts/bench.sh verdicts     scoring one attempt: golden cases beside in-process tests + canary
#
# Figures to read (the runner's and MCP's benchmarks also print steal-%: the
# share of the processors a virtual machine's host took meanwhile for its
# other guests; the figures are this machine's only when it is near 0):
#   BenchmarkAttempt      cpu-ms/attempt (this process's CPU time: the fake
#       model runs in a child process and is not counted; target < 10),
#       B/op (bytes allocated per attempt; target <= 2 MB), attempts/s.
#   BenchmarkChat         cpu-µs/op and B/op per request, client=ollama-api
#       (api.Client.Chat) beside client=bench (the direct POST).
#   BenchmarkThroughput   of-ideal: model requests per second over the whole
#       run, start included, over N/L (target >= 0.95); -latency L (200ms).
#       of-bound: the shortest run possible (ceil(R/N) x L) over the wall
#       time; model-ms: the fake model's mean hold of a request (L and its own);
#       first-ms, last-ms: the run's start and end, every slot idle.
#       N=8/tests=1s: hidden tests as long as the turns, scored meanwhile.
#   BenchmarkScoringCost  what scoring adds to an attempt beside its tests;
#       sandbox-cpu-ms: the CPU of the sandbox's processes (bwrap, setpriv, sh).
#   BenchmarkScoringByVerdict  scoring a passing attempt of the same task
#       judged by golden cases (1 run) and in process (tests, then the canary
#       run: 2 runs); runs, cpu-ms (the sandboxed processes' CPU, meaningful
#       under load) and wall-ms (meaningful on an idle machine only).
#   BenchmarkSemverHiddenTests  a Go task's hidden tests in its prepared
#       environment beside a warm go test on the host (ratio, target <= 3).
#   BenchmarkSeedComparison  client-cpu-µs/call (target < 50 for bench),
#       p50-µs and p99-µs, bench's client and the seed's Python client
#       against the same two servers; with bench's client also
#       server-cpu-µs/call (the server process's CPU, /proc, 10 ms ticks).
#       bench's own server (server=bench-go) against the lesson's Python
#       server (server=seed-python), client=bench: target p50 within 1.5x.
#   BenchmarkServeCallPipe  the issue tracker's own cost of a call, in
#       process (servers/issuetracker; -cpuprofile for where it goes).
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
run() { echo "== go test $*"; go test -run '^$' "$@"; }
case $what in
attempt) run -bench Attempt -benchtime 200x ./runner/ ;;
chat) run -bench Chat -benchtime 500x ./agent/ ;;
throughput) run -bench Throughput -benchtime 1x ./runner/ ;;
mcp)
	run -bench 'PipeRoundTrip|SeedComparison|CallRoundTrip|StartAndDiscover' -benchtime 2000x ./agent/mcp/
	run -bench ServeCallPipe -benchtime 5000x ./servers/issuetracker/ ;;
store) run -bench SaveAttempt ./results/ ;;
scale) scripts/scale.sh "${2:-100000}" ;;
environments)
	# Warm environments: semver-compare's hidden tests in a prepared
	# environment beside a warm go test on the host (ratio, target <= 3),
	# and the README's first command over the example suite with an
	# instant model, cold and warm cache (target < 2 minutes).
	run -bench SemverHiddenTests -benchtime 5x ./environment/
	run -bench ExampleSuiteRun -benchtime 1x ./cmd/bench/
	;;
endpoints) scripts/scale-endpoints.sh ;;
harbor)
	# A Harbor task (docs/harbor.md): preparing it once (pull, unpack,
	# replay, provision) and each attempt (a private copy of the
	# environment and a verifier run); then copies of a larger tree.
	run -bench 'Prepare|Attempt' -benchtime 10x ./harbor/
	run -bench Copy -benchtime 5x ./image/
	run -bench HarborSuiteRun -benchtime 3x ./cmd/bench/
	;;
verdicts)
	run -bench ScoringByVerdict -benchtime 5x ./evaluator/
	run -bench GoldenAgainstBare -benchtime 10x ./evaluator/
	;;
all)
	run -bench Attempt -benchtime 200x ./runner/
	run -bench Chat -benchtime 500x ./agent/
	run -bench Throughput -benchtime 1x ./runner/
	run -bench 'PipeRoundTrip|SeedComparison|CallRoundTrip|StartAndDiscover' -benchtime 2000x ./agent/mcp/
	run -bench ServeCallPipe -benchtime 5000x ./servers/issuetracker/
	run -bench SaveAttempt ./results/
	run -bench Resolve ./agent/
	run -bench ScoringCost -benchtime 50x ./evaluator/
	run -bench ScoringByVerdict -benchtime 5x ./evaluator/
	run -bench SemverHiddenTests -benchtime 5x ./environment/
	;;
*)
	echo "bench.sh: unknown benchmark $what (attempt, chat, throughput, mcp, store, scale, environments, endpoints, harbor, verdicts)" >&2
	exit 2
	;;
esac
