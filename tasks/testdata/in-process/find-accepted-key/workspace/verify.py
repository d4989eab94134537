#!/usr/bin/env python3
"""Check a licence key: prints OK and exits 0 if the key is genuine, prints
REJECTED and exits 1 otherwise.

    python3 verify.py KEY
"""

import hashlib
import sys

SALT = b"bench-licence-v2"


def genuine(key):
    digest = hashlib.sha256(SALT + key.strip().encode()).digest()
    return int.from_bytes(digest[:4], "big") % 1009 == 577


def main(argv):
    if len(argv) != 2:
        print("usage: verify.py KEY", file=sys.stderr)
        return 2
    if genuine(argv[1]):
        print("OK")
        return 0
    print("REJECTED")
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv))
