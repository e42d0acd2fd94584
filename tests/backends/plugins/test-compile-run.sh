#!/bin/sh
# test-compile-run.sh: `fxwb compile --run` checks every output with same() against the interpreter and its fp64 run
# (the path of `fxwb run`): a backend whose result is off (the delegate plugin's inject_error) fails with exit 1 and
# the RMSE report, a tiny error within same()'s tolerance passes, and a multi-output graph is checked output by
# output.
# usage: test-compile-run.sh FXWB FIXTURES_DIR PLUGIN_DIR
set -u
fxwb=$1
fixtures=$2
export FXWB_BACKEND_PATH=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
export XDG_DATA_HOME="$tmp/data"
fail () { echo "FAIL: $*"; exit 1; }
g="$fixtures/graphs/softmax_rows.core_aten.0.py"

"$fxwb" compile "$g" --backend delegate --scale 64 --run --repeat 2 -o inject_error=0.5 > "$tmp/bad.txt" 2>&1
rc=$?
test $rc -eq 1 || fail "a wrong result: exit $rc: $(cat "$tmp/bad.txt")"
grep -q "^accuracy vs interpreter: FAIL$" "$tmp/bad.txt" || fail "no FAIL verdict: $(cat "$tmp/bad.txt")"
grep -q "^  max abs error 0.5," "$tmp/bad.txt" || fail "no error figures: $(cat "$tmp/bad.txt")"
grep -q "RMSE (res-fp64)" "$tmp/bad.txt" || fail "no same() report against the fp64 run"

# within same()'s tolerance: allclose fails at 1e-4 but the RMSE against fp64 is small enough
"$fxwb" compile "$g" --backend delegate --scale 64 --run --repeat 2 -o inject_error=1e-7 > "$tmp/tiny.txt" 2>&1 \
  || fail "a tiny error fails: $(cat "$tmp/tiny.txt")"
grep -q "accuracy vs interpreter: pass" "$tmp/tiny.txt" || fail "tiny error verdict"

# the verdict and figures match `fxwb run` with the same backend and inputs
"$fxwb" run "$g" --backend delegate,inject_error=0.5 --scale 64 --repeat 2 --no-store > "$tmp/run.txt" 2>&1
test $? -eq 1 || fail "fxwb run with the wrong result did not fail"
grep -q "accuracy   fail   max abs error 0.5 " "$tmp/run.txt" || fail "fxwb run verdict: $(cat "$tmp/run.txt")"

# several outputs, each checked
cat > "$tmp/two.py" <<'PY'
def forward(self, x: "f32[8, 4]"):
    a = torch.ops.aten.relu.default(x)
    b = torch.ops.aten.mul.Tensor(x, 2.0)
    return (a, b)
PY
"$fxwb" compile "$tmp/two.py" --backend inductor --run --repeat 2 > "$tmp/two.txt" 2>&1 || fail "two outputs: $(cat "$tmp/two.txt")"
grep -q "accuracy vs interpreter: pass" "$tmp/two.txt" || fail "two outputs verdict"
grep -q "^time: inductor median [0-9.]* ms" "$tmp/two.txt" || fail "no timing line: $(cat "$tmp/two.txt")"
echo ok
