"""Hidden check: answer.txt lists the open issues that mention a timeout."""
import sys

WANT = ["31", "32", "35", "36", "40"]

try:
    with open("answer.txt", encoding="utf-8") as f:
        got = [line.strip() for line in f.read().strip().splitlines()]
except FileNotFoundError:
    sys.exit("answer.txt is missing")
if got != WANT:
    sys.exit(f"answer.txt has {got}, want {WANT}")
print("ok")
