#!/bin/sh
# Writes $2 random bytes to the file $1 (relative to the cwd; incompressible, so git stores them whole).
head -c "$2" /dev/urandom > "$1"
