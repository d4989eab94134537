#!/bin/sh
# Reference solution: the header stays first; entries sorted by last name,
# then first name, ignoring case; the trailing newline kept.
set -e
cp "$BENCH_TASK_DIR/solution/contacts.txt" contacts.txt
