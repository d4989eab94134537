"""Read the settings files of the deploy tool.

A settings file has one setting per line, ``key = value``. Lines starting
with ``#`` or ``;`` are comments, blank lines are ignored, and ``[name]``
starts a section: the keys after it are stored as ``name.key``.
"""


class ConfigError(ValueError):
    """A line that is not a setting, a comment or a section header."""


def parse(text):
    """Return the settings in text as a dict of dotted keys to strings."""
    settings = {}
    section = ""
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            section = line[1:-1].strip()
            continue
        key, sep, value = line.partition("=")
        if not sep:
            raise ConfigError(f"line {number}: expected key = value, got {raw!r}")
        key = key.strip()
        value = value.strip()
        if not key:
            raise ConfigError(f"line {number}: missing key before '='")
        if section:
            key = f"{section}.{key}"
        settings[key] = value
    return settings


def load(path):
    """Read and parse the settings file at path."""
    with open(path, encoding="utf-8") as f:
        return parse(f.read())
