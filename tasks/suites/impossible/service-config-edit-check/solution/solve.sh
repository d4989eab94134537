#!/bin/sh
# Reference solution: level warn, region eu-west-2 appended, beta_search on,
# ttl_seconds 900 (15 minutes).
set -e
cp "$BENCH_TASK_DIR/solution/service.json" config/service.json
