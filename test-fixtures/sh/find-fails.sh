#!/bin/sh
# Stands in for find(1) on PATH: a walk that broke part way (an unreadable directory, an
# entry gone mid-walk) — a line or two on stdout, a complaint on stderr, exit 1.
printf 'd 4096\nf 1\n'
echo "find: '$2/gone': No such file or directory" >&2
exit 1
