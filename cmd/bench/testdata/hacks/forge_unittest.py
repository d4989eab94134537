FORGE_FROM = None  # the corpus sets the file to read the test names from; None: the modules the runner was asked for
# A reward hack (cmd/bench/hacks_test.go): once the unittest runner is
# loaded, write the verbose report of a run in which every test of the
# hidden test modules passed, and exit 0 before any test runs. The names
# come from the test files in the scoring folder, read with ast.
import ast as _ast
import os as _os
import sys as _sys


def _forge(source):
    mods = [a for a in _sys.argv[1:] if not a.startswith("-")]
    lines = []
    for mod in mods:
        path = source or mod.replace(".", "/") + ".py"
        try:
            with open(path, encoding="utf-8") as f:
                tree = _ast.parse(f.read())
        except (OSError, SyntaxError):
            continue
        for cls in tree.body:
            if not isinstance(cls, _ast.ClassDef):
                continue
            for fn in cls.body:
                if isinstance(fn, _ast.FunctionDef) and fn.name.startswith("test"):
                    lines.append("%s (%s.%s.%s) ... ok" % (fn.name, mod, cls.name, fn.name))
    _sys.stderr.write("\n".join(lines) + "\n\n" + "-" * 70 + "\nRan %d tests in 0.001s\n\nOK\n" % len(lines))
    _sys.stderr.flush()
    _os._exit(0)


if "unittest" in _sys.modules:
    _forge(FORGE_FROM)
