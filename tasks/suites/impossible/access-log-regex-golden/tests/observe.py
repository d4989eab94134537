"""Run logparse on one golden case (JSON on stdin) and print what it gave.

A case is {"parse": LINE} (parse_line's result) or {"summarize": TEXT}
(summarize over TEXT's lines). bench compares the printed JSON, out of this
process, with the reference solution's observation.
"""

import io
import json
import sys

out = sys.stdout
sys.stdout = sys.stderr  # what the module prints is not the observation

case = json.load(sys.stdin)
try:
    import logparse

    if "parse" in case:
        rec = logparse.parse_line(case["parse"])
        got = {"record": rec}
        if isinstance(rec, dict):  # 0 and 0.0 are equal JSON: say the types
            got["types"] = {k: type(v).__name__ for k, v in rec.items()}
    else:
        requests, total, statuses, skipped = logparse.summarize(io.StringIO(case["summarize"]))
        got = {"requests": requests, "bytes": total,
               "statuses": {str(k): v for k, v in sorted(dict(statuses).items())},
               "skipped": skipped}
except Exception as e:  # the case fails on the exception's kind
    got = {"exception": type(e).__name__}
out.write(json.dumps(got, sort_keys=True) + "\n")
