#!/bin/sh
# Stands in for a find(1) that is not GNU's: exit 0, but output that is not "TYPE SIZE" lines
# (here a find that ignored -printf and printed the paths it found).
echo "$2"
echo "$2/some-file"
