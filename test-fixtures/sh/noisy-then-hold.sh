#!/bin/sh
# A claude-stream-json agent whose command-settled record is over 4 KiB (21 lines that are
# not JSON: 20 warnings quoting them; a result of 2000 characters), printed at once; then it
# waits silently while the file $1 exists, and exits 0.
zeros=$(printf '%0100d' 0)
i=0
while [ "$i" -lt 21 ]; do
  echo "not json $i $zeros"
  i=$((i + 1))
done
printf '{"type":"result","subtype":"success","is_error":false,"result":"%s","session_id":"noisy"}\n' "$(printf '%02000d' 0)"
while [ -e "$1" ]; do sleep 0.05; done
exit 0
