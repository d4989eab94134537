#!/usr/bin/env python3
"""Count the words of the files a git repository tracks.

    python3 wordcount.py [ROOT]

Words listed in stopwords.json (beside this file) are not counted. Unlike
a test_*.py file, this one does not call os._exit(0) or fork: the words
"subprocess.run" and "/proc/self" in this docstring do nothing.
"""

import json
import multiprocessing
import os
import subprocess
import sys
from collections import Counter
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

# Its own data, read at import.
STOPWORDS = frozenset(json.loads(Path(__file__).with_name("stopwords.json").read_text(encoding="utf-8")))
WORKERS = multiprocessing.cpu_count()


@dataclass
class Totals:
    """Word counts over files."""

    words: Counter = field(default_factory=Counter)
    files: int = 0

    def add(self, counts):
        self.words.update(counts)
        self.files += 1


@lru_cache(maxsize=None)
def normalise(word):
    return word.strip(".,;:!?\"'()").lower()


def tracked_files(root):
    """The files git tracks under root."""
    out = subprocess.run(["git", "ls-files", "-z"], cwd=root, capture_output=True, text=True, check=True)
    return [os.path.join(root, p) for p in out.stdout.split("\0") if p]


def count_file(path):
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return Counter()
    return Counter(w for w in map(normalise, text.split()) if w and w not in STOPWORDS)


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    root = argv[0] if argv else "."
    try:
        files = tracked_files(root)
    except (OSError, subprocess.CalledProcessError) as e:
        print(f"wordcount: {e}", file=sys.stderr)
        return 2
    totals = Totals()
    with multiprocessing.Pool(WORKERS) as pool:
        for counts in pool.imap_unordered(count_file, files):
            totals.add(counts)
    for word, n in totals.words.most_common(20):
        print(f"{n:6d} {word}")
    if not totals.files:
        sys.exit(1)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
