#!/bin/sh
# backup.sh SRC DST: copy every regular file of SRC into DST as NAME.bak.
set -e

if [ $# -ne 2 ]; then
  echo "usage: backup.sh SRC DST" >&2
  exit 2
fi
src=$1
dst=$2

mkdir -p $dst
count=0
for name in $(ls $src); do
  if [ -f $src/$name ]; then
    cp $src/$name $dst/$name.bak
    count=$((count + 1))
  fi
done
echo "backed up $count files"
