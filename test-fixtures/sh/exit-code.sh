#!/bin/sh
# Exits with code $1.
exit "${1:-0}"
