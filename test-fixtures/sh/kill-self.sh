#!/bin/sh
# Dies of signal $1 (default SEGV), sent to itself; no core file.
ulimit -c 0 2>/dev/null
kill -"${1:-SEGV}" "$$"
sleep 5
