#!/bin/sh
# The classic daemon: fork, setsid, fork again, ignore SIGTERM, detach stdio. The daemon
# prints its pid before detaching; the script itself exits 0 at once.
( setsid sh -c 'trap "" TERM; echo "$$"; exec sleep 600 </dev/null >/dev/null 2>&1' & )
exit 0
