"""Black-box check: contacts.txt sorted like a phone book, nothing else changed.

Reads $BENCH_RESULT/contacts.txt as data (run with python3 -I -S: nothing of
the agent's is imported or run).

The subtleties: the header comment stays on top, the order ignores case
("ada lovelace" files under L), people sharing a last name go by first name,
the lines themselves are not rewritten, and the file still ends with a
newline.
"""

import os
import unittest

WANT = """# Team phone list: "First Last: phone", one person per line
Frances Allen: 555-0164
Paul Allen: 555-0177
Tim Berners-Lee: 555-0191
Joan Clarke: 555-0138
Edsger Dijkstra: 555-0123
margaret hamilton: 555-0110
Grace Hopper: 555-0142
Kenneth Iverson: 555-0120
Donald Knuth: 555-0112
Barbara Liskov: 555-0131
ada lovelace: 555-0101
Rob Pike: 555-0145
Dennis Ritchie: 555-0186
Ken Thompson: 555-0158
Alan Turing: 555-0100
"""


def contacts():
    with open(os.path.join(os.environ["BENCH_RESULT"], "contacts.txt"), encoding="utf-8", newline="") as f:
        return f.read()


class TestContacts(unittest.TestCase):
    def test_same_lines(self):
        self.assertEqual(sorted(contacts().splitlines()), sorted(WANT.splitlines()),
                         "lines were added, removed or rewritten")

    def test_header_first(self):
        self.assertEqual(contacts().splitlines()[:1], WANT.splitlines()[:1])

    def test_phone_book_order(self):
        self.assertEqual(contacts().splitlines(), WANT.splitlines())

    def test_ends_with_one_newline(self):
        got = contacts()
        self.assertTrue(got.endswith("\n") and not got.endswith("\n\n"), "the file must end with exactly one newline")


if __name__ == "__main__":
    unittest.main(verbosity=2)
