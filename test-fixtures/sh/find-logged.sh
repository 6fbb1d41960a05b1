#!/bin/sh
# Stands in for find(1) on PATH: logs its arguments to $FIND_LOG, runs the real find
# ($FIND_REAL) with them, then reports one more file of $FIND_EXTRA bytes — so a test can
# tell a count that came from find from one that came from the in-process walk.
printf '%s\n' "$*" >>"$FIND_LOG"
"$FIND_REAL" "$@" || exit
printf 'f %s\n' "${FIND_EXTRA:-0}"
