import ast
import os
import subprocess
import sys
import tempfile
import unittest
from unittest import mock

import money
import report

MAIN = """Sales by region
  East       -$23.49
  North      $3,800.74
  South      $1,000,045.50
  West       -$0.94
Total: $1,003,821.81
Refunds: 3
Largest refund: -$19.99
Average sale: $125,477.73
"""

OTHER_CSV = """region,product,cents
Central,widget,99
Central,gadget,1
Harbour,gizmo,123456789
"""

OTHER = """Sales by region
  Central    $1.00
  Harbour    $1,234,567.89
Total: $1,234,568.89
Refunds: 0
Average sale: $411,522.96
"""

EMPTY = """Sales by region
Total: $0.00
Refunds: 0
"""


def run_report(path):
    r = subprocess.run([sys.executable, "report.py", path], capture_output=True, text=True, timeout=20)
    if r.returncode != 0:
        raise AssertionError(f"report.py {path} failed: {r.stderr}")
    return r.stdout


class HiddenRefactorTest(unittest.TestCase):
    def test_format_cents(self):
        cases = {
            123405: "$1,234.05",
            -350: "-$3.50",
            0: "$0.00",
            5: "$0.05",
            -99: "-$0.99",
            1999: "$19.99",
            100000000: "$1,000,000.00",
            -123456789: "-$1,234,567.89",
        }
        for cents, want in cases.items():
            self.assertEqual(money.format_cents(cents), want, cents)

    def test_report_output_unchanged(self):
        self.assertEqual(run_report("sales.csv"), MAIN)
        with tempfile.TemporaryDirectory() as d:
            other = os.path.join(d, "other.csv")
            with open(other, "w", encoding="utf-8") as f:
                f.write(OTHER_CSV)
            self.assertEqual(run_report(other), OTHER)
            empty = os.path.join(d, "empty.csv")
            with open(empty, "w", encoding="utf-8") as f:
                f.write("region,product,cents\n")
            self.assertEqual(run_report(empty), EMPTY)

    def test_report_formats_through_money(self):
        fake = lambda cents: f"<{cents}>"
        patches = [mock.patch.object(money, "format_cents", fake)]
        if hasattr(report, "format_cents"):
            patches.append(mock.patch.object(report, "format_cents", fake))
        for p in patches:
            p.start()
        try:
            out = report.render(report.load("sales.csv"))
        finally:
            for p in reversed(patches):
                p.stop()
        self.assertNotIn("$", out, "report.py still formats some amounts itself:\n" + out)
        self.assertIn("<", out)

    def test_no_formatting_code_left_in_report(self):
        with open("report.py", encoding="utf-8") as f:
            tree = ast.parse(f.read())
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "divmod":
                self.fail(f"report.py line {node.lineno} still splits dollars and cents itself")
            if isinstance(node, ast.FunctionDef) and node.name == "format_cents":
                self.fail("format_cents belongs in money.py, not report.py")


if __name__ == "__main__":
    unittest.main()
