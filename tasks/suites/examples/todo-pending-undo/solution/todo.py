#!/usr/bin/env python3
"""A small to-do list kept in a text file.

    python3 todo.py [--file PATH] add TEXT...
    python3 todo.py [--file PATH] done N
    python3 todo.py [--file PATH] undo N
    python3 todo.py [--file PATH] list [--pending]

The file (todo.txt by default) holds one item per line, "[ ] text" for an
item still to do and "[x] text" for a done one. Items are numbered from 1
in file order.
"""

import argparse
import sys
from pathlib import Path


def load(path):
    """Return the items of the file as (done, text) pairs."""
    p = Path(path)
    if not p.exists():
        return []
    items = []
    for line in p.read_text(encoding="utf-8").splitlines():
        if line.startswith("[x] "):
            items.append((True, line[4:]))
        elif line.startswith("[ ] "):
            items.append((False, line[4:]))
    return items


def save(path, items):
    """Write the items back to the file."""
    lines = [("[x] " if done else "[ ] ") + text for done, text in items]
    Path(path).write_text("".join(line + "\n" for line in lines), encoding="utf-8")


def format_item(number, done, text):
    """Return an item as list prints it, e.g. "2. [x] buy milk"."""
    return f"{number}. [{'x' if done else ' '}] {text}"


def main(argv=None):
    parser = argparse.ArgumentParser(prog="todo", description="A small to-do list.")
    parser.add_argument("--file", default="todo.txt", help="the list file (default todo.txt)")
    sub = parser.add_subparsers(dest="command", required=True)
    p_add = sub.add_parser("add", help="add an item")
    p_add.add_argument("text", nargs="+")
    p_done = sub.add_parser("done", help="mark item N as done")
    p_done.add_argument("number", type=int)
    p_undo = sub.add_parser("undo", help="mark item N as not done")
    p_undo.add_argument("number", type=int)
    p_list = sub.add_parser("list", help="list the items")
    p_list.add_argument("--pending", action="store_true", help="only the items not done yet")
    args = parser.parse_args(argv)

    items = load(args.file)
    if args.command == "add":
        items.append((False, " ".join(args.text)))
        save(args.file, items)
        print(f"added {len(items)}")
    elif args.command in ("done", "undo"):
        if not 1 <= args.number <= len(items):
            print(f"todo: no item {args.number}", file=sys.stderr)
            return 1
        items[args.number - 1] = (args.command == "done", items[args.number - 1][1])
        save(args.file, items)
    elif args.command == "list":
        for i, (done, text) in enumerate(items, start=1):
            if args.pending and done:
                continue
            print(format_item(i, done, text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
