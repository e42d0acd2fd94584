#!/bin/sh
# test-fxwb-compile-cuda.sh: `fxwb compile FILE -o device=cuda --source --debug-dir DIR` prints and writes the CUDA
# source, kernel table and wrapper; without a device it then reports "no CUDA device" and exits 4, with one it
# compiles (exit 0). A compile without --source or --debug-dir and no device exits 4 printing no source.
# usage: test-fxwb-compile-cuda.sh FXWB FIXTURES_DIR
set -u
fxwb=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
fail () { echo "FAIL: $*"; exit 1; }
graph="$fixtures/graphs/layernorm_gelu.aten.0.py"

"$fxwb" compile "$graph" --scale 64 -o device=cuda --source --debug-dir "$tmp/debug" > "$tmp/out.txt" 2> "$tmp/err.txt"
rc=$?
# Whether a device is here is read from /dev, not from fxwb: exit 4 ("no CUDA device") passes only without one.
if ls /dev/nvidia[0-9]* > /dev/null 2>&1; then
  test $rc -eq 0 || { cat "$tmp/out.txt" "$tmp/err.txt"; fail "a CUDA device is present but the compile exited $rc"; }
else
  test $rc -eq 4 || { cat "$tmp/out.txt" "$tmp/err.txt"; fail "no CUDA device here but the compile exited $rc"; }
fi
case $rc in
  0) echo "# a CUDA device is present: the compile succeeded" ;;
  4) grep -q "no CUDA device" "$tmp/err.txt" || fail "exit 4 without 'no CUDA device': $(cat "$tmp/err.txt")"
     grep -q "cannot be built or run here" "$tmp/err.txt" || fail "no note that the source was not built"
     grep -q "^  cuda_per_fused_gelu_native_layer_norm_0  *persistent_reduction" "$tmp/out.txt" \
       || fail "no kernel table: $(cat "$tmp/out.txt")"
     grep -q "^# ---- cuda_wrapper.txt" "$tmp/out.txt" || fail "no wrapper printed"
     grep -q "^launch cuda_per_fused_gelu_native_layer_norm_0 grid [0-9]* block [0-9]* args" "$tmp/out.txt" || fail "no launch line"
     test -s "$tmp/debug/cuda_kernels.txt" || fail "missing cuda_kernels.txt"
     test -s "$tmp/debug/cuda_wrapper.txt" || fail "missing cuda_wrapper.txt" ;;
  *) cat "$tmp/out.txt" "$tmp/err.txt"; fail "exit $rc" ;;
esac
grep -q '^extern "C" __global__ void __launch_bounds__' "$tmp/out.txt" || fail "no kernel source printed"
grep -q "^cuda_per_fused_gelu_native_layer_norm_0 (" "$tmp/out.txt" || fail "kernel not in the printed source"
grep -q "^cuda_per_fused_gelu_native_layer_norm_0 (" "$tmp/debug/output_code.cu" || fail "kernel not in output_code.cu"

if [ $rc -eq 4 ]; then
  # without --source/--debug-dir nothing is generated for show: the plain failure
  "$fxwb" compile "$graph" --scale 64 -o device=cuda > "$tmp/plain.txt" 2>&1
  prc=$?
  test $prc -eq 4 || fail "plain compile without a device: exit $prc"
  grep -q "no CUDA device" "$tmp/plain.txt" || fail "plain compile: message"
  ! grep -q "__global__" "$tmp/plain.txt" || fail "plain compile printed source"
  # an unwritable --debug-dir: exit 3 after the source
  : > "$tmp/file"
  "$fxwb" compile "$graph" --scale 64 -o device=cuda --debug-dir "$tmp/file/sub" > "$tmp/io.txt" 2>&1
  irc=$?
  test $irc -eq 3 || fail "unwritable debug dir: exit $irc: $(cat "$tmp/io.txt")"
fi
echo ok
