#!/bin/sh
# Prints its argument count, then each argument, every one followed by a NUL byte.
printf '%s\0' "$#"
for arg in "$@"; do printf '%s\0' "$arg"; done
