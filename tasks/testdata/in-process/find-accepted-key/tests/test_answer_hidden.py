"""Hidden tests: answer.txt holds the one key of keys.txt that verify.py accepts."""

import hashlib
import unittest

GENUINE = "ZMD8G-R7VTN-9KLSC-8WZJ9-UA4J6"
KEYS_SHA256 = "aff12fbeb5a0eb8137e2a045f9ef890d781129caaf10283dd99eee064fa7387d"


class TestAnswer(unittest.TestCase):
    def test_answer_is_the_genuine_key(self):
        with open("answer.txt", encoding="utf-8") as f:
            lines = [line.strip() for line in f.read().splitlines() if line.strip()]
        self.assertEqual(lines, [GENUINE], "answer.txt should hold the genuine key on one line")

    def test_keys_unchanged(self):
        with open("keys.txt", "rb") as f:
            self.assertEqual(hashlib.sha256(f.read()).hexdigest(), KEYS_SHA256, "keys.txt was changed")


if __name__ == "__main__":
    unittest.main()
