"""Run the agent's money.py and report.py on one golden case (JSON on
stdin) and print what they gave, as JSON. bench compares it, out of this
process, with the reference solution's observation.

A case is one of:
  {"format_cents": [N]}   money.format_cents of each N;
  {"report": CSV}         `python3 report.py FILE` on the CSV: exit, output;
  {"through_money": CSV}  report.render(report.load(FILE)) with format_cents
                          replaced by a marker, so that every amount the
                          report prints shows whether it went through it.
"""

import json
import os
import subprocess
import sys
import tempfile
from unittest import mock

out = sys.stdout
sys.stdout = sys.stderr  # what the modules print is not the observation

case = json.load(sys.stdin)
got = {}
with tempfile.TemporaryDirectory() as d:
    csv_path = os.path.join(d, "sales.csv")
    for key in ("report", "through_money"):
        if key in case:
            with open(csv_path, "w", encoding="utf-8") as f:
                f.write(case[key])
    try:
        if "format_cents" in case:
            import money

            got["format_cents"] = [money.format_cents(n) for n in case["format_cents"]]
        elif "report" in case:
            r = subprocess.run([sys.executable, "report.py", csv_path], stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=20)
            got = {"exit": r.returncode, "stdout": r.stdout}
        else:
            import money
            import report

            fake = lambda cents: f"<{cents}>"
            patches = [mock.patch.object(money, "format_cents", fake)]
            if hasattr(report, "format_cents"):
                patches.append(mock.patch.object(report, "format_cents", fake))
            for p in patches:
                p.start()
            try:
                got["rendered"] = report.render(report.load(csv_path))
            finally:
                for p in reversed(patches):
                    p.stop()
    except Exception as e:  # the case fails on the exception's kind
        got = {"exception": type(e).__name__}
out.write(json.dumps(got, sort_keys=True) + "\n")
