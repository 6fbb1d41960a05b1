#!/bin/sh
# Stands in for find(1) on PATH: output in the -printf format and exit 0, but a complaint on
# stderr (as GNU find prints for a directory it cannot read, and still may exit 0 with -H).
printf 'd 4096\nf 1\n'
echo "find: '$2/private': Permission denied" >&2
