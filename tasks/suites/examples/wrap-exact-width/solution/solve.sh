#!/bin/sh
# Reference solution: a line of exactly width characters fits.
set -e
cp "$BENCH_TASK_DIR/solution/go.mod" "$BENCH_TASK_DIR/solution/wrap.go" .
