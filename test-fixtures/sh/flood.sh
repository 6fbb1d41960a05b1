#!/bin/sh
# Writes lines to stdout as fast as it can, forever.
exec yes "${1:-flood}"
