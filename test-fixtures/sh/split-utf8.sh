#!/bin/sh
# Prints the euro sign (E2 82 AC) split across two writes with a pause in between.
printf '\342\202'
sleep 0.2
printf '\254\n'
