#!/bin/sh
# Prints its pid once, then sleeps $1 seconds (default 600) without further output.
echo "$$"
exec sleep "${1:-600}"
