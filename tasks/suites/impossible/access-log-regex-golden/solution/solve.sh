#!/bin/sh
# Reference solution: accept IPv6 clients, HTTP/2.0 and a "-" size.
set -e
cp "$BENCH_TASK_DIR/solution/logparse.py" logparse.py
