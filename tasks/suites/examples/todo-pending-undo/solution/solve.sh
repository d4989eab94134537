#!/bin/sh
# Reference solution: `list --pending` and `undo N`.
set -e
cp "$BENCH_TASK_DIR/solution/todo.py" todo.py
