#!/bin/sh
# Floods stdout forever (yes) while the file $1 exists; otherwise prints one line and exits 0.
if [ -e "$1" ]; then exec yes "flood while $1 exists"; fi
echo "no flood: $1 is gone"
