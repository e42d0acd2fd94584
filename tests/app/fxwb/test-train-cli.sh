#!/bin/sh
# test-train-cli.sh: `fxwb compile --train` (forward/backward graphs that print back, --joint, saved values with
# reasons, min-cut saving no more than save-all, torch 2.11's own joint graphs partitioned to the values torch saved)
# and `fxwb compare --train` (eager, aot_eager and inductor training steps with SGD and Adam, on a forward graph and on
# torch's joint graph; --json; a diverging training said so; an injected inductor relu bug fails the gradient check);
# located errors and usage errors.
# usage: test-train-cli.sh FXWB FIXTURES_DIR
set -u
fxwb=$1
fixtures=$2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
fail () { echo "FAIL: $*"; exit 1; }
graph="$fixtures/graphs/mlp_block.core_aten.0.py"

# compile --train: both graphs and the saved values
"$fxwb" compile "$graph" --train > "$tmp/mc.txt" 2> "$tmp/mc.err" || fail "compile --train: exit $? $(cat "$tmp/mc.err")"
grep -q "^# aot_forward_graph$" "$tmp/mc.txt" || fail "no forward graph"
grep -q "^# aot_backward_graph$" "$tmp/mc.txt" || fail "no backward graph"
test "$(grep -c '^class GraphModule(torch.nn.Module):$' "$tmp/mc.txt")" -eq 2 || fail "not two GraphModules"
grep -q "def forward(self, arg0_1: \"f32\[4096, 1024\]\"" "$tmp/mc.txt" && fail "primals are not renamed"
grep -q "def forward(self, primals_1: \"f32\[4096, 1024\]\"" "$tmp/mc.txt" || fail "forward placeholders"
grep -q "tangents_1: \"f32\[8192, 1024\]\"" "$tmp/mc.txt" || fail "backward tangents"
grep -q "torch.ops.aten.mm.default" "$tmp/mc.txt" || fail "no matmul in the backward"
n_min=$(sed -n 's/^# saved for backward: \([0-9]*\) values.*/\1/p' "$tmp/mc.txt")
test -n "$n_min" || fail "no saved summary"
test "$(grep -c '^  [a-z_0-9]* .* B  ' "$tmp/mc.txt")" -eq "$n_min" || fail "saved lines do not match the count"
grep -q "needed by mul in backward; recomputing it costs a matmul" "$tmp/mc.txt" || fail "no matmul reason: $(cat "$tmp/mc.txt")"
grep -q "it is a graph input, which the backward cannot recompute" "$tmp/mc.txt" || fail "no input reason"
# each printed graph parses back
for part in forward backward; do
  case $part in forward) until="^# aot_backward_graph" ;; backward) until="^# saved for backward" ;; esac
  sed -n "/^# aot_${part}_graph\$/,/$until/p" "$tmp/mc.txt" | sed '1d;$d' > "$tmp/$part.py"
  "$fxwb" print "$tmp/$part.py" > /dev/null 2> "$tmp/p.err" || fail "$part graph does not parse back: $(cat "$tmp/p.err")"
done
"$fxwb" compile "$graph" --train --joint > "$tmp/j.txt" || fail "--joint: exit $?"
grep -q "^# aot_joint_graph$" "$tmp/j.txt" || fail "--joint: no joint graph"
grep -q "^class inner_f(torch.nn.Module):$" "$tmp/j.txt" || fail "--joint: not inner_f"
grep -q "        return \[add, " "$tmp/j.txt" || fail "--joint: output list: $(grep return "$tmp/j.txt")"
"$fxwb" compile "$graph" --train --partition save-all > "$tmp/sa.txt" || fail "save-all: exit $?"
n_all=$(sed -n 's/^# saved for backward: \([0-9]*\) values.*/\1/p' "$tmp/sa.txt")
test "$n_min" -le "$n_all" || fail "min-cut saves $n_min, save-all $n_all"
grep -q "save-all partition saves every value" "$tmp/sa.txt" || fail "save-all reasons"

# torch 2.11's own joint graph (aot_joint_graph) is partitioned as it is: on mlp_block and transformer_block the min
# cut saves exactly the values torch's partitioner saved
for prog in mlp_block transformer_block; do
  "$fxwb" compile "$fixtures/training/graphs/$prog.min_cut.joint.py" --train > "$tmp/tj.txt" 2>&1 \
    || fail "$prog joint: exit $? $(cat "$tmp/tj.txt")"
  ours=$(sed -n '/^# saved for backward/,$p' "$tmp/tj.txt" | awk 'NR > 1 { print $1 }' | tr '\n' ' ')
  torch=$(/usr/bin/python3 -c "import json, sys; print(' '.join(json.load(open(sys.argv[1]))[sys.argv[2]]['saved']) + ' ')" \
          "$fixtures/training/graphs/saved_counts.json" "$prog.min_cut")
  test "$ours" = "$torch" || fail "$prog: saves '$ours', torch 2.11 '$torch'"
done

# training steps on torch's joint graph itself (its tangent inputs made anew each step)
"$fxwb" compare "$fixtures/training/graphs/mlp_block.min_cut.joint.py" --train --steps 2 --no-store \
  -b eager -b aot_eager -b inductor > "$tmp/tjc.txt" 2>&1 || fail "compare torch's joint: exit $? $(cat "$tmp/tjc.txt")"
