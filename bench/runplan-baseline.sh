#!/bin/sh
# The baseline for bench/runplan-overhead.js: what `runplan run` does for N trivial tasks
# (`touch tNN.txt`, one after another), done by hand in POSIX sh — the same git commands in
# the same order: per task `worktree add`, `add -A`, `diff --cached --quiet`, `commit`, one
# `rev-list --parents -n 1 HEAD` (HEAD and its parents: the base is the result's parent, so
# the ancestry is proven without `merge-base --is-ancestor`, which runs only when it is not),
# `update-ref`, `worktree remove` — 7 git processes, as runplan — the same attempt
# directories and mark files, and the same number of fdatasync (6 journal appends per task:
# attempt-started, command-settled, integrated, checkpoint, branch-updated, attempt-closed;
# runplan journals no gates-done for a task without gates) and fsync (7 per task: mark files
# and their directories) calls, issued with sync(1) — counted with strace -f -y. What
# it leaves out is everything runplan does in-process besides: plan validation, digests,
# CRCs, settle's ownership scans, templates.
#
# usage: runplan-baseline.sh REPO STATE_DIR N
set -eu
repo=$1
state=$2
n=$3
run=20261129T075500Z-0000
slug=$state/bench
work=$slug/work
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
mkdir -p -m 700 "$rundir" "$work"
: >"$rundir/plan.json"
sync "$rundir/plan.json"

# journal EVENT: append one line and fdatasync it, as journal.append() does.
journal() {
  echo "$1" >>"$journal"
  sync -d "$journal"
}

journal run-started
git update-ref -m runplan --end-of-options "$ref" "$head" "$zero"
journal branch-updated

i=1
while [ "$i" -le "$n" ]; do
  task=$(printf 't%02d' "$i")
  attempt=$work/$run.$task.1
  evidence=$rundir/evidence/$task.1
  journal attempt-started
  mkdir -p -m 700 "$attempt" "$evidence"
  echo '{"template":"bench"}' >"$attempt/.harness-run-dir"
  sync "$attempt/.harness-run-dir" "$attempt" "$work"
  git worktree add --detach --quiet --end-of-options "$attempt/tree" "$head"
  datadir=$attempt/.harness-run/$run
  mkdir -p -m 700 "$datadir"
  echo '{"template":"bench"}' >"$datadir/.harness-run-dir"
  sync "$attempt" "$datadir/.harness-run-dir" "$datadir" "$attempt/.harness-run"
  : >"$evidence/transcript.txt"
  : >"$evidence/stderr.log"
  (cd "$attempt/tree" && exec touch "$task.txt")
  journal command-settled
  git -C "$attempt/tree" add -A
  if ! git -C "$attempt/tree" diff --cached --quiet; then
    git -C "$attempt/tree" commit --quiet -m "runplan: $task (run $run, attempt 1)"
  fi
  # HEAD and its parents in one rev-list; merge-base only when the base is not a parent.
  set -- $(git -C "$attempt/tree" rev-list --parents -n 1 --end-of-options 'HEAD^{commit}' --)
  result=$1
  shift
  case " $* " in
  *" $head "*) ;;
  *) git -C "$attempt/tree" merge-base --is-ancestor --end-of-options "$head" "$result" ;;
  esac
  journal integrated
  journal checkpoint
  git update-ref -m runplan --end-of-options "$ref" "$result" "$head"
  journal branch-updated
  git worktree remove --force --end-of-options "$attempt/tree"
  journal attempt-closed
  head=$result
  i=$((i + 1))
done
journal run-complete
