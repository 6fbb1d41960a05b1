#!/bin/sh
# Runs "$@" in cgroup $1 (a cgroup v2 directory) inside a new cgroup namespace rooted there
# (unshare, as root): /proc/self/cgroup then says 0::/ while the cgroup2 mount, made
# outside the namespace, shows its root as /.. in /proc/self/mountinfo.
dir=$1
shift
echo "$$" >"$dir/cgroup.procs"
exec unshare --cgroup "$@"
