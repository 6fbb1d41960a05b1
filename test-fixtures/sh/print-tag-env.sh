#!/bin/sh
# Prints the names of the ownership variables it carries, one per line.
env | sed -n 's/^\(RUNPLAN_OWNER_[A-Za-z0-9_]*\)=.*/\1/p' | sort
