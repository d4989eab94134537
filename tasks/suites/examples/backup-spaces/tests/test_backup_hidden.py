"""Hidden tests: backup.sh copes with spaces in file and folder names."""

import os
import subprocess
import tempfile
import unittest

SCRIPT = os.path.abspath("backup.sh")


def run(*args):
    return subprocess.run(["/bin/sh", SCRIPT, *args], capture_output=True, text=True, timeout=20)


class TestBackup(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.TemporaryDirectory()
        self.d = self.tmp.name

    def tearDown(self):
        self.tmp.cleanup()

    def write(self, path, body):
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "w") as f:
            f.write(body)

    def test_spaces_everywhere(self):
        src = os.path.join(self.d, "my documents")
        dst = os.path.join(self.d, "back ups", "today")
        files = {"a b.txt": "one\n", "two  spaces.txt": "two\n", "plain.txt": "three\n", " leading.txt": "four\n"}
        for name, body in files.items():
            self.write(os.path.join(src, name), body)
        self.write(os.path.join(src, "sub folder", "inner.txt"), "not copied\n")
        r = run(src, dst)
        self.assertEqual(r.returncode, 0, f"stderr: {r.stderr.strip()}")
        self.assertEqual(r.stdout.strip(), "backed up 4 files")
        got = sorted(os.listdir(dst)) if os.path.isdir(dst) else []
        self.assertEqual(got, sorted(n + ".bak" for n in files))
        for name, body in files.items():
            with open(os.path.join(dst, name + ".bak")) as f:
                self.assertEqual(f.read(), body, f"{name}.bak has the wrong content")

    def test_empty_source(self):
        empty = os.path.join(self.d, "empty dir")
        os.makedirs(empty)
        r = run(empty, os.path.join(self.d, "out 2"))
        self.assertEqual(r.returncode, 0, f"stderr: {r.stderr.strip()}")
        self.assertEqual(r.stdout.strip(), "backed up 0 files")

    def test_plain_names(self):
        src = os.path.join(self.d, "src")
        self.write(os.path.join(src, "x.conf"), "x\n")
        r = run(src, os.path.join(self.d, "dst"))
        self.assertEqual(r.stdout.strip(), "backed up 1 files")
        self.assertTrue(os.path.exists(os.path.join(self.d, "dst", "x.conf.bak")))

    def test_wrong_usage(self):
        r = run(os.path.join(self.d, "src"))
        self.assertEqual(r.returncode, 2)


if __name__ == "__main__":
    unittest.main()
