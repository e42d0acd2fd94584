#!/usr/bin/env bash
# run-demo.sh: the main job. Opens the app on the bundled demo where there is a display; otherwise prints the bundled graph.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/app/workbench/fx-workbench" ]; then
  exec "$build/app/workbench/fx-workbench"
fi
"$build/app/fxwb/fxwb" print data/samples/mlp_block.py --tabular
"$build/app/fxwb/fxwb" print data/samples/mlp_block.py --readable --stride --device
