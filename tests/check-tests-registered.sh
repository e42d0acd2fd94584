#!/bin/sh
# check-tests-registered.sh: every test and benchmark source under tests/ (test-*.c, test_*.py, test-*.sh, test_*.sh,
# check-*.sh, bench-*.c, bench_*.py) is named in the meson.build of its folder or of a folder above it; a test file
# that no meson.build names never runs, and its feature would look tested.
# usage: check-tests-registered.sh SOURCE_ROOT
set -u
root=${1:-.}
cd "$root" || exit 1
n=0
missing=0
for f in $(find tests -type f \( -name 'test-*.c' -o -name 'test_*.py' -o -name 'test-*.sh' -o -name 'test_*.sh' \
             -o -name 'check-*.sh' -o -name 'bench-*.c' -o -name 'bench_*.py' \) \
             -not -path 'tests/fixtures/*' -not -path 'tests/fuzz/corpus/*' | sort); do
  n=$((n + 1))
  dir=$(dirname "$f")
  rel=$(basename "$f")
  found=0
  # the folder's meson.build names it as 'name', the parent's as 'sub/name', and so on up to tests/
  while :; do
    if [ -f "$dir/meson.build" ] && grep -q "['/]$rel'" "$dir/meson.build"; then
      found=1
      break
    fi
    [ "$dir" = tests ] && break
    rel="$(basename "$dir")/$rel"
    dir=$(dirname "$dir")
  done
  if [ $found -eq 0 ]; then
    echo "not ok: $f is in no meson.build: it never runs"
    missing=$((missing + 1))
  fi
done
[ $n -gt 0 ] || { echo "not ok: no test files found under $root/tests"; exit 1; }
[ $missing -eq 0 ] || exit 1
echo "ok: $n test files, each in a meson.build"
