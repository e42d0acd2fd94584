#!/usr/bin/env bash
# test-all.sh: installs what is needed, builds (normal and ASan+UBSan), runs every test and a short fuzz pass,
# and ends with one line "N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."

./tools/install-deps.sh || { echo "install-deps failed"; echo "0 passed, 1 failed"; exit 1; }

passed=0
failed=0
status=0

# Reads meson's test log (one JSON object per test) and adds its results to the totals.
count_results () {
  local log="$1/meson-logs/testlog.json"
  [ -f "$log" ] || return
  local p f
  p=$(grep -c '"result": "OK"' "$log" || true)
  f=$(grep -Ec '"result": "(FAIL|ERROR|TIMEOUT|UNEXPECTEDPASS)"' "$log" || true)
  passed=$((passed + p))
  failed=$((failed + f))
}

run_suite () {
  local dir="$1"; shift
  echo "=== build $dir ($*)"
  if [ ! -d "$dir" ]; then
    meson setup "$dir" "$@" || { failed=$((failed + 1)); status=1; return; }
  fi
  if ! ninja -C "$dir" -j"$(nproc)"; then
    echo "build of $dir failed"
    failed=$((failed + 1)); status=1; return
  fi
  meson test -C "$dir" --print-errorlogs --num-processes "$(nproc)" || status=1
  count_results "$dir"
}

run_suite build-ci
# The sanitizer build runs the same tests; leak checks stay on for the engine.
run_suite build-asan -Db_sanitize=address,undefined -Db_lundef=false

if [ -x tools/run-fuzz.sh ]; then
  echo "=== fuzz"
  if tools/run-fuzz.sh "${FX_FUZZ_SECONDS:-15}"; then
    passed=$((passed + 1))
  else
    failed=$((failed + 1)); status=1
  fi
fi

echo "${passed} passed, ${failed} failed"
exit $status
