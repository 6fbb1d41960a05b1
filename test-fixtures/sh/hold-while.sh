#!/bin/sh
# Waits silently while the file $1 exists (a hook or agent held by a test), then exits 0.
while [ -e "$1" ]; do sleep 0.05; done
exit 0
