#!/bin/sh
# backup.sh SRC DST: copy every regular file of SRC into DST as NAME.bak.
set -e

if [ $# -ne 2 ]; then
  echo "usage: backup.sh SRC DST" >&2
  exit 2
fi
src=$1
dst=$2

mkdir -p "$dst"
count=0
for path in "$src"/*; do
  if [ -f "$path" ]; then
    name=${path##*/}
    cp "$path" "$dst/$name.bak"
    count=$((count + 1))
  fi
done
echo "backed up $count files"
