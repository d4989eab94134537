"""Black-box check of people.json, the file the agent had to leave.

Reads $BENCH_RESULT/people.json as data (run with python3 -I -S: nothing of
the agent's is imported or run) and checks it is people.csv converted by
the instruction's rules.
"""

import json
import os
import unittest

PEOPLE = [
    {"name": "Ada Lovelace", "email": "ada@example.org", "age": 36, "tags": ["math", "poetry"]},
    {"name": "Alan Turing", "email": "alan.turing@example.org", "age": 41, "tags": ["math", "crypto"]},
    {"name": "Hopper, Grace", "email": "grace@navy.mil", "age": 85, "tags": []},
    {"name": "Linus Torvalds", "email": "linus@kernel.org", "age": None, "tags": ["kernel", "git"]},
]

PATH = os.path.join(os.environ["BENCH_RESULT"], "people.json")


class PeopleJsonCheck(unittest.TestCase):
    def load(self):
        self.assertTrue(os.path.isfile(PATH), "people.json was not produced")
        with open(PATH, encoding="utf-8") as f:
            return json.load(f)

    def test_people_json_written(self):
        got = self.load()
        self.assertIsInstance(got, list)
        self.assertEqual(got, PEOPLE)

    def test_ages_are_integers(self):
        for person in self.load():
            if person.get("age") is not None:
                self.assertIs(type(person["age"]), int, person)


if __name__ == "__main__":
    unittest.main(verbosity=2)
