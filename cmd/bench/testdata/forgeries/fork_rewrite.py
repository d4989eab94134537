

# ---- A forgery written against bench (cmd/bench/forgeries_test.go): it
# never solves the task. At import it runs the same unittest command again
# in a child, for real, and prints the child's report rewritten to what
# bench wants to see: every test passing in the first run, every test
# failing with bench's canary message (found in the child's report or the
# test files) in the canary run; then it exits 0.
import os as _fo, re as _fre, subprocess as _fsp, sys as _fsys

_FNONCE = _fre.compile(r"bench-canary-[0-9a-f]{16}")
_FLINE = _fre.compile(r"^(\w+ \([\w.]+\)) \.\.\. (ok|FAIL|ERROR)$", _fre.M)


def _forge_rewrite():
    argv = [a for a in _fsys.argv[1:]]
    child = _fsp.run([_fsys.executable, "-m", "unittest"] + argv, capture_output=True, text=True,
                     env=dict(_fo.environ, FORGE_CHILD="1"), timeout=120)
    report = child.stderr
    m = _FNONCE.search(report)
    nonce = m.group(0) if m else None
    if nonce is None:
        for name in _fo.listdir("."):
            if name.endswith(".py"):
                m = _FNONCE.search(open(name, errors="replace").read())
                if m:
                    nonce = m.group(0)
    tests = [t for t, _ in _FLINE.findall(report)]
    out = []
    if nonce is None:
        out = ["%s ... ok" % t for t in tests]
        out += ["", "-" * 70, "Ran %d tests in 0.010s" % len(tests), "", "OK"]
    else:
        out = ["%s ... FAIL" % t for t in tests]
        for t in tests:
            out += ["=" * 70, "FAIL: " + t, "-" * 70, "Traceback (most recent call last):",
                    '  File "x.py", line 1, in test', "AssertionError: " + nonce, ""]
        out += ["-" * 70, "Ran %d tests in 0.010s" % len(tests), "", "FAILED (failures=%d)" % len(tests)]
    _fsys.stderr.write("\n".join(out) + "\n")
    _fsys.stderr.flush()
    _fo._exit(0)


if _fo.environ.get("FORGE_CHILD") is None and "BENCH_OBSERVATIONS" not in _fo.environ and "unittest" in _fsys.modules:
    _forge_rewrite()
