#!/bin/sh
# test-inductor-edge.sh: edge-case graphs (0-d, zero-size, broadcast, permuted/strided views, int/bool/f64/f16/bf16,
# NaN-producing inputs, extern mm, fallbacks, aliasing outputs) compiled by fxwb compile --run against the interpreter;
# malformed graphs must give a located error and exit 1; a hostile source comment must not reach the generated C.
# wrap_int32_mul.py fails while the generated C multiplies signed ints without -fwrapv (gcc folds a*2147483647<0 to a<0).
# usage: test-inductor-edge.sh FXWB EDGE_DIR
set -u
fxwb=$1
dir=$2
cache=$(mktemp -d "${TMPDIR:-/tmp}/fxwb-edge.XXXXXX")
trap 'rm -rf "$cache"' EXIT
export FXWB_INDUCTOR_CACHE="$cache"
fail=0
n=0
for f in "$dir"/*.py; do
  n=$((n + 1))
  out=$("$fxwb" compile --run --repeat 1 "$f" 2>&1)
  rc=$?
  if [ $rc -ne 0 ] || ! printf '%s\n' "$out" | grep -q '^accuracy vs interpreter: pass$'; then
    echo "not ok $n $(basename "$f"): exit $rc"; printf '%s\n' "$out" | sed 's/^/# /'; fail=1
  else
    echo "ok $n $(basename "$f")"
  fi
done
for f in "$dir"/bad/*.py; do
  n=$((n + 1))
  out=$("$fxwb" compile "$f" 2>&1)
  rc=$?
  if [ $rc -ne 1 ] || ! printf '%s\n' "$out" | grep -q "$(basename "$f"):[0-9]*:[0-9]*: error:"; then
    echo "not ok $n bad/$(basename "$f"): exit $rc, no located error"; printf '%s\n' "$out" | sed 's/^/# /'; fail=1
  else
    echo "ok $n bad/$(basename "$f")"
  fi
done
n=$((n + 1))
src=$("$fxwb" compile --source "$dir/hostile-comment.py" 2>&1)
if printf '%s\n' "$src" | grep -q -e evil -e passwd; then
  echo "not ok $n hostile comment copied into the generated C"; fail=1
elif ! printf '%s\n' "$src" | grep -q 'cpp_fused_relu_0'; then
  echo "not ok $n no generated C for hostile-comment.py"; fail=1
else
  echo "ok $n hostile comment not in the generated C"
fi
echo "1..$n"
exit $fail
