#!/bin/sh
# Leaves a background sleeper holding stdout, records its pid in $1, and exits 0 at once.
sleep 60 &
echo $! > "$1.tmp" && mv "$1.tmp" "$1"
echo started
