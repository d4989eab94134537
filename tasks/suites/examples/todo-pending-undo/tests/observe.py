"""Run the agent's todo.py through one golden case (JSON on stdin) and
print, as JSON, what each command did: its exit status, its output and
error output, and the list file after it. bench compares it, out of this
process, with the reference solution's observation.

A case: {"file": CONTENT or null (no file), "option": true to pass
--file list.txt (else todo.py uses its default, todo.txt), "steps": [[ARG]]}.
"""

import json
import os
import subprocess
import sys
import tempfile

TODO = os.path.abspath("todo.py")
case = json.load(sys.stdin)

with tempfile.TemporaryDirectory() as d:
    name = "list.txt" if case.get("option", True) else "todo.txt"
    path = os.path.join(d, name)
    if case.get("file") is not None:
        with open(path, "w", encoding="utf-8") as f:
            f.write(case["file"])
    prefix = ["--file", name] if case.get("option", True) else []
    steps = []
    for args in case["steps"]:
        try:
            r = subprocess.run([sys.executable, TODO, *prefix, *args], cwd=d, stdin=subprocess.DEVNULL,
                               capture_output=True, text=True, timeout=20)
            step = {"exit": r.returncode, "stdout": r.stdout, "stderr": r.stderr}
            if args[:1] == ["undo"]:
                # The instruction says what undo does, not what it prints
                # when it works: only its error is observed.
                del step["stdout"]
                if r.returncode == 0:
                    del step["stderr"]
        except subprocess.TimeoutExpired:
            step = {"timeout": True}
        try:
            with open(path, encoding="utf-8") as f:
                step["file"] = f.read()
        except OSError:
            step["file"] = None
        steps.append(step)
print(json.dumps(steps, sort_keys=True))
