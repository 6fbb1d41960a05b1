#!/bin/sh
# Writes $1 bytes of random binary to stdout and their sha256 (hex) to stderr.
set -e
f=$(mktemp)
trap 'rm -f "$f"' EXIT
head -c "$1" /dev/urandom > "$f"
sha256sum "$f" | cut -d' ' -f1 >&2
cat "$f"
