#!/bin/sh
# Keeps forking for about a second: every 10 ms a TERM-ignoring sleeper in the group and
# one that left it (setsid); with $1 = scrubbed also one that left the group and scrubbed
# its environment (setsid env -i), which only a cgroup can find.
i=0
while [ "$i" -lt 100 ]; do
  sh -c 'trap "" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 &
  setsid sh -c 'trap "" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 &
  if [ "$1" = scrubbed ]; then setsid env -i sh -c 'trap "" TERM; exec sleep 300' </dev/null >/dev/null 2>&1 & fi
  sleep 0.01
  i=$((i + 1))
done
wait
