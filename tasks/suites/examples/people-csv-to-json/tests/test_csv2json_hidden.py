import json
import os
import subprocess
import sys
import tempfile
import unittest

PEOPLE = [
    {"name": "Ada Lovelace", "email": "ada@example.org", "age": 36, "tags": ["math", "poetry"]},
    {"name": "Alan Turing", "email": "alan.turing@example.org", "age": 41, "tags": ["math", "crypto"]},
    {"name": "Hopper, Grace", "email": "grace@navy.mil", "age": 85, "tags": []},
    {"name": "Linus Torvalds", "email": "linus@kernel.org", "age": None, "tags": ["kernel", "git"]},
]

HIDDEN = [
    {"name": "Knuth, Donald", "email": "don@stanford.edu", "age": 86, "tags": ["tex", "art", "programming"]},
    {"name": "Barbara Liskov", "email": "liskov@mit.edu", "age": None, "tags": []},
    {"name": "Margaret Hamilton", "email": "mh@nasa.gov", "age": 88, "tags": ["apollo"]},
    {"name": 'Ritchie, Dennis "dmr"', "email": "dmr@bell-labs.com", "age": 70, "tags": ["c", "unix"]},
]


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


class HiddenCsv2JsonTest(unittest.TestCase):
    def check(self, got, want):
        self.assertIsInstance(got, list)
        self.assertEqual(len(got), len(want), got)
        for g, w in zip(got, want):
            self.assertEqual(g, w)
            if w["age"] is not None:
                self.assertIs(type(g["age"]), int)

    def test_people_json_written(self):
        self.assertTrue(os.path.exists("people.json"), "people.json was not produced")
        self.check(load("people.json"), PEOPLE)

    def test_script_on_other_input(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "out.json")
            r = subprocess.run(
                [sys.executable, "csv2json.py", "hidden_people.csv", out],
                capture_output=True, text=True, timeout=20,
            )
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check(load(out), HIDDEN)

    def test_script_regenerates_people(self):
        with tempfile.TemporaryDirectory() as d:
            out = os.path.join(d, "people.json")
            r = subprocess.run(
                [sys.executable, "csv2json.py", "people.csv", out],
                capture_output=True, text=True, timeout=20,
            )
            self.assertEqual(r.returncode, 0, r.stderr)
            self.check(load(out), PEOPLE)


if __name__ == "__main__":
    unittest.main()
