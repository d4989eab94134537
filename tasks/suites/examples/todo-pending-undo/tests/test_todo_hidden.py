import os
import subprocess
import sys
import tempfile
import unittest

TODO = os.path.abspath("todo.py")

START = "[x] book the venue\n[ ] send the invitations\n[ ] order the cake\n[x] pick a date\n"


class HiddenTodoTest(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.TemporaryDirectory()
        self.file = os.path.join(self.dir.name, "list.txt")
        with open(self.file, "w", encoding="utf-8") as f:
            f.write(START)

    def tearDown(self):
        self.dir.cleanup()

    def run_todo(self, *args):
        return subprocess.run(
            [sys.executable, TODO, "--file", self.file, *args],
            capture_output=True, text=True, timeout=20, cwd=self.dir.name,
        )

    def content(self):
        with open(self.file, encoding="utf-8") as f:
            return f.read()

    def test_list_unchanged(self):
        r = self.run_todo("list")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            r.stdout.splitlines(),
            ["1. [x] book the venue", "2. [ ] send the invitations",
             "3. [ ] order the cake", "4. [x] pick a date"],
        )

    def test_list_pending_keeps_numbers(self):
        r = self.run_todo("list", "--pending")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.splitlines(), ["2. [ ] send the invitations", "3. [ ] order the cake"])
        self.assertEqual(self.content(), START)

    def test_pending_after_done(self):
        self.assertEqual(self.run_todo("done", "3").returncode, 0)
        r = self.run_todo("list", "--pending")
        self.assertEqual(r.stdout.splitlines(), ["2. [ ] send the invitations"])

    def test_pending_when_all_done(self):
        self.run_todo("done", "2")
        self.run_todo("done", "3")
        r = self.run_todo("list", "--pending")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(r.stdout.strip(), "")

    def test_undo(self):
        r = self.run_todo("undo", "1")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(
            self.content(),
            "[ ] book the venue\n[ ] send the invitations\n[ ] order the cake\n[x] pick a date\n",
        )
        r = self.run_todo("list", "--pending")
        self.assertEqual(
            r.stdout.splitlines(),
            ["1. [ ] book the venue", "2. [ ] send the invitations", "3. [ ] order the cake"],
        )

    def test_undo_pending_item_is_harmless(self):
        r = self.run_todo("undo", "2")
        self.assertEqual(r.returncode, 0, r.stderr)
        self.assertEqual(self.content(), START)

    def test_undo_bad_number_like_done(self):
        for n in ("0", "5"):
            done = self.run_todo("done", n)
            undo = self.run_todo("undo", n)
            self.assertNotEqual(undo.returncode, 0)
            self.assertEqual(undo.returncode, done.returncode)
            self.assertEqual(undo.stderr, done.stderr)
            self.assertEqual(undo.stderr.strip(), f"todo: no item {n}")
        self.assertEqual(self.content(), START)

    def test_default_file(self):
        r = subprocess.run(
            [sys.executable, TODO, "undo", "4"],
            capture_output=True, text=True, timeout=20, cwd=self.dir.name,
        )
        # No todo.txt in this folder: there is no item 4.
        self.assertEqual(r.returncode, 1)
        self.assertEqual(r.stderr.strip(), "todo: no item 4")


if __name__ == "__main__":
    unittest.main()
