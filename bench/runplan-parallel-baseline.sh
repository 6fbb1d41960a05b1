#!/bin/sh
# The baseline for bench/runplan-makespan.js: what `runplan run` does for N tasks of
# `sleep 1` with `expect = "none"` and `jobs = J`, done by hand in POSIX sh with J tasks at
# a time (`xargs -P J`): per task the git commands runplan runs for such a task (`worktree
# add`, `add -A`, `diff --cached --quiet`, `rev-list --parents -n 1 HEAD`, `worktree
# remove`; nothing to commit or integrate), the same attempt directories and mark files
# and their fsyncs, and one fdatasync'd journal append per event runplan journals for it
# (attempt-started, command-settled, integrated, checkpoint, attempt-closed), all tasks
# appending to one journal; `worktree add` and `remove` one at a time (flock), as runplan
# serializes them (git races on naming .git/worktrees/<name>). What it leaves out is everything runplan does in-process and
# its round-ref lookup (`for-each-ref`) per task.
#
# usage: runplan-parallel-baseline.sh REPO STATE_DIR N JOBS
#        runplan-parallel-baseline.sh --task I   (one task; run by xargs, environment set)
set -eu

# journal EVENT: append one line and fdatasync it, as journal.append() does.
journal() {
  echo "$1" >>"$journal"
  sync -d "$journal"
}

if [ "$1" = --task ]; then
  journal=$BENCH_JOURNAL
  task=$(printf 't%02d' "$2")
  attempt=$BENCH_WORK/$BENCH_RUN.$task.1
  evidence=$BENCH_RUNDIR/evidence/$task.1
  journal attempt-started
  mkdir -p -m 700 "$attempt" "$evidence"
  echo '{"template":"bench"}' >"$attempt/.harness-run-dir"
  sync "$attempt/.harness-run-dir" "$attempt" "$BENCH_WORK"
  flock "$BENCH_LOCK" git worktree add --detach --quiet --end-of-options "$attempt/tree" "$BENCH_HEAD"
  datadir=$attempt/.harness-run/$BENCH_RUN
  mkdir -p -m 700 "$datadir"
  echo '{"template":"bench"}' >"$datadir/.harness-run-dir"
  sync "$attempt" "$datadir/.harness-run-dir" "$datadir" "$attempt/.harness-run"
  : >"$evidence/transcript.txt"
  : >"$evidence/stderr.log"
  (cd "$attempt/tree" && exec sleep 1)
  journal command-settled
  git -C "$attempt/tree" add -A
  git -C "$attempt/tree" diff --cached --quiet
  git -C "$attempt/tree" rev-list --parents -n 1 --end-of-options 'HEAD^{commit}' -- >/dev/null
  journal integrated
  journal checkpoint
  flock "$BENCH_LOCK" git worktree remove --force --end-of-options "$attempt/tree"
  journal attempt-closed
  exit 0
fi

repo=$1
state=$2
n=$3
jobs=$4
run=20261129T075500Z-0000
slug=$state/bench
rundir=$slug/$run
journal=$rundir/journal.jsonl
ref=refs/heads/runplan/bench
zero=0000000000000000000000000000000000000000

cd "$repo"
git rev-parse --show-toplevel >/dev/null
git rev-parse --path-format=absolute --git-common-dir >/dev/null
head=$(git rev-parse --verify --quiet --end-of-options 'main^{commit}')
git var GIT_COMMITTER_IDENT >/dev/null
git var GIT_AUTHOR_IDENT >/dev/null
mkdir -p -m 700 "$rundir" "$slug/work"
: >"$rundir/plan.json"
sync "$rundir/plan.json"
journal run-started
git update-ref -m runplan --end-of-options "$ref" "$head" "$zero"
journal branch-updated

BENCH_JOURNAL=$journal BENCH_WORK=$slug/work BENCH_RUN=$run BENCH_RUNDIR=$rundir BENCH_HEAD=$head BENCH_LOCK=$slug/worktrees.lock
export BENCH_JOURNAL BENCH_WORK BENCH_RUN BENCH_RUNDIR BENCH_HEAD BENCH_LOCK
seq 1 "$n" | xargs -P "$jobs" -n 1 sh "$0" --task
journal run-complete
