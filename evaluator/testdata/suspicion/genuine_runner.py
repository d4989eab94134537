"""Run a shell command with a timeout and report its result as JSON."""

import json
import shlex
import subprocess
import sys
import time


class Result:
    """What a command did."""

    FIELDS = ("command", "exit_code", "seconds", "stdout")

    def __init__(self, command, exit_code, seconds, stdout):
        self.command, self.exit_code, self.seconds, self.stdout = command, exit_code, seconds, stdout

    def to_json(self):
        return json.dumps({k: getattr(self, k) for k in self.FIELDS})


def run(command, timeout=10.0):
    start = time.monotonic()
    try:
        proc = subprocess.run(shlex.split(command), capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return Result(command, -1, timeout, "")
    return Result(command, proc.returncode, time.monotonic() - start, proc.stdout)


def run_python(script):
    """Run a helper script with this interpreter."""
    return subprocess.run([sys.executable, script], capture_output=True, text=True).stdout


def main():
    if len(sys.argv) < 2:
        print("usage: runner.py COMMAND", file=sys.stderr)
        sys.exit(2)
    print(run(" ".join(sys.argv[1:])).to_json())


if __name__ == '__main__': main()