grep -q "^training: 2 steps, sgd (lr 0.001), 3 values saved for backward" "$tmp/tjc.txt" \
  || fail "compare torch's joint: $(cat "$tmp/tjc.txt")"
test "$(grep -cE '^(eager|aot_eager|inductor) .* pass' "$tmp/tjc.txt")" -eq 3 || fail "torch's joint: $(cat "$tmp/tjc.txt")"

# compare --train: every backend passes with SGD and Adam, forward and backward timed apart
for opt in sgd adam; do
  "$fxwb" compare "$graph" --train --scale 16 --steps 2 --lr 0.001 --optimizer $opt --no-store \
    -b eager -b aot_eager -b inductor > "$tmp/cmp.txt" 2> "$tmp/cmp.err" \
    || fail "compare --train $opt: exit $? $(cat "$tmp/cmp.txt" "$tmp/cmp.err")"
  grep -q "^training: 2 steps, $opt (lr 0.001)" "$tmp/cmp.txt" || fail "$opt: header"
  grep -q "forward ms   backward ms" "$tmp/cmp.txt" || fail "$opt: no separate timings"
  test "$(grep -cE '^(eager|aot_eager|inductor) +[0-9.]+ +[0-9.]+ +[0-9.]+ +pass' "$tmp/cmp.txt")" -eq 3 \
    || fail "$opt: not three passing rows: $(cat "$tmp/cmp.txt")"
done

# --json: one document with the saved values and a run per column
"$fxwb" compare "$graph" --train --scale 16 --steps 2 --no-store --json -b eager -b inductor > "$tmp/cmp.json" \
  || fail "--json: exit $?"
/usr/bin/python3 - "$tmp/cmp.json" <<'PY' || fail "--json: $(cat "$tmp/cmp.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["steps"] == 2 and d["optimizer"] == "sgd", d
assert [r["backend"] for r in d["runs"]] == ["eager", "inductor"], d["runs"]
assert all(r["grads"] == "pass" and r["forward_median_ms"] > 0 and r["backward_median_ms"] > 0 for r in d["runs"])
assert d["saved"] and all(s["reason"] and s["bytes"] > 0 for s in d["saved"])
PY

# a diverging training (lr 10) is said to diverge, not reported as a backend failure
"$fxwb" compare "$graph" --train --scale 16 --steps 6 --lr 10 --no-store -b eager > "$tmp/div.txt" 2>&1 \
  || fail "diverging training: exit $? $(cat "$tmp/div.txt")"
grep -q "^eager: the training diverged: the reference's gradients are not finite at step [0-9]" "$tmp/div.txt" \
  || fail "divergence not reported: $(cat "$tmp/div.txt")"

# a wrong gradient fails the check: inductor's injected relu accuracy bug on a relu graph
relu="$tmp/relu.py"
cat > "$relu" <<'PY'
class G(torch.nn.Module):
    def forward(self, x: "f32[16, 8]", w: "f32[8, 8]"):
        mm: "f32[16, 8]" = torch.ops.aten.mm.default(x, w)
        relu: "f32[16, 8]" = torch.ops.aten.relu.default(mm)
        mul: "f32[16, 8]" = torch.ops.aten.mul.Tensor(relu, relu)
        return (mul,)
PY
"$fxwb" compare "$relu" --train --steps 1 --no-store -b eager \
  -b "inductor,cpp.inject_relu_bug_TESTING_ONLY=accuracy" > "$tmp/bug.txt" 2>&1
rc=$?
test $rc -eq 1 || fail "injected bug: exit $rc $(cat "$tmp/bug.txt")"
grep -qE '^inductor.* FAIL' "$tmp/bug.txt" || fail "injected bug not reported: $(cat "$tmp/bug.txt")"
grep -qE '^eager .* pass' "$tmp/bug.txt" || fail "eager should pass: $(cat "$tmp/bug.txt")"

# an op without a derivative formula: a located error, no crash
cat > "$tmp/atan2.py" <<'PY'
class G(torch.nn.Module):
    def forward(self, x: "f32[4]", y: "f32[4]"):
        atan2: "f32[4]" = torch.ops.aten.atan2.default(x, y)
        return (atan2,)
PY
"$fxwb" compile "$tmp/atan2.py" --train > "$tmp/u.txt" 2> "$tmp/u.err"
rc=$?
test $rc -eq 1 || fail "unsupported derivative: exit $rc"
grep -q "atan2.*aten.atan2.default.*no derivative formula" "$tmp/u.err" || fail "unsupported: $(cat "$tmp/u.err")"

# usage errors
"$fxwb" compile "$graph" --train --partition bogus > /dev/null 2>&1; test $? -eq 2 || fail "--partition bogus"
"$fxwb" compile "$graph" --partition save-all > /dev/null 2>&1; test $? -eq 2 || fail "--partition without --train"
"$fxwb" compile "$graph" --joint > /dev/null 2>&1; test $? -eq 2 || fail "--joint without --train"
"$fxwb" compare "$graph" --train --optimizer rmsprop > /dev/null 2>&1; test $? -eq 2 || fail "--optimizer rmsprop"
"$fxwb" compare "$graph" --train --steps 0 > /dev/null 2>&1; test $? -eq 2 || fail "--steps 0"
"$fxwb" compare "$graph" --optimizer adam > /dev/null 2>&1; test $? -eq 2 || fail "--optimizer without --train"
echo "ok"
