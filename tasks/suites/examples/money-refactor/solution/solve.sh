#!/bin/sh
# Reference solution: money.format_cents, used by report.py for every amount.
set -e
cp "$BENCH_TASK_DIR/solution/money.py" "$BENCH_TASK_DIR/solution/report.py" .
