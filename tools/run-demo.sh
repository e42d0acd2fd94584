#!/usr/bin/env bash
# run-demo.sh [BUILD_DIR]: the main job. Opens the app on the bundled demo where there is a display;
# otherwise the headless demo: imports the bundled PyTorch traces into a workspace and prints what fxwb sees.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
fxwb="$build/app/fxwb/fxwb"
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ -x "$build/app/workbench/fx-workbench" ]; then
  exec "$build/app/workbench/fx-workbench"
fi

workspace=$(mktemp -d)/demo.fxwb
trap 'rm -rf "$(dirname "$workspace")"' EXIT
echo "== fxwb import (real torch.compile traces from PyTorch 2.11)"
"$fxwb" import --quiet tests/fixtures/traces/toy_graph_break-cuda/torch_trace \
  tests/fixtures/traces/mlp_module-cuda/torch_trace -o "$workspace" 2>/dev/null
echo
echo "== fxwb ls"
"$fxwb" ls "$workspace"
echo
echo "== fxwb explain"
"$fxwb" explain "$workspace" | head -40
echo
echo "== fxwb print (a bundled post-AOT graph, print_tabular)"
"$fxwb" print data/samples/mlp_block.py --tabular
