#!/bin/sh
# Reference solution: iterate over a glob, quote every expansion.
set -e
cp "$BENCH_TASK_DIR/solution/backup.sh" backup.sh
