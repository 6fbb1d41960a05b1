#!/bin/sh
# Closes stdin at once, says so, then lingers for $1 seconds (default 0) and exits 0.
exec 0<&-
echo closed
sleep "${1:-0}"
exit 0
