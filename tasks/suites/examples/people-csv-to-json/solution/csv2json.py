#!/usr/bin/env python3
"""Convert a CSV of people (name,email,age,tags) into a JSON array."""

import csv
import json
import sys


def convert(rows):
    """Turn CSV dict rows into the output objects."""
    out = []
    for row in rows:
        name = (row.get("name") or "").strip()
        if not name:
            continue
        age = (row.get("age") or "").strip()
        tags = [t.strip() for t in (row.get("tags") or "").split(";")]
        out.append({
            "name": name,
            "email": (row.get("email") or "").strip().lower(),
            "age": int(age) if age else None,
            "tags": [t for t in tags if t],
        })
    return out


def main(argv):
    if len(argv) != 3:
        print("usage: csv2json.py INPUT.csv OUTPUT.json", file=sys.stderr)
        return 2
    with open(argv[1], newline="", encoding="utf-8") as f:
        people = convert(csv.DictReader(f))
    with open(argv[2], "w", encoding="utf-8") as f:
        json.dump(people, f, indent=2, ensure_ascii=False)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
