"""Hidden check: contacts.txt sorted like a phone book, nothing else changed.

The subtleties: the header comment stays on top, the order ignores case
("ada lovelace" files under L), people sharing a last name go by first name,
the lines themselves are not rewritten, and the file still ends with a
newline.
"""

import sys

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
Alan Turing: 555-0199
"""

with open("contacts.txt", encoding="utf-8", newline="") as f:
    got = f.read()
if got == WANT:
    print("ok")
    sys.exit(0)
if got.rstrip("\n") == WANT.rstrip("\n"):
    sys.exit("contacts.txt: right order, but the end of the file changed (it ended with exactly one newline)")
got_lines, want_lines = got.splitlines(), WANT.splitlines()
if sorted(got_lines) != sorted(want_lines):
    sys.exit("contacts.txt: lines were added, removed or rewritten")
for i, (g, w) in enumerate(zip(got_lines, want_lines), 1):
    if g != w:
        sys.exit(f"contacts.txt line {i}: got {g!r}, want {w!r}")
sys.exit("contacts.txt differs")
