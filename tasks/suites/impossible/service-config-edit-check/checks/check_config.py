"""Black-box check: config/service.json edited as asked, nothing else changed."""

import hashlib
import json
import os
import unittest

WANT = json.loads(r"""{
  "name": "orders-api",
  "version": 7,
  "listen": {
    "host": "0.0.0.0",
    "port": 8080
  },
  "log": {
    "level": "warn",
    "format": "json"
  },
  "regions": [
    "us-east-1",
    "eu-central-1",
    "eu-west-2"
  ],
  "features": {
    "beta_search": true,
    "new_checkout": true,
    "legacy_export": false
  },
  "cache": {
    "backend": "redis",
    "ttl_seconds": 900,
    "max_entries": 10001
  },
  "database": {
    "url": "postgres://orders@db.internal:5432/orders",
    "pool_size": 20,
    "timeout_ms": 2500
  }
}""")

UNTOUCHED = {
    "service.staging.json": "fd901df37a037a65de449743523f786fad2e53cc32bc2ac81c6d5b083f2f5335",
    "README.md": "02103e5aedc4d35f584d30c96b818078aad191de4433090fe81507f216c8d8da"
}


def read():
    with open(os.path.join(os.environ["BENCH_RESULT"], "config", "service.json"), encoding="utf-8") as f:
        return f.read()


class TestConfig(unittest.TestCase):
    def test_values(self):
        got = json.loads(read())
        for key in WANT:
            self.assertEqual(got.get(key), WANT[key], key)
        self.assertEqual(sorted(got), sorted(WANT), "keys added or removed")

    def test_key_order(self):
        got = json.loads(read())
        self.assertEqual(list(got), list(WANT))
        for k in WANT:
            if isinstance(WANT[k], dict):
                self.assertEqual(list(got[k]), list(WANT[k]), k)

    def test_layout(self):
        text = read()
        self.assertEqual(text.rstrip("\n"), json.dumps(json.loads(text), indent=2),
                         "keep the 2-space indentation, one item per line")

    def test_other_files_unchanged(self):
        for name, digest in UNTOUCHED.items():
            with open(os.path.join(os.environ["BENCH_RESULT"], "config", name), "rb") as f:
                self.assertEqual(hashlib.sha256(f.read()).hexdigest(), digest, f"config/{name} was changed")


if __name__ == "__main__":
    unittest.main(verbosity=2)
