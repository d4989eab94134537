"""Run logparse on every golden case (JSON, in $BENCH_CASES) and write what
it gave for each to $BENCH_OBSERVATIONS/<case>.

A case is {"parse": LINE} (parse_line's result) or {"summarize": TEXT}
(summarize over TEXT's lines). bench compares the JSON, out of this
process, with the reference solution's observation. One process for all
the cases.
"""

import io
import json
import os
import sys

cases, observed = os.environ["BENCH_CASES"], os.environ["BENCH_OBSERVATIONS"]
sys.stdout = sys.stderr  # what the module prints is not an observation

try:
    import logparse
except Exception as e:
    logparse, broken = None, type(e).__name__

for name in sorted(os.listdir(cases)):
    with open(os.path.join(cases, name), encoding="utf-8") as f:
        case = json.load(f)
    try:
        if logparse is None:
            raise ImportError(broken)
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
    with open(os.path.join(observed, name), "w", encoding="utf-8") as f:
        f.write(json.dumps(got, sort_keys=True) + "\n")
