#!/bin/sh
# Put first on PATH as `git`: the first call whose first argument is $RUNPLAN_TEST_GIT_CTRL_C
# does what a terminal's Ctrl-C does to the job it runs in: SIGINT to the process group of
# its parent (runplan). Then it runs the real git ($RUNPLAN_TEST_REAL_GIT), if it is still
# alive: a git in that process group dies of the same signal. The directory
# $RUNPLAN_TEST_GIT_CTRL_C_MARK records that it happened (mkdir: once, even when two race).
if [ "${1-}" = "$RUNPLAN_TEST_GIT_CTRL_C" ] && mkdir "$RUNPLAN_TEST_GIT_CTRL_C_MARK" 2>/dev/null; then
  pgid=$(awk '{ print $5 }' "/proc/$PPID/stat")
  kill -s INT -- "-$pgid"
fi
exec "$RUNPLAN_TEST_REAL_GIT" "$@"
