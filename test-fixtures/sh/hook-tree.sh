#!/bin/sh
# Starts a grandchild that ignores TERM and records its pid in $1, then waits forever.
# The hook itself also ignores TERM, so only a KILL of the whole tree ends it.
sh -c 'trap "" TERM; echo $$ > "$1.tmp"; mv "$1.tmp" "$1"; while :; do sleep 1; done' grandchild "$1" &
trap '' TERM
while :; do sleep 1; done
