"""Run recipe on every golden case (a recipe's text, in $BENCH_CASES) and
write what it gave for each, as JSON, to $BENCH_OBSERVATIONS/<case>: title,
serves, ingredients, steps and parse. bench compares them, out of this
process, with the reference solution's. One process for all the cases.
"""

import json
import os
import sys

cases, observed = os.environ["BENCH_CASES"], os.environ["BENCH_OBSERVATIONS"]
sys.stdout = sys.stderr  # what the module prints is not an observation

try:
    import recipe
except Exception as e:
    recipe, broken = None, type(e).__name__

for case in sorted(os.listdir(cases)):
    with open(os.path.join(cases, case), encoding="utf-8") as f:
        text = f.read()
    got = {}
    if recipe is None:
        got["import"] = broken
    else:
        for name in ("title", "serves", "ingredients", "steps", "parse"):
            try:
                got[name] = getattr(recipe, name)(text)
            except Exception as e:  # the case fails on the exception's kind
                got[name] = {"exception": type(e).__name__}
    with open(os.path.join(observed, case), "w", encoding="utf-8") as f:
        f.write(json.dumps(got, sort_keys=True) + "\n")
