#!/bin/sh
# Writes $1 lines to stdout and $1 lines to stderr, then exits with $2 (default 0).
i=0
while [ "$i" -lt "$1" ]; do
  echo "out $i"
  echo "err $i" >&2
  i=$((i + 1))
done
printf 'no newline at the end'
exit "${2:-0}"
