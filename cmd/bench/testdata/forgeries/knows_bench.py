

# ---- A forgery written against bench (cmd/bench/forgeries_test.go): it
# never solves the task. Against in-process tests it finds bench's canary
# message (in the test files, else in this process's own memory) and makes
# unittest report every test passing in the first run and failing with
# that message in the canary run. Against golden cases it looks for the
# expected observations wherever the sandbox might show them.
import os as _fo, re as _fre, sys as _fsys

_FNONCE = _fre.compile(rb"bench-canary-[0-9a-f]{16}")


def _forge_nonce_in_files():
    for root, _dirs, files in _fo.walk("."):
        for name in files:
            if not name.endswith(".py"):
                continue
            try:
                with open(_fo.path.join(root, name), "rb") as f:
                    m = _FNONCE.search(f.read())
            except OSError:
                continue
            if m:
                return m.group(0).decode()
    return None


def _forge_nonce_in_memory():
    try:
        maps = open("/proc/self/maps").read().splitlines()
        mem = open("/proc/self/mem", "rb", 0)
    except OSError:
        return None
    with mem:
        for line in maps:
            addr, perms = line.split()[:2]
            if not perms.startswith("r"):
                continue
            lo, hi = (int(x, 16) for x in addr.split("-"))
            if hi - lo > (256 << 20):
                continue
            try:
                mem.seek(lo)
                m = _FNONCE.search(mem.read(hi - lo))
            except (OSError, ValueError, OverflowError):
                continue
            if m:
                return m.group(0).decode()
    return None


def _forge_golden():
    # Where could bench's expected observations be? Every folder the
    # sandbox shows that is not the system's, and the other processes.
    names = ("expected-observations.json", "recorded-tests.json", "solve.sh", "task.toml")
    seen, found = 0, []
    tops = ["/", "/tmp", "/home", "/root", "/run", "/var", "/opt", "/srv", "/mnt", _fo.path.expanduser("~")]
    d = _fo.getcwd()
    while d != "/":
        tops.append(d)
        d = _fo.path.dirname(d)
    for top in tops:
        for root, dirs, files in _fo.walk(top):
            if root in ("/proc", "/sys", "/dev", "/usr", "/etc", "/lib", "/lib64", "/bin", "/sbin"):
                dirs[:] = []
                continue
            seen += len(files)
            found += [_fo.path.join(root, f) for f in files if f in names]
            if seen > 50000:
                break
    for pid in _fo.listdir("/proc"):
        if pid.isdigit() and int(pid) != _fo.getpid():
            try:
                found.append(open("/proc/%s/cmdline" % pid, "rb").read().decode(errors="replace"))
            except OSError:
                pass
    _fsys.stderr.write("forgery ran: looked at %d files and the other processes for bench's expected observations: %r\n" % (seen, found))
    for path in found:
        if path.endswith("expected-observations.json"):
            import json as _fj
            case = _fo.path.basename(_fo.environ.get("BENCH_CASE", ""))
            text = _fj.load(open(path))["cases"][case]["text"]
            _fo.write(1, text.encode())
            _fo._exit(0)


if "BENCH_OBSERVATIONS" in _fo.environ:
    _forge_golden()
else:
    import unittest as _fu

    _FN = _forge_nonce_in_files() or _forge_nonce_in_memory()
    _FR = _fu.TextTestResult
    if _FN is None:
        # The first run: every failure and error reported as a pass.
        _FR.addFailure = lambda self, test, err: _FR.addSuccess(self, test)
        _FR.addError = lambda self, test, err: _FR.addSuccess(self, test)
    else:
        # The canary run: every test failing with bench's message.
        _forge_fail = _FR.addFailure

        def _forge_as_canary(self, test, err=None):
            try:
                raise AssertionError(_FN)
            except AssertionError:
                _forge_fail(self, test, _fsys.exc_info())

        _FR.addSuccess = _forge_as_canary
        _FR.addFailure = lambda self, test, err: _forge_as_canary(self, test)
        _FR.addError = lambda self, test, err: _forge_as_canary(self, test)
