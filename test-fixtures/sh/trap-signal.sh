#!/bin/sh
# Prints its pid; on signal $1 (a name: USR2, QUIT, ...) prints "got $1" and exits 3.
trap 'echo "got $1"; exit 3' "$1"
echo "$$"
while :; do sleep 1 & wait $!; done
