#!/bin/sh
# test-fxwb-run.sh: fxwb backends / run / compare through the command line: listing (hidden tags, plugins), a run
# checked against the interpreter, usage errors (unknown backend, option, mode) with exit 2 before anything runs,
# compare's table and JSON, runs and engine kernels stored in a workspace, and WORKSPACE:COMPILE sources.
# usage: test-fxwb-run.sh FXWB FIXTURES_DIR DEBUG_PRINT_PLUGIN
set -u
fxwb=$1
fixtures=$2
plugin=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
export FXWB_INDUCTOR_CACHE="$tmp/cache"
export XDG_DATA_HOME="$tmp/data"
mkdir -p "$tmp/plugins"
cp "$plugin" "$tmp/plugins/"
export FXWB_BACKEND_PATH="$tmp/plugins"
fail () { echo "FAIL: $*"; exit 1; }
g="$fixtures/graphs/softmax_rows.core_aten.0.py"
py=/usr/bin/python3

"$fxwb" backends > "$tmp/b.txt" 2>&1 || fail "backends exit $?"
grep -q "^inductor " "$tmp/b.txt" || fail "inductor not listed"
grep -q "^debug_print" "$tmp/b.txt" && fail "debug-tagged plugin listed without --all"
"$fxwb" backends --all | grep -q "^debug_print .*\[debug\]" || fail "plugin backend missing from --all"
"$fxwb" backends inductor | grep -q "max-autotune: {'max_autotune': True, 'triton.cudagraphs': True" || fail "modes"
"$fxwb" backends nope > "$tmp/e.txt" 2>&1; test $? -eq 1 || fail "backends nope: exit"
grep -q "Invalid backend: 'nope'" "$tmp/e.txt" || fail "backends nope: message"
"$fxwb" backends --json | $py -c 'import json,sys; d=json.load(sys.stdin); assert "inductor" in [b["name"] for b in d["backends"]]' \
  || fail "backends --json"

"$fxwb" run "$g" --scale 64 --backend aot_eager --repeat 3 > "$tmp/r.txt" 2>&1 || { cat "$tmp/r.txt"; fail "run aot_eager exit $?"; }
grep -q "^accuracy   pass" "$tmp/r.txt" || fail "run: no pass"
grep -q "(3 calls after 1 warm-up)" "$tmp/r.txt" || fail "run: repeat not honoured"

"$fxwb" run "$g" --backend indcutor > "$tmp/e.txt" 2>&1; test $? -eq 2 || fail "unknown backend: exit"
grep -q "Invalid backend: 'indcutor'" "$tmp/e.txt" || fail "unknown backend message"
"$fxwb" run "$g" --backend inductor -o cpp.thread=2 > "$tmp/e.txt" 2>&1; test $? -eq 2 || fail "bad option: exit"
grep -q "did you mean 'cpp.threads'" "$tmp/e.txt" || fail "bad option message: $(cat "$tmp/e.txt")"
"$fxwb" run "$g" --backend inductor --mode max-autotune -o cpp.threads=2 > "$tmp/e.txt" 2>&1; test $? -eq 2 || fail "mode+options: exit"
grep -q "Either mode or options can be specified" "$tmp/e.txt" || fail "mode+options message"

"$fxwb" compare "$g" --scale 64 --repeat 2 -b eager -b aot_eager -b inductor -b "inductor,cpp.threads=1" -b debug_print \
  --kernels > "$tmp/c.txt" 2>&1 || { cat "$tmp/c.txt"; fail "compare exit $?"; }
