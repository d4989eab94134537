"""Hidden check: backup.sh copes with spaces in file and folder names."""

import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.abspath("backup.sh")
failures = []


def run(src, dst):
    return subprocess.run(["/bin/sh", SCRIPT, src, dst], capture_output=True, text=True, timeout=20)


def check(cond, msg):
    if not cond:
        failures.append(msg)


with tempfile.TemporaryDirectory() as d:
    # Spaces everywhere.
    src = os.path.join(d, "my documents")
    dst = os.path.join(d, "back ups", "today")
    os.makedirs(os.path.join(src, "sub folder"))
    files = {
        "a b.txt": "one\n",
        "two  spaces.txt": "two\n",
        "plain.txt": "three\n",
        " leading.txt": "four\n",
    }
    for name, body in files.items():
        with open(os.path.join(src, name), "w") as f:
            f.write(body)
    with open(os.path.join(src, "sub folder", "inner.txt"), "w") as f:
        f.write("not copied\n")
    r = run(src, dst)
    check(r.returncode == 0, f"exit status {r.returncode}, stderr: {r.stderr.strip()}")
    check(r.stdout.strip() == "backed up 4 files", f"stdout {r.stdout.strip()!r}, want 'backed up 4 files'")
    want = sorted(n + ".bak" for n in files)
    got = sorted(os.listdir(dst)) if os.path.isdir(dst) else []
    check(got == want, f"DST holds {got}, want {want}")
    for name, body in files.items():
        p = os.path.join(dst, name + ".bak")
        if os.path.exists(p):
            with open(p) as f:
                check(f.read() == body, f"{name}.bak has the wrong content")

    # An empty source folder.
    empty = os.path.join(d, "empty dir")
    os.makedirs(empty)
    r = run(empty, os.path.join(d, "out 2"))
    check(r.returncode == 0, f"empty SRC: exit status {r.returncode}, stderr: {r.stderr.strip()}")
    check(r.stdout.strip() == "backed up 0 files", f"empty SRC: stdout {r.stdout.strip()!r}")

    # Plain names still work.
    plain_src = os.path.join(d, "src")
    os.makedirs(plain_src)
    with open(os.path.join(plain_src, "x.conf"), "w") as f:
        f.write("x\n")
    r = run(plain_src, os.path.join(d, "dst"))
    check(r.stdout.strip() == "backed up 1 files", f"plain names: stdout {r.stdout.strip()!r}")
    check(os.path.exists(os.path.join(d, "dst", "x.conf.bak")), "plain names: x.conf.bak missing")

    # Wrong usage.
    r = subprocess.run(["/bin/sh", SCRIPT, src], capture_output=True, text=True, timeout=20)
    check(r.returncode == 2, f"one argument: exit status {r.returncode}, want 2")

if failures:
    print("\n".join(failures))
    sys.exit(1)
print("ok")
