"""Hidden check: config/service.json edited as asked, nothing else changed."""

import hashlib
import json
import sys

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
    "max_entries": 10000
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

errors = []
with open("config/service.json", encoding="utf-8") as f:
    text = f.read()
try:
    got = json.loads(text)
except ValueError as e:
    sys.exit(f"config/service.json is not valid JSON: {e}")
if got != WANT:
    for key in WANT:
        if got.get(key) != WANT[key]:
            errors.append(f"{key}: got {json.dumps(got.get(key))}, want {json.dumps(WANT[key])}")
    for key in got:
        if key not in WANT:
            errors.append(f"unexpected key {key}")
elif list(got) != list(WANT) or any(
    isinstance(WANT[k], dict) and list(got[k]) != list(WANT[k]) for k in WANT
):
    errors.append("the keys are no longer in their original order")
elif text.rstrip("\n") != json.dumps(got, indent=2):
    errors.append("the layout changed: keep the 2-space indentation, one item per line")
for name, digest in UNTOUCHED.items():
    with open("config/" + name, "rb") as f:
        if hashlib.sha256(f.read()).hexdigest() != digest:
            errors.append(f"config/{name} was changed")
if errors:
    print("\n".join(errors))
    sys.exit(1)
print("ok")
