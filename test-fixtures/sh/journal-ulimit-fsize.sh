#!/bin/sh
# Runs a command with a file size limit: journal-ulimit-fsize.sh BLOCKS CMD [ARGS...]
# BLOCKS is in 512-byte units (POSIX ulimit -f). Writes past it fail with EFBIG.
blocks=$1
shift
ulimit -f "$blocks" || exit 125
exec "$@"
