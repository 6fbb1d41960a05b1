#!/bin/sh
# Never reads stdin and never exits on its own.
echo started
while :; do sleep 1; done
