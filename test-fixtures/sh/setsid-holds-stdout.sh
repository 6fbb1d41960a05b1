#!/bin/sh
# Starts a grandchild in a new session (it leaves our process group) that keeps stdout
# and stderr open, prints the grandchild's pid, and exits 0 at once.
# With "ignore-term" the grandchild also ignores SIGTERM.
if [ "$1" = ignore-term ]; then trap '' TERM; fi
setsid sleep 600 &
echo "$!"
exit 0
