#!/bin/sh
# Ignores SIGTERM (so does its sleep: an ignored signal stays ignored across exec),
# prints its pid, and never exits on its own: only KILL ends it.
trap '' TERM
echo "$$"
while :; do sleep 1; done
