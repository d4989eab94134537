"""Read recipes written as plain text.

A recipe file looks like this:

    Title: Pancakes
    Serves: 4

    Ingredients:
    - 200 g flour.
    - 2 eggs.

    Steps:
    1. Whisk the eggs and the milk.
    2. Stir in the flour.

Headings end with a colon; ingredients are "- " items; steps are numbered.
"""


def _section(text, name):
    """Return the non-blank lines under the heading called name, stripped."""
    out = []
    inside = False
    for line in text.splitlines():
        stripped = line.strip()
        if stripped.endswith(":") and not stripped.startswith("-") and not stripped[:1].isdigit():
            inside = stripped[:-1].strip().lower() == name.lower()
            continue
        if inside and stripped:
            out.append(stripped)
    return out


def _field(text, name):
    prefix = name.lower() + ":"
    for line in text.splitlines():
        if line.lower().startswith(prefix):
            return line.split(":", 1)[1].strip()
    return None


def title(text):
    """Return the recipe's title, or "" if it has none."""
    return _field(text, "Title") or ""


def serves(text):
    """Return how many people the recipe serves, or None if it does not say."""
    value = _field(text, "Serves")
    return int(value) if value else None


def ingredients(text):
    """Return the ingredients in order, one string per "- " item, e.g. "2 eggs"."""
    items = []
    for line in _section(text, "Ingredients"):
        if line.startswith("- "):
            item = line[2:].strip()
            if item.endswith("."):
                item = item[:-1].rstrip()
            items.append(item)
    return items


def steps(text):
    """Return the steps in order, without their numbers."""
    out = []
    for line in _section(text, "Steps"):
        number, sep, rest = line.partition(". ")
        if sep and number.isdigit():
            out.append(rest.strip())
    return out


def parse(text):
    """Return the whole recipe as a dict."""
    return {
        "title": title(text),
        "serves": serves(text),
        "ingredients": ingredients(text),
        "steps": steps(text),
    }


if __name__ == "__main__":
    import json
    import sys

    with open(sys.argv[1], encoding="utf-8") as f:
        print(json.dumps(parse(f.read()), indent=2))
