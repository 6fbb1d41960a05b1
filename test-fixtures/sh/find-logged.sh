#!/bin/sh
# Stands in for find(1) on PATH: logs its arguments to $FIND_LOG, then runs the real find
# ($FIND_REAL) with them.
printf '%s\n' "$*" >>"$FIND_LOG"
exec "$FIND_REAL" "$@"
