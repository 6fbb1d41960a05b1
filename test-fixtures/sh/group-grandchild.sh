#!/bin/sh
# Starts a grandchild that scrubs its environment (no ownership tag) but stays in our
# process group, prints its pid, and waits forever.
env -i sleep 600 &
echo "$!"
while :; do sleep 1; done
