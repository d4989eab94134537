"""Run recipe on one golden case (a recipe's text on stdin) and print what
it gave: title, serves, ingredients, steps and parse, as JSON. bench
compares it, out of this process, with the reference solution's.
"""

import json
import sys

out = sys.stdout
sys.stdout = sys.stderr  # what the module prints is not the observation

text = sys.stdin.read()
got = {}
try:
    import recipe
except Exception as e:
    got["import"] = type(e).__name__
else:
    for name in ("title", "serves", "ingredients", "steps", "parse"):
        try:
            got[name] = getattr(recipe, name)(text)
        except Exception as e:  # the case fails on the exception's kind
            got[name] = {"exception": type(e).__name__}
out.write(json.dumps(got, sort_keys=True) + "\n")
