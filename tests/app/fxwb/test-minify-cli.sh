#!/bin/sh
# test-minify-cli.sh: `fxwb minify` as a user runs it on a 48-node graph with one relu deep inside, under inductor's
# injected relu bugs (accuracy, compile_error, runtime_error): a repro of at most 3 calls with the relu, that
# `fxwb run` fails with the option and passes without, and that python3 runs (Debian's torch, when installed); a
# graph that does not fail; a run killed halfway that resumes; JSON lines; usage errors.
# usage: test-minify-cli.sh FXWB FIXTURES_DIR
set -u
fxwb=$1
fixtures=$2
graph="$fixtures/minify/chain44.py"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
fail () { echo "FAIL: $*"; exit 1; }
have_torch=0
/usr/bin/python3 -c 'import torch' > /dev/null 2>&1 && have_torch=1

for bug in accuracy compile_error runtime_error; do
  kind=$(echo $bug | tr _ -)
  out="$tmp/repro_$bug.py"
  "$fxwb" minify "$graph" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=$bug --fail-on $kind \
    -o "$out" > "$tmp/$bug.txt" 2> "$tmp/$bug.err" || { cat "$tmp/$bug.txt" "$tmp/$bug.err"; fail "$bug: minify exit $?"; }
  test -s "$out" || fail "$bug: no repro written"
  grep -q "^failure    $kind:" "$tmp/$bug.txt" || fail "$bug: failure kind not reported: $(head -3 "$tmp/$bug.txt")"
  grep -q "^minified   48 -> " "$tmp/$bug.txt" || fail "$bug: summary: $(head -3 "$tmp/$bug.txt")"
  grep -q "^minify: .* nodes left (of 48)" "$tmp/$bug.err" || fail "$bug: no progress lines on a non-TTY stderr"
  # the repro's forward: at most 3 calls, one of them the relu
  calls=$(sed -n '/def forward/,/return/p' "$out" | grep -c " = torch\.")
  test "$calls" -le 3 || fail "$bug: $calls calls left"
  sed -n '/def forward/,/return/p' "$out" | grep -q "torch.ops.aten.relu.default" || fail "$bug: the relu is gone"
  # fxwb reads it back and fails the same way with the option, passes without
  "$fxwb" run "$out" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=$bug -n 1 > "$tmp/run1.txt" 2>&1
  rc=$?
  test $rc -eq 1 || fail "$bug: run with the bug: exit $rc"
  case $bug in
    accuracy) grep -q "^accuracy   fail" "$tmp/run1.txt" || fail "accuracy: run does not fail on accuracy" ;;
    compile_error) grep -q "C compiler failed" "$tmp/run1.txt" || fail "compile_error: $(cat "$tmp/run1.txt")" ;;
    runtime_error) grep -q "injected relu runtime error" "$tmp/run1.txt" || fail "runtime_error: $(cat "$tmp/run1.txt")" ;;
  esac
  "$fxwb" run "$out" --backend inductor -n 1 > "$tmp/run2.txt" 2>&1 || fail "$bug: run without the bug: exit $?"
  grep -q "^accuracy   pass" "$tmp/run2.txt" || fail "$bug: run without the bug does not pass"
  if [ $have_torch -eq 1 ]; then
    /usr/bin/python3 "$out" > "$tmp/py.txt" 2>&1 || { cat "$tmp/py.txt"; fail "$bug: python3 repro.py exit $?"; }
  fi
done

# fxwb import reads the repro back into a workspace, where it runs and fails the same way
"$fxwb" import "$tmp/repro_accuracy.py" -o "$tmp/w.fxwb" -q > /dev/null 2>&1 || fail "import repro.py: exit $?"
"$fxwb" show "$tmp/w.fxwb" 0/0 | grep -q "^minified" || fail "imported repro is not a minified graph"
"$fxwb" run "$tmp/w.fxwb:0/0" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=accuracy -n 1 --no-store \
  > /dev/null 2>&1
test $? -eq 1 || fail "imported repro does not fail"
# minifying a workspace's compile stores each shrink in it
"$fxwb" import "$graph" -o "$tmp/w2.fxwb" -q > /dev/null 2>&1 || fail "import graph: exit $?"
"$fxwb" minify "$tmp/w2.fxwb:0/0" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=accuracy \
  --fail-on accuracy -o "$tmp/w2.py" > /dev/null 2>&1 || fail "minify a workspace compile: exit $?"
