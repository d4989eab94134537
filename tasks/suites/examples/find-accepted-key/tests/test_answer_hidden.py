"""Hidden check: answer.txt holds the one key of keys.txt that verify.py accepts."""

import hashlib
import os
import sys

GENUINE = "ZMD8G-R7VTN-9KLSC-8WZJ9-UA4J6"
KEYS_SHA256 = "aff12fbeb5a0eb8137e2a045f9ef890d781129caaf10283dd99eee064fa7387d"

if not os.path.exists("answer.txt"):
    sys.exit("answer.txt is missing")
with open("answer.txt", encoding="utf-8") as f:
    lines = [line.strip() for line in f.read().splitlines() if line.strip()]
if len(lines) != 1:
    sys.exit(f"answer.txt should hold one line, it holds {len(lines)}")
if lines[0] != GENUINE:
    sys.exit(f"answer.txt holds {lines[0]!r}: not the genuine key")
with open("keys.txt", "rb") as f:
    if hashlib.sha256(f.read()).hexdigest() != KEYS_SHA256:
        sys.exit("keys.txt was changed")
print("ok")
