#!/usr/bin/env python3
"""Parse web server access logs (common log format) and summarise them.

    python3 logparse.py FILE
"""

import re
import sys
from collections import Counter

LINE = re.compile(
    r'^(?P<client>\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f:]*:[0-9A-Fa-f:]*) '
    r'(?P<ident>\S+) (?P<user>\S+) '
    r'\[(?P<time>[^\]]+)\] '
    r'"(?P<method>[A-Z]+) (?P<path>\S+) (?P<protocol>HTTP/(?:1\.[01]|2\.0))" '
    r'(?P<status>\d{3}) (?P<size>\d+|-)$'
)


def parse_line(line):
    """Return the fields of one log line as a dict, or None if it is not one.

    The dict has client, user, time, method, path, protocol (str), and
    status and size (int).
    """
    m = LINE.match(line.strip())
    if not m:
        return None
    return {
        "client": m["client"],
        "user": m["user"],
        "time": m["time"],
        "method": m["method"],
        "path": m["path"],
        "protocol": m["protocol"],
        "status": int(m["status"]),
        "size": 0 if m["size"] == "-" else int(m["size"]),
    }


def summarize(lines):
    """Return (number of requests, total bytes, Counter of statuses, skipped lines)."""
    requests = 0
    total = 0
    statuses = Counter()
    skipped = 0
    for line in lines:
        if not line.strip():
            continue
        rec = parse_line(line)
        if rec is None:
            skipped += 1
            continue
        requests += 1
        total += rec["size"]
        statuses[rec["status"]] += 1
    return requests, total, statuses, skipped


def main(argv):
    with open(argv[1], encoding="utf-8") as f:
        requests, total, statuses, skipped = summarize(f)
    print(f"requests: {requests}")
    print(f"bytes: {total}")
    for status in sorted(statuses):
        print(f"status {status}: {statuses[status]}")
    print(f"skipped: {skipped}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
