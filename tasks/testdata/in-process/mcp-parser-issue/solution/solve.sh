#!/bin/sh
# Reference solution (issue #17): the key ends at the first '=', the rest of
# the line is the value.
set -e
cp "$BENCH_TASK_DIR/solution/config.py" config.py
