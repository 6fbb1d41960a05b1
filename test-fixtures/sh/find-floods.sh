#!/bin/sh
# Stands in for find(1) on PATH: well-formed lines without end — over 64 MiB of them, more
# than any tree runplan keeps would print.
printf 'd 4096\n'
yes 'f 1' | head -c 70000000
