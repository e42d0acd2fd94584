#!/bin/sh
# test-fxwb-compile.sh: `fxwb compile FILE --backend inductor --debug-dir DIR --run` writes the debug artifacts, lists
# the fused kernel and matches the interpreter; bad input gives a located error and exit 1; a wrong backend exit 4.
# usage: test-fxwb-compile.sh FXWB FIXTURES_DIR
set -u
fxwb=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
fail () { echo "FAIL: $*"; exit 1; }

"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --backend inductor --scale 64 \
  --debug-dir "$tmp/debug" --run --repeat 2 -o trace.graph_diagram=True > "$tmp/out.txt" 2>&1 || { cat "$tmp/out.txt"; fail "compile exit $?"; }
grep -q "cpp_fused__softmax_0" "$tmp/out.txt" || fail "no softmax kernel listed"
grep -q "accuracy vs interpreter: pass" "$tmp/out.txt" || fail "no accuracy pass"
for f in fx_graph_readable.py fx_graph_transformed.py ir_pre_fusion.txt ir_post_fusion.txt output_code.c graph_diagram.dot; do
  test -s "$tmp/debug/$f" || fail "missing artifact $f"
done
grep -q "^void cpp_fused__softmax_0" "$tmp/debug/output_code.c" || fail "kernel not in output_code.c"
grep -q "FusedSchedulerNode" "$tmp/debug/ir_post_fusion.txt" || fail "post-fusion dump has no fused node"
grep -q "SchedulerNode(ComputedBuffer)" "$tmp/debug/ir_pre_fusion.txt" || fail "pre-fusion dump"

# gcc tunes Intel's AVX-512 parts (here Sapphire Rapids, compiled for, not run) for 256-bit vectors; the softmax
# kernel must still compute its exp 16 lanes at a time: inlined (no call at all), and where the kernel also calls
# sin and cos, through the 16-lane variant of fx_expf, never the scalar function once per element
if [ "$(uname -m)" = x86_64 ] && command -v objdump > /dev/null; then
  FXWB_INDUCTOR_CACHE="$tmp/avx512" FXWB_INDUCTOR_MARCH=sapphirerapids "$fxwb" compile \
    "$fixtures/graphs/softmax_rows.core_aten.0.py" --scale 64 > "$tmp/avx512.txt" 2>&1 || fail "avx512 compile: exit $?"
  so=$(find "$tmp/avx512" -name 'k*.so' | head -n 1)
  test -n "$so" || fail "no kernel library in $tmp/avx512"
  objdump -d "$so" > "$tmp/avx512.s" || fail "objdump $so"
  ! grep -q 'call.*fx_expf' "$tmp/avx512.s" || fail "softmax calls fx_expf instead of inlining it"
  grep -q 'vrndscaleps.*%zmm' "$tmp/avx512.s" || fail "softmax's exp is not computed 16 lanes at a time"
  cat > "$tmp/sinexp.py" <<'PY'
class M(torch.nn.Module):
    def forward(self, x: "f32[64, 256][256, 1]cpu"):
        sin = torch.ops.aten.sin.default(x)
        cos = torch.ops.aten.cos.default(x)
        add = torch.ops.aten.add.Tensor(sin, cos)
        exp = torch.ops.aten.exp.default(add)
        return (exp,)
PY
  FXWB_INDUCTOR_CACHE="$tmp/sinexp" FXWB_INDUCTOR_MARCH=sapphirerapids "$fxwb" compile "$tmp/sinexp.py" \
    > "$tmp/sinexp.txt" 2>&1 || fail "sin/exp compile: exit $?"
  so=$(find "$tmp/sinexp" -name 'k*.so' | head -n 1)
  objdump -d "$so" > "$tmp/sinexp.s" || fail "objdump $so"
  grep -q 'call.*<_ZGVeN16v_fx_expf>' "$tmp/sinexp.s" || fail "sin/cos/exp kernel does not call the 16-lane exp"
fi

