#!/usr/bin/env bash
# bench at scale: bench runs, report and export on a database of N attempts
# × 10 turns (default 100,000), written by scripts/gendb through the store's
# own write path. Prints each command's wall time, CPU time (user +
# system, every thread) and peak memory (GNU time), export's throughput,
# and the targets.
#
#   scripts/scale.sh            100,000 attempts (about 1 GB; generating it
#                               takes a minute or two, and is done once)
#   scripts/scale.sh 3200       a quick run (a multiple of 32)
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
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
go build -o "$bin/bench" ./cmd/bench
go build -o "$bin/gendb" ./scripts/gendb

db=$dir/bench-scale-$n.db
stamp=$(cat scripts/gendb/*.go results/migrations/*.sql | sha256sum | cut -c1-16)
if [[ ! -f $db || $(cat "$db.stamp" 2>/dev/null) != "$stamp" ]]; then
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

echo "database: $db, $n attempts, $(( $(stat -c %s "$db") / 1000000 )) MB; load average $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
printf '%-14s %9s %9s %10s   %s\n' command seconds "cpu s" "peak MB" target
read -r s kb cpu < <(measure "$bin/bench" runs --db "$db")
printf '%-14s %9s %9s %10d   %s\n' "bench runs" "$s" "$cpu" $(( kb / 1024 )) "< 0.2 s, < 200 MB"
read -r s kb cpu < <(measure "$bin/bench" report --db "$db")
printf '%-14s %9s %9s %10d   %s\n' "bench report" "$s" "$cpu" $(( kb / 1024 )) "< 1 s, < 200 MB"
read -r s kb cpu < <(measure "$bin/bench" export --db "$db" --out "$bin/export.jsonl")
bytes=$(stat -c %s "$bin/export.jsonl")
printf '%-14s %9s %9s %10d   %s\n' "bench export" "$s" "$cpu" $(( kb / 1024 )) ">= 100 MB/s, < 200 MB"
awk -v b="$bytes" -v s="$s" 'BEGIN { printf "export: %.0f MB in %s s: %.0f MB/s\n", b / 1e6, s, b / 1e6 / s }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
