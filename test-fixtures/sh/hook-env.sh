#!/bin/sh
# Prints every HARNESS_* variable it was given, one NAME=VALUE per line, sorted.
env | grep '^HARNESS_' | sort
exit 0
