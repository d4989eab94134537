#!/bin/sh
# Reference solution: compare version parts by numeric value.
set -e
cp "$BENCH_TASK_DIR/solution/go.mod" "$BENCH_TASK_DIR/solution/semver.go" .