grep -q "^eager .* 1.00x  pass" "$tmp/c.txt" || fail "compare: eager baseline row: $(cat "$tmp/c.txt")"
grep -q "^inductor,cpp.threads=1 .*{'cpp.threads': 1}" "$tmp/c.txt" || fail "compare: column options"
grep -q "cpp_fused__softmax_0 .* ms" "$tmp/c.txt" || fail "compare: per-kernel time"
"$fxwb" compare "$g" --scale 64 --repeat 2 -b eager -b inductor --json > "$tmp/c.json" || fail "compare --json exit"
$py - "$tmp/c.json" <<'PY' || fail "compare --json content"
import json, sys
runs = json.load(open(sys.argv[1]))
assert [r["backend"] for r in runs] == ["eager", "inductor"], runs
assert all(r["status"] == "ok" and r["accuracy"] == "pass" for r in runs), runs
assert runs[1]["median_ms"] > 0
PY

# PyTorch in a subprocess: eager matches; torch.compile needs PyTorch >= 2 (Debian has 1.13): a failed column, exit 1
if $py -c 'import torch' 2>/dev/null; then
  "$fxwb" compare "$g" --scale 64 --repeat 2 -b eager -b torch -b torch:inductor > "$tmp/t.txt" 2>&1
  rc=$?
  if $py -c 'import torch, sys; sys.exit(0 if hasattr(torch, "compile") else 1)'; then
    test $rc -eq 0 || { cat "$tmp/t.txt"; fail "torch columns: exit $rc"; }
  else
    test $rc -eq 1 || { cat "$tmp/t.txt"; fail "torch:inductor on torch 1.x: exit $rc"; }
    grep -q "has no torch.compile" "$tmp/t.txt" || fail "torch:inductor on torch 1.x: message"
  fi
  grep -q "^torch .* pass" "$tmp/t.txt" || { cat "$tmp/t.txt"; fail "torch eager column"; }
fi

# stored runs: a file's graph becomes a workspace compile; inductor's kernels an engine compile
"$fxwb" compare "$g" --scale 64 --repeat 2 -b eager -b inductor -w "$tmp/w.fxwb" > /dev/null 2>&1 || fail "compare -w exit"
$py - "$tmp/w.fxwb" <<'PY' || fail "stored runs"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
runs = db.execute("select backend, verdict, repeat, graph, engine_compile from runs order by id").fetchall()
assert [r[0] for r in runs] == ["eager", "inductor"], runs
assert all(r[1] == "pass" and r[2] == 2 and r[3] for r in runs), runs
assert runs[0][4] is None and runs[1][4] is not None, runs
k = db.execute("select name, nodes from kernels where compile = ?", (runs[1][4],)).fetchall()
assert k and k[0][0] == "cpp_fused__softmax_0" and "_softmax" in k[0][1], k
PY
"$fxwb" ls "$tmp/w.fxwb" > "$tmp/ls.txt" 2>&1 || fail "ls of the stored workspace"
"$fxwb" run "$tmp/w.fxwb:0/0" --backend eager --repeat 2 > "$tmp/r2.txt" 2>&1 || { cat "$tmp/r2.txt"; fail "run WORKSPACE:COMPILE"; }
grep -q "w.fxwb:\[0/0\] user" "$tmp/r2.txt" || fail "workspace source label: $(cat "$tmp/r2.txt")"
test "$($py -c 'import sqlite3,sys; print(sqlite3.connect(sys.argv[1]).execute("select count(*) from runs").fetchone()[0])' "$tmp/w.fxwb")" = 3 \
  || fail "run of a workspace compile not stored back"
"$fxwb" run "$tmp/w.fxwb:9/9" > "$tmp/e.txt" 2>&1; test $? -eq 1 || fail "missing compile: exit"
"$fxwb" run "$tmp/w.fxwb" > "$tmp/e.txt" 2>&1; test $? -eq 2 || fail "workspace without compile: exit"
grep -q "name a compile" "$tmp/e.txt" || fail "workspace without compile: message"

# a malformed graph: located error, exit 1
printf 'def forward(self, x):\n    y = torch.ops.aten.relu.default(x\n' > "$tmp/bad.py"
"$fxwb" run "$tmp/bad.py" > "$tmp/e.txt" 2>&1; test $? -eq 1 || fail "malformed: exit"
grep -q "bad.py:" "$tmp/e.txt" || fail "malformed: not located"
echo "ok"
