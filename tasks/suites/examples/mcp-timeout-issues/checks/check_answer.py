"""Black-box check: answer.txt lists the open issues that mention a timeout."""

import os
import unittest

WANT = ["31", "32", "35", "36", "40"]


class TestAnswer(unittest.TestCase):
    def test_open_timeout_issues(self):
        with open(os.path.join(os.environ["BENCH_RESULT"], "answer.txt"), encoding="utf-8") as f:
            got = [line.strip() for line in f.read().strip().splitlines()]
        self.assertEqual(got, WANT)


if __name__ == "__main__":
    unittest.main(verbosity=2)
