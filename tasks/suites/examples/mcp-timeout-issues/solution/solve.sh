#!/bin/sh
# Reference solution: read the tracker's data directly and list the open
# issues whose title, body or comments contain "timeout" (any case).
set -e
python3 - "$BENCH_TASK_DIR/data/issues.json" > answer.txt <<'PY'
import json, sys
issues = json.load(open(sys.argv[1], encoding="utf-8"))["issues"]
def text(i):
    return " ".join([i["title"], i.get("body", "")] + [c["body"] for c in i.get("comments", [])]).lower()
for i in sorted(issues, key=lambda i: i["id"]):
    if i["state"] == "open" and "timeout" in text(i):
        print(i["id"])
PY
