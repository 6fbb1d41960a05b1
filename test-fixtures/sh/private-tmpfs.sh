#!/bin/sh
# Runs "$@" (after $1) with an empty tmpfs over directory $1 that only it and its children
# see: a private mount namespace (unshare, as root). Every process outside it, slurmd and
# the jobs it starts included, still sees $1 as it was: a directory the nodes do not share.
if [ "${PRIVATE_TMPFS_INSIDE:-}" != 1 ]; then
  PRIVATE_TMPFS_INSIDE=1 exec unshare --mount --propagation private -- "$0" "$@"
fi
unset PRIVATE_TMPFS_INSIDE
dir=$1
shift
mount -t tmpfs private-tmpfs "$dir" || exit 125
exec "$@"
