#!/bin/sh
# A grandchild that escapes group + tag ownership both ways: it leaves the process group
# (setsid) and scrubs its environment (env -i), prints its pid, then sleeps with its
# output closed. The script itself exits 0 at once.
setsid env -i sh -c 'echo "$$"; exec sleep 300 >/dev/null 2>&1' </dev/null &
exit 0
