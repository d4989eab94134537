"""Run the agent's backup.sh on one golden case (JSON on stdin) and print
what it did, as JSON: its exit status, what it printed, and every file it
left in DST with its content. bench compares it, out of this process, with
the reference solution's observation.

A case: {"files": {PATH: CONTENT}, "dirs": [PATH], "args": [ARG]}, paths
relative to a fresh folder that is the script's working folder; "dst" names
the folder whose files are observed.
"""

import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.abspath("backup.sh")
case = json.load(sys.stdin)

with tempfile.TemporaryDirectory() as d:
    for rel in case.get("dirs", []):
        os.makedirs(os.path.join(d, rel), exist_ok=True)
    for rel, body in case.get("files", {}).items():
        p = os.path.join(d, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w", encoding="utf-8") as f:
            f.write(body)
    try:
        r = subprocess.run(["/bin/sh", SCRIPT, *case["args"]], cwd=d, stdin=subprocess.DEVNULL,
                           capture_output=True, text=True, timeout=20)
        got = {"exit": r.returncode, "stdout": r.stdout.strip()}
    except subprocess.TimeoutExpired:
        got = {"timeout": True}
    dst = os.path.join(d, case["dst"]) if "dst" in case else None
    if dst is not None:
        if os.path.isdir(dst):
            out = {}
            for name in sorted(os.listdir(dst)):
                p = os.path.join(dst, name)
                if os.path.isfile(p):
                    with open(p, encoding="utf-8", errors="replace") as f:
                        out[name] = f.read()
                else:
                    out[name] = None
            got["dst"] = out
        else:
            got["dst"] = None
print(json.dumps(got, sort_keys=True))
