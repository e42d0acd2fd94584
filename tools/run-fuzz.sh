#!/usr/bin/env bash
# run-fuzz.sh SECONDS [TARGET...]: builds the libFuzzer targets (clang, ASan+UBSan) in build-fuzz and runs each
# for SECONDS with its seed corpus from tests/fuzz/corpus/<name>/. Exits non-zero when a target crashes;
# the crashing input is kept in build-fuzz/artifacts/.
set -euo pipefail

seconds="${1:-20}"
shift || true
root="$(cd "$(dirname "$0")/.." && pwd)"
build="$root/build-fuzz"
cd "$root"

if [ ! -f "$build/build.ninja" ]; then
  # Coverage instrumentation for the whole engine, not just the target file, so the fuzzer sees into the parser.
  CC=clang meson setup "$build" -Dfuzzing=true -Db_sanitize=address,undefined -Db_lundef=false \
    -Dgtk=disabled -Dpython=disabled -Dc_args=-fsanitize=fuzzer-no-link >/dev/null
fi

if [ "$#" -gt 0 ]; then
  targets=("$@")
else
  mapfile -t targets < <(sed -n "s/^  '\([a-z0-9_-]*\)',$/\1/p" "$root/tests/fuzz/meson.build")
fi
ninja -C "$build" -j2 "${targets[@]/#/tests/fuzz/fuzz-}" >/dev/null

export ASAN_OPTIONS="detect_leaks=1:abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
failed=0
for t in "${targets[@]}"; do
  work="$build/corpus/$t"
  mkdir -p "$work" "$build/artifacts"
  args=(-max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=65536 -print_final_stats=1
        -artifact_prefix="$build/artifacts/$t-")
  if [ -f "$root/tests/fuzz/$t.dict" ]; then
    args+=(-dict="$root/tests/fuzz/$t.dict")
  fi
  echo "fuzz-$t: ${seconds}s"
  # New inputs go to the first directory (the build's), never into the source tree.
  if ! "$build/tests/fuzz/fuzz-$t" "${args[@]}" "$work" "$root/tests/fuzz/corpus/$t" 2>"$build/fuzz-$t.log"; then
    echo "fuzz-$t: FAILED (see $build/fuzz-$t.log and $build/artifacts/)"
    tail -40 "$build/fuzz-$t.log"
    failed=1
  else
    grep -E "stat::number_of_executed_units|Done" "$build/fuzz-$t.log" | tail -2 || true
  fi
done
exit "$failed"
