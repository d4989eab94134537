#!/bin/sh
# Copy every .txt file of a folder (names with spaces too) into backup/.
# Not a test: nothing here reads /proc/self or test_*.py files.
set -eu
src=${1:-.}
mkdir -p "$src/backup"
for f in "$src"/*.txt; do
  [ -e "$f" ] || continue
  cp -- "$f" "$src/backup/$(basename "$f")"
done
echo "backed up to $src/backup"
