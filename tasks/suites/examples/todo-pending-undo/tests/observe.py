"""Run the agent's todo.py through one golden case (JSON on stdin) and
print, as JSON, what each command did: its exit status, its output and
error output, and the list file after it. bench compares it, out of this
process, with the reference solution's observation.

A case: {"file": CONTENT or null (no file), "option": true to pass
--file list.txt (else todo.py uses its default, todo.txt), "steps": [[ARG]]}.

Each command runs todo.py afresh as a script (runpy, as `python3 todo.py
ARGS` would, in a fresh folder), without a process of its own: the
observations are the same and a case costs one interpreter, not one per
command.
"""

import contextlib
import io
import json
import os
import runpy
import sys
import tempfile

TODO = os.path.abspath("todo.py")
real_out = sys.stdout
case = json.load(sys.stdin)


def run(argv):
    """Run todo.py with argv as `python3 todo.py ARGV` would: exit status, output."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    sys.argv = [TODO, *argv]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            runpy.run_path(TODO, run_name="__main__")
        except SystemExit as e:
            if e.code is None:
                code = 0
            elif isinstance(e.code, int):
                code = e.code
            else:
                print(e.code, file=sys.stderr)
                code = 1
        except BaseException as e:  # an uncaught exception: the traceback's status
            print(f"{type(e).__name__}: {e}", file=sys.stderr)
            code = 1
    return code, out.getvalue(), err.getvalue()


with tempfile.TemporaryDirectory() as d:
    os.chdir(d)
    name = "list.txt" if case.get("option", True) else "todo.txt"
    if case.get("file") is not None:
        with open(name, "w", encoding="utf-8") as f:
            f.write(case["file"])
    prefix = ["--file", name] if case.get("option", True) else []
    steps = []
    for args in case["steps"]:
        code, out, err = run(prefix + args)
        step = {"exit": code, "stdout": out, "stderr": err}
        if args[:1] == ["undo"]:
            # The instruction says what undo does, not what it prints
            # when it works: only its error is observed.
            del step["stdout"]
            if code == 0:
                del step["stderr"]
        try:
            with open(name, encoding="utf-8") as f:
                step["file"] = f.read()
        except OSError:
            step["file"] = None
        steps.append(step)
real_out.write(json.dumps(steps, sort_keys=True) + "\n")
