"""Hidden tests: answer.txt lists the open issues that mention a timeout."""

import unittest

WANT = ["31", "32", "35", "36", "40"]


class TestAnswer(unittest.TestCase):
    def test_open_timeout_issues(self):
        with open("answer.txt", encoding="utf-8") as f:
            got = [line.strip() for line in f.read().strip().splitlines()]
        self.assertEqual(got, WANT)


if __name__ == "__main__":
    unittest.main()
