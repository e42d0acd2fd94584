#!/bin/sh
# fxwb capture end to end: a program under capture writes its JSON record; bad input gives clear errors and exit codes.
set -u
FXWB="$1"
FIX="$2"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail () { echo "not ok: $*"; exit 1; }

"$FXWB" capture "$FIX/toy_graph_break.py" --json "$tmp/rec.json" >"$tmp/out" 2>"$tmp/err" || fail "capture exited $?: $(cat "$tmp/err")"
grep -q '"kind": "compile"' "$tmp/rec.json" || fail "no compile in the record"
grep -q 'torch_dynamo_resume_in_toy_example_at_7' "$tmp/rec.json" || fail "no resume frame in the record"
grep -q "tensor 'a' size mismatch at index 0. expected 10, actual 16" "$tmp/rec.json" || fail "no recompile reason"
# the program's inductor graphs compiled on the engine: no compile fell back to eager with an error
grep -q '"backend_error": "' "$tmp/rec.json" && fail "a backend failed: $(grep -o '"backend_error": "[^"]*' "$tmp/rec.json" | head -1)"
grep -q '"cpp_fused_abs_add_div_0"' "$tmp/rec.json" || fail "inductor generated no kernel for [0/0]"

# into a workspace: the compiles show up like imported ones (the store is always built with capture)
"$FXWB" capture "$FIX/toy_graph_break.py" -o "$tmp/w.fxwb" 2>"$tmp/err" || fail "capture -o exited $?: $(cat "$tmp/err")"
"$FXWB" ls "$tmp/w.fxwb" >"$tmp/ls" || fail "fxwb ls on the captured workspace"
grep -q '^\[0/0\] *toy_example .*graph break' "$tmp/ls" || fail "ls: no [0/0] graph break: $(cat "$tmp/ls")"
grep -q '^\[2/0\] *torch_dynamo_resume_in_toy_example_at_7' "$tmp/ls" || fail "ls: no resume frame"
"$FXWB" show --tabular "$tmp/w.fxwb" 0/0 >"$tmp/tab" || fail "show --tabular"
grep -q '^call_method    sum_1    sum ' "$tmp/tab" || fail "show --tabular: $(cat "$tmp/tab")"
"$FXWB" show --recompiles "$tmp/w.fxwb" 0/1 >"$tmp/rc" || fail "show --recompiles"
grep -q "^    - 0/0: tensor 'a' size mismatch at index 0. expected 10, actual 16$" "$tmp/rc" || fail "recompiles: $(cat "$tmp/rc")"
# automatic dynamic shapes: the recompile's graph has SymInt placeholders, its guards the shape env's
"$FXWB" show --readable "$tmp/w.fxwb" 0/1 >"$tmp/rd" || fail "show --readable"
grep -q 'def forward(self, s97: "Sym(s97)", L_a_: "f32\[s97\]\[1\]' "$tmp/rd" || fail "dynamic graph: $(cat "$tmp/rd")"
"$FXWB" show --guards "$tmp/w.fxwb" 0/1 >"$tmp/gd" || fail "show --guards"
grep -q "LAMBDA_GUARD .*2 <= L\['a'\].size()\[0\]" "$tmp/gd" || fail "dynamic guards: $(cat "$tmp/gd")"
n1=$(wc -l <"$tmp/ls")
"$FXWB" capture "$FIX/toy_graph_break.py" -o "$tmp/w.fxwb" 2>/dev/null || fail "second capture"
"$FXWB" ls "$tmp/w.fxwb" >"$tmp/ls2"
[ "$(wc -l <"$tmp/ls2")" -ge "$n1" ] || fail "second capture lost rows"

"$FXWB" capture "$tmp/missing.py" --json "$tmp/x.json" 2>"$tmp/err"; rc=$?
[ $rc -eq 3 ] || fail "missing program: exit $rc"
grep -q "no such program file" "$tmp/err" || fail "missing program: message"

"$FXWB" capture "$FIX/toy_graph_break.py" 2>"$tmp/err"; rc=$?
[ $rc -eq 2 ] || fail "no output: exit $rc"

printf 'import torch\ndef f(x):\n    return x + 1\ng = torch.compile(f, backend="eager")\ng(torch.ones(2))\nprint("the program prints")\nraise ValueError("boom")\n' >"$tmp/raises.py"
"$FXWB" capture "$tmp/raises.py" --json "$tmp/r.json" >"$tmp/out" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "raising program: exit $rc"
grep -q "ValueError: boom" "$tmp/err" || fail "raising program: traceback"
grep -q "the program prints" "$tmp/out" || fail "raising program: its own output"
grep -q '"kind": "compile"' "$tmp/r.json" || fail "raising program: record not written"

printf 'import sys\nsys.exit(3)\n' >"$tmp/exits.py"
"$FXWB" capture "$tmp/exits.py" --json "$tmp/e.json" 2>"$tmp/err"; rc=$?
[ $rc -eq 1 ] || fail "exit 3 program: exit $rc"
echo "ok"
