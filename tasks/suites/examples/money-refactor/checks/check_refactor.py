"""Black-box check of the refactoring's shape: money.py defines
format_cents, and report.py has no money formatting code of its own.

Reads both files as data and parses them with ast (run with python3 -I -S:
nothing of the agent's is imported or run). What the code prints is judged
by the golden cases.
"""

import ast
import os
import unittest

RESULT = os.environ["BENCH_RESULT"]


def tree(name):
    with open(os.path.join(RESULT, name), encoding="utf-8") as f:
        return ast.parse(f.read(), name)


class RefactorCheck(unittest.TestCase):
    def test_money_defines_format_cents(self):
        names = [n.name for n in tree("money.py").body if isinstance(n, ast.FunctionDef)]
        self.assertIn("format_cents", names, "money.py has no top-level function format_cents")

    def test_no_formatting_code_left_in_report(self):
        for node in ast.walk(tree("report.py")):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "divmod":
                self.fail(f"report.py line {node.lineno} still splits dollars and cents itself")
            if isinstance(node, ast.FunctionDef) and node.name == "format_cents":
                self.fail("format_cents belongs in money.py, not report.py")


if __name__ == "__main__":
    unittest.main(verbosity=2)
