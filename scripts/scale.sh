#!/usr/bin/env bash
# bench at scale: bench runs, report and export on a database of N attempts
# × 10 turns (default 100,000), written by scripts/gendb through the store's
# own write path. Prints each command's wall time, CPU time (user +
# system, every thread) and peak memory (GNU time), export's throughput,
# and the targets; then each page of bench view on its first request (a
# fresh server each, the median of RUNS) and on a second: the server's
# CPU time for the request (from /proc, in 10 ms ticks) and its wall time.
#
#   scripts/scale.sh            100,000 attempts (about 1 GB; generating it
#                               takes a minute or two, and is done once)
#   scripts/scale.sh 3200       a quick run (a multiple of 32)
#   SCALE_ONLY=view scripts/scale.sh   only bench view's pages (or report,
#                               export: one of them)
#   BENCH_SCALE_BIN=DIR         measure DIR/bench rather than this tree's
#                               (a build of another revision: before/after)
#   BENCH_SCALE_DB=FILE         measure FILE as it is (say, one written by
#                               another revision's gendb), never generated
#
# The database is kept in ${BENCH_SCALE_DIR:-$TMPDIR} as bench-scale-N.db and
# generated again only when the generator or the schema changed. Each
# command runs once to warm the page cache, then RUNS times (default 3);
# the median is shown. Other processes' load changes wall times: the load
# average is printed with the figures.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-100000}
runs=${RUNS:-3}
dir=${BENCH_SCALE_DIR:-${TMPDIR:-/tmp}}
if ! [[ $n =~ ^[0-9]+$ ]] || (( n < 32 || n % 32 != 0 )); then
	echo "scale.sh: ATTEMPTS: expected a multiple of 32, got $n" >&2
	exit 2
fi
if ! /usr/bin/time -f %e true 2>/dev/null; then
	echo "scale.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2
	exit 2
fi
only=${SCALE_ONLY:-}
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
if [[ -n ${BENCH_SCALE_BIN:-} ]]; then
	cp "$BENCH_SCALE_BIN/bench" "$bin/bench"
else
	go build -o "$bin/bench" ./cmd/bench
fi
go build -o "$bin/gendb" ./scripts/gendb

db=${BENCH_SCALE_DB:-$dir/bench-scale-$n.db}
stamp=$(cat scripts/gendb/*.go results/migrations/*.sql | sha256sum | cut -c1-16)
if [[ -n ${BENCH_SCALE_DB:-} ]]; then
	[[ -f $db ]] || { echo "scale.sh: BENCH_SCALE_DB=$db: no such file" >&2; exit 2; }
elif [[ ! -f $db || $(cat "$db.stamp" 2>/dev/null) != "$stamp" ]]; then
	rm -f "$db" "$db-wal" "$db-shm" "$db.stamp"
	"$bin/gendb" --out "$db" --attempts "$n"
	echo "$stamp" >"$db.stamp"
fi

# measure CMD...: prints "seconds peak_kb cpu_seconds" of the run of median
# wall time among $runs runs (cpu: user + system, every thread).
measure() {
	"$@" >/dev/null 2>&1
	for _ in $(seq "$runs"); do
		/usr/bin/time -f "%e %M %U %S" -o "$bin/t" "$@" >/dev/null 2>&1
		awk '{ printf "%s %s %.2f\n", $1, $2, $3 + $4 }' "$bin/t"
	done | sort -n | sed -n "$(( (runs + 1) / 2 ))p"
}

echo "database: $db, $n attempts, $(( $(stat -L -c %s "$db") / 1000000 )) MB; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '%-14s %9s %9s %10s   %s\n' command seconds "cpu s" "peak MB" target
if [[ -z $only || $only == runs ]]; then
	read -r s kb cpu < <(measure "$bin/bench" runs --db "$db")
	printf '%-14s %9s %9s %10d   %s\n' "bench runs" "$s" "$cpu" $(( kb / 1024 )) "< 0.2 s, < 200 MB"
fi
if [[ -z $only || $only == report ]]; then
	read -r s kb cpu < <(measure "$bin/bench" report --db "$db")
	printf '%-14s %9s %9s %10d   %s\n' "bench report" "$s" "$cpu" $(( kb / 1024 )) "<= 0.3 s of CPU, < 200 MB"
fi
if [[ -z $only || $only == export ]]; then
	read -r s kb cpu < <(measure "$bin/bench" export --db "$db" --out "$bin/export.jsonl")
	bytes=$(stat -c %s "$bin/export.jsonl")
	printf '%-14s %9s %9s %10d   %s\n' "bench export" "$s" "$cpu" $(( kb / 1024 )) ">= 200 MB per CPU-second, <= 100 MB"
	awk -v b="$bytes" -v s="$s" -v c="$cpu" 'BEGIN { printf "export: %.0f MB in %s s, %s s of CPU: %.0f MB/s, %.0f MB per CPU-second\n", b / 1e6, s, c, b / 1e6 / s, b / 1e6 / c }'
fi

# cputicks PID: the process's CPU time so far (user + system), in clock
# ticks (1/100 s on Linux).
cputicks() { awk '{ print $14 + $15 }' "/proc/$1/stat"; }

# page PATH: requests PATH of a fresh bench view twice; prints the CPU
# milliseconds and wall milliseconds of the first request and the second.
page() {
	local log=$bin/view.log url pid t0 t1 t2 w1 w2
	"$bin/bench" view --db "$db" --addr 127.0.0.1:0 >"$log" 2>&1 &
	pid=$!
	for _ in $(seq 100); do
		url=$(grep -o 'http://[^ ]*' "$log" | head -1 || true)
		[[ -n $url ]] && break
		sleep 0.1
	done
	url=${url%/}
	t0=$(cputicks "$pid")
	w1=$(curl -s -o /dev/null -w '%{time_total}' "$url$1")
	t1=$(cputicks "$pid")
	w2=$(curl -s -o /dev/null -w '%{time_total}' "$url$1")
	t2=$(cputicks "$pid")
	kill "$pid"
	wait "$pid" 2>/dev/null || true
	echo "$(( (t1 - t0) * 10 )) $(awk -v w="$w1" 'BEGIN { printf "%.0f", w * 1000 }') $(( (t2 - t1) * 10 )) $(awk -v w="$w2" 'BEGIN { printf "%.0f", w * 1000 }')"
}

if [[ -z $only || $only == view ]]; then
	run_id=$(sqlite3 "$db" 'SELECT id FROM runs ORDER BY created_at LIMIT 1' 2>/dev/null || echo scale)
	attempt=$(sqlite3 "$db" "SELECT max(id) FROM attempts" 2>/dev/null || echo 1)
	echo "bench view, target <= 100 ms per page on the first request (CPU ms, wall ms):"
	printf '%-34s %10s %10s %10s %10s\n' page "1st cpu" "1st wall" "2nd cpu" "2nd wall"
	for p in / "/runs/$run_id" "/runs/$run_id?page=20" "/runs/$run_id?outcome=fail" \
		"/runs/$run_id/attempts" "/runs/$run_id/attempts?page=400" "/runs/$run_id/attempts?outcome=pass&page=2" \
		"/attempts/$attempt" "/compare?a=$run_id"; do
		# The median (by first-request CPU) of $runs fresh servers.
		read -r c1 w1 c2 w2 < <(for _ in $(seq "$runs"); do page "$p"; done | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
		printf '%-34s %10s %10s %10s %10s\n' "$p" "$c1" "$w1" "$c2" "$w2"
	done
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