# a division by a power of two is the exact multiply by its reciprocal; by 3 it stays a division
cat > "$tmp/div.py" <<'PY'
class M(torch.nn.Module):
    def forward(self, x: "f32[64, 96][96, 1]cpu"):
        a = torch.ops.aten.div.Tensor(x, 8.0)
        b = torch.ops.aten.div.Tensor(a, -0.25)
        c = torch.ops.aten.div.Tensor(b, 3.0)
        return (c,)
PY
"$fxwb" compile "$tmp/div.py" --source --run --repeat 1 > "$tmp/div.txt" 2>&1 || fail "div compile: exit $?"
grep -q "accuracy vs interpreter: pass" "$tmp/div.txt" || fail "div accuracy: $(cat "$tmp/div.txt")"
grep -q "\* ((float) 0.125)" "$tmp/div.txt" || fail "x / 8 is not x * 0.125"
grep -q "\* ((float) -4)" "$tmp/div.txt" || fail "x / -0.25 is not x * -4"
grep -q "/ ((float) 3)" "$tmp/div.txt" || fail "x / 3 is not a division"

printf 'def forward(self, x):\n    y = torch.ops.aten.relu.default(x\n' > "$tmp/bad.py"
"$fxwb" compile "$tmp/bad.py" > "$tmp/bad.txt" 2>&1
rc=$?
test $rc -eq 1 || fail "malformed file: exit $rc"
grep -q "bad.py:" "$tmp/bad.txt" || fail "error is not located: $(cat "$tmp/bad.txt")"

"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --backend aot_eager --scale 64 --run --repeat 1 > "$tmp/aot.txt" 2>&1 \
  || fail "aot_eager compile: exit $?"
grep -q "with aot_eager" "$tmp/aot.txt" || fail "aot_eager not named"
grep -q "accuracy vs interpreter: pass" "$tmp/aot.txt" || fail "aot_eager accuracy"
# max_autotune tries four variants; the max-autotune modes add coordinate descent, which tries more
"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --scale 64 -o max_autotune=True > "$tmp/mat.txt" 2>&1 \
  || fail "max_autotune: exit $?"
test "$(grep -c '^max_autotune: threads=' "$tmp/mat.txt")" -eq 4 || fail "max_autotune variants: $(cat "$tmp/mat.txt")"
! grep -q "coordinate_descent_tuning" "$tmp/mat.txt" || fail "coordinate descent without the option"
"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --scale 64 -m max-autotune-no-cudagraphs > "$tmp/cd.txt" 2>&1 \
  || fail "max-autotune-no-cudagraphs: exit $?"
n=$(grep -c '^max_autotune: threads=' "$tmp/cd.txt")
test "$n" -gt 4 || fail "coordinate descent tried no more variants ($n): $(cat "$tmp/cd.txt")"
grep -q "^coordinate_descent_tuning: $n variants tried" "$tmp/cd.txt" || fail "coordinate descent note"
grep -q "^max_autotune: kept threads=" "$tmp/cd.txt" || fail "no kept variant"
# the candidate table (autotune.txt): one row per variant tried, fastest first, the kept one marked
test "$(grep -c '^  threads=.* ms ' "$tmp/cd.txt")" -eq "$n" || fail "autotune table rows: $(cat "$tmp/cd.txt")"
grep -A1 "^AUTOTUNE cpp program" "$tmp/cd.txt" | tail -1 | grep -q "100.0% (kept)" || fail "autotune table winner first"
# an option that did nothing is gone: asking for it is an error that names the known ones
"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --scale 64 -o fallback_random=True > "$tmp/fr.txt" 2>&1
test $? -eq 1 || fail "fallback_random accepted"
grep -q "Unexpected optimization option fallback_random" "$tmp/fr.txt" || fail "fallback_random message"

"$fxwb" compile "$fixtures/graphs/softmax_rows.core_aten.0.py" --backend nope > "$tmp/nope.txt" 2>&1
rc=$?
test $rc -eq 2 || fail "unknown backend: exit $rc"
grep -q "Invalid backend: 'nope'" "$tmp/nope.txt" || fail "unknown backend message"
"$fxwb" compile > /dev/null 2>&1
rc=$?
test $rc -eq 2 || fail "no FILE: exit $rc"
echo ok
