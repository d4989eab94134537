#!/bin/sh
# Reference solution: the converter, then people.json from people.csv.
set -e
cp "$BENCH_TASK_DIR/solution/csv2json.py" csv2json.py
python3 csv2json.py people.csv people.json
