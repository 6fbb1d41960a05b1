#!/bin/sh
# Put first on PATH as `git`: a call whose first argument is $RUNPLAN_TEST_GIT_KILL (and
# whose second is not --abort) is killed with SIGKILL before git runs, as the host's OOM
# killer would kill it; every other call runs the real git ($RUNPLAN_TEST_REAL_GIT).
if [ "$1" = "$RUNPLAN_TEST_GIT_KILL" ] && [ "${2-}" != --abort ]; then
  kill -KILL $$
fi
exec "$RUNPLAN_TEST_REAL_GIT" "$@"
