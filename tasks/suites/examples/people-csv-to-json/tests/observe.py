"""Run the agent's csv2json.py on one golden case ($BENCH_CASE, a CSV file)
and print what it wrote, as JSON: its exit status, the people, and the
Python type of each age (so that 86 and 86.0 differ). bench compares it,
out of this process, with the reference solution's observation.
"""

import json
import os
import subprocess
import sys
import tempfile

with tempfile.TemporaryDirectory() as d:
    out = os.path.join(d, "out.json")
    r = subprocess.run([sys.executable, "csv2json.py", os.environ["BENCH_CASE"], out],
                       stdin=subprocess.DEVNULL, capture_output=True, timeout=20)
    got = {"exit": r.returncode}
    try:
        with open(out, encoding="utf-8") as f:
            people = json.load(f)
    except (OSError, ValueError) as e:
        got["unreadable"] = type(e).__name__
    else:
        got["people"] = people
        if isinstance(people, list):
            got["age_types"] = [type(p.get("age")).__name__ if isinstance(p, dict) else None for p in people]
print(json.dumps(got, sort_keys=True, ensure_ascii=False))
