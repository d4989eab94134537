"""Run the agent's config.parse on one golden case (a settings file's text
on stdin) and print the settings, or that it raised ConfigError, as JSON.
bench compares it, out of this process, with the reference solution's
observation.
"""

import json
import sys

out = sys.stdout
sys.stdout = sys.stderr  # what the module prints is not the observation

text = sys.stdin.read()
try:
    import config

    try:
        got = {"settings": config.parse(text)}
    except config.ConfigError:
        got = {"error": "ConfigError"}
except Exception as e:  # the case fails on the exception's kind
    got = {"exception": type(e).__name__}
out.write(json.dumps(got, sort_keys=True) + "\n")
