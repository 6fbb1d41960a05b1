#!/bin/sh
# Put first on PATH as `git`: appends its arguments (one line) to $RUNPLAN_TEST_GIT_LOG,
# then runs the real git ($RUNPLAN_TEST_REAL_GIT) with them.
printf '%s\n' "$*" >>"$RUNPLAN_TEST_GIT_LOG"
exec "$RUNPLAN_TEST_REAL_GIT" "$@"
