#!/bin/sh
# A scratch file system with a journal for the benchmarks (root only): an ext4 image, loop-
# mounted at $RUNPLAN_BENCH_FS (default /mnt/runplan-bench). Run the suite on it with
#   sh scripts/bench-fs.sh up && TMPDIR=/mnt/runplan-bench npm run bench
#
# Why: on ext4 WITHOUT a journal (this project's VMs: `/` and `/tmp`), creating an inode
# scans the inodes deleted in the last minutes, so every bench round that deletes a repository
# slows the next one, whatever it runs (bench/RESULTS.md, "Why runplan-scaling measures the
# file system on this VM"). With a journal ext4 skips that scan. The image is a sparse file
# on the host disk; fsync on it still reaches the host disk.
#
# usage: bench-fs.sh up|down|status
set -eu
mnt=${RUNPLAN_BENCH_FS:-/mnt/runplan-bench}
img=${RUNPLAN_BENCH_FS_IMAGE:-/var/tmp/runplan-bench.ext4}
size=${RUNPLAN_BENCH_FS_SIZE:-4G}

mounted() { grep -q " $mnt ext4 " /proc/mounts; }

case "${1:-}" in
up)
  if mounted; then echo "bench-fs: $mnt is mounted already"; exit 0; fi
  [ "$(id -u)" = 0 ] || { echo "bench-fs: mounting needs root" >&2; exit 1; }
  if [ ! -f "$img" ]; then
    truncate -s "$size" "$img"
    mkfs.ext4 -q -F -O has_journal "$img"
  fi
  mkdir -p "$mnt"
  mount -o loop "$img" "$mnt"
  chmod 1777 "$mnt"
  echo "bench-fs: $mnt mounted (ext4 with a journal, image $img); run: TMPDIR=$mnt npm run bench"
  ;;
down)
  if mounted; then umount "$mnt"; fi
  rm -f "$img"
  echo "bench-fs: $mnt unmounted, image removed"
  ;;
status)
  if mounted; then df -T "$mnt" | tail -1; else echo "bench-fs: $mnt is not mounted"; exit 1; fi
  ;;
*)
  echo "usage: bench-fs.sh up|down|status" >&2
  exit 2
  ;;
esac