test "$("$fxwb" show "$tmp/w2.fxwb" 0/0 | grep -c '^minified')" -ge 2 || fail "shrinks not stored in the workspace"

# a graph that does not fail: said clearly, exit 1, no repro
"$fxwb" minify "$graph" --backend inductor --fail-on accuracy -o "$tmp/none.py" > "$tmp/none.txt" 2>&1
rc=$?
test $rc -eq 1 || fail "not failing: exit $rc"
grep -q "does not fail" "$tmp/none.txt" || fail "not failing: $(cat "$tmp/none.txt")"
test ! -e "$tmp/none.py" || fail "not failing: a repro was written"
# fails, but not as asked
"$fxwb" minify "$graph" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=compile_error --fail-on accuracy \
  -o "$tmp/other.py" > "$tmp/other.txt" 2>&1
rc=$?
test $rc -eq 1 || fail "other failure: exit $rc"
grep -q "compile-error" "$tmp/other.txt" || fail "other failure not named: $(cat "$tmp/other.txt")"

# killed halfway (a cold compiler cache keeps each candidate slow), then resumed
export FXWB_INDUCTOR_CACHE="$tmp/cache2"
: > "$tmp/json.txt"   # exists before the loop reads it (the background job opens it when it gets to run)
"$fxwb" minify "$graph" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=accuracy --fail-on accuracy \
  --json -o "$tmp/r.py" > "$tmp/json.txt" 2> /dev/null &
pid=$!
i=0
while [ "$(grep -c '"event": "shrunk"' "$tmp/json.txt" 2> /dev/null || true)" -lt 1 ] && [ $i -lt 600 ]; do
  sleep 0.1
  i=$((i + 1))
done
kill -9 $pid 2> /dev/null
wait $pid 2> /dev/null
grep -q '"event": "result"' "$tmp/json.txt" && fail "resume: the run finished before it was killed"
test -s "$tmp/r.py.checkpoint" || fail "resume: no checkpoint"
test ! -e "$tmp/r.py" || fail "resume: a repro before the end"
before=$(grep -c '"event": "candidate"' "$tmp/json.txt")
"$fxwb" minify "$graph" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=accuracy --fail-on accuracy \
  --json -o "$tmp/r.py" --resume > "$tmp/json2.txt" 2> "$tmp/json2.err" || fail "resume: exit $? $(cat "$tmp/json2.err")"
grep -q '"event": "result", "reproduced": true' "$tmp/json2.txt" || fail "resume: no result line"
test -s "$tmp/r.py" || fail "resume: no repro"
total=$(sed -n 's/.*"event": "result".*"candidates": \([0-9]*\).*/\1/p' "$tmp/json2.txt")
test "$total" -gt "$before" || fail "resume: candidates $total not counted on from $before"
calls=$(sed -n '/def forward/,/return/p' "$tmp/r.py" | grep -c " = torch\.")
test "$calls" -le 3 || fail "resume: $calls calls left"
# every JSON line parses
if [ $have_torch -eq 1 ]; then
  /usr/bin/python3 -c 'import json,sys
for l in open(sys.argv[1]): json.loads(l)' "$tmp/json2.txt" || fail "JSON lines do not parse"
fi

# an injected bug PyTorch does not know is refused with the values it takes
"$fxwb" run "$graph" --backend inductor --option cpp.inject_relu_bug_TESTING_ONLY=segfault -n 1 > "$tmp/bogus.txt" 2>&1
test $? -eq 1 || fail "unknown injected bug: exit $?"
grep -q "'compile_error', 'runtime_error', 'accuracy'" "$tmp/bogus.txt" || fail "unknown injected bug: $(cat "$tmp/bogus.txt")"

# usage errors
"$fxwb" minify "$graph" --fail-on accuracy > /dev/null 2>&1
test $? -eq 2 || fail "no --backend: not a usage error"
"$fxwb" minify "$graph" --backend inductor --fail-on segfault > /dev/null 2>&1
test $? -eq 2 || fail "bad --fail-on: not a usage error"
"$fxwb" minify "$graph" --backend nope > /dev/null 2>&1
test $? -eq 2 || fail "unknown backend: not a usage error"
"$fxwb" minify "$tmp/missing.py" --backend inductor > /dev/null 2>&1
test $? -eq 3 || fail "missing file: not an I/O error"
"$fxwb" minify "$graph" --backend inductor --resume -o "$tmp/nothing.py" > /dev/null 2>&1
test $? -eq 3 || fail "resume without a checkpoint: not an I/O error"
echo "ok"
