#!/bin/sh
# trace-live.sh: runs a PyTorch program with TORCH_TRACE set and `fxwb serve --follow` attached, so its compiles
# show up in the browser while it runs. Usage: tools/trace-live.sh [--port N] PROGRAM.py [ARGS...]
# The trace folder (a new temporary one, or $TRACE_DIR) is kept; `fxwb report $TRACE_DIR -o DIR` makes the static
# report afterwards. Stop the server with Ctrl-C once the program is done.
set -eu
port=0
if [ "${1:-}" = "--port" ]; then
  port=$2
  shift 2
fi
if [ $# -lt 1 ]; then
  echo "usage: $0 [--port N] PROGRAM.py [ARGS...]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")/.." && pwd)
fxwb=${FXWB:-}
if [ -z "$fxwb" ]; then
  if [ -x "$here/build/app/fxwb/fxwb" ]; then fxwb="$here/build/app/fxwb/fxwb"; else fxwb=fxwb; fi
fi
python=${PYTHON:-python3}
trace_dir=${TRACE_DIR:-$(mktemp -d "${TMPDIR:-/tmp}/torch-trace-XXXXXX")}
echo "TORCH_TRACE=$trace_dir" >&2

"$fxwb" serve --port "$port" --follow "$trace_dir" &
server=$!
trap 'kill "$server" 2>/dev/null || true' INT TERM

status=0
TORCH_TRACE="$trace_dir" "$python" "$@" || status=$?
echo "program exited with status $status; the server keeps running (Ctrl-C to stop it)" >&2
wait "$server" || true
exit "$status"
