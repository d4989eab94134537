#!/bin/sh
# Reference solution: ask verify.py about every key.
set -e
while read -r key; do
  if python3 verify.py "$key" >/dev/null; then
    echo "$key" > answer.txt
  fi
done < keys.txt
test -s answer.txt
