#!/bin/sh
# test-bench-inductor.sh: `fxwb bench inductor-cpu` on small sizes: the table has a row per graph with fxwb's
# time, ratio and accuracy (torch eager's column where Debian's torch is installed), --json carries the columns,
# a graph past --timeout is reported "timed out" (exit 1) while the others still run, usage errors exit 2.
# usage: test-bench-inductor.sh FXWB FIXTURES_DIR BENCH_GRAPHS_DIR
set -u
fxwb=$1
fixtures=$2
bench=$3
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail () { echo "FAIL: $*"; exit 1; }
have_torch=0
/usr/bin/python3 -c 'import torch' > /dev/null 2>&1 && have_torch=1

# two graphs: a fixture one and an op-coverage one (names without the stage suffix)
"$fxwb" bench inductor-cpu --dir "$fixtures/graphs" --dir "$bench" -g soft --scale 16 -n 2 --warmup 1 \
  > "$tmp/out.txt" 2> "$tmp/err.txt" || { cat "$tmp/out.txt" "$tmp/err.txt"; fail "exit $?"; }
grep -q "^bench inductor-cpu: 2 graphs from " "$tmp/out.txt" || fail "header: $(head -2 "$tmp/out.txt")"
# what the timings depend on: CPUs, the cgroup quota, the BLAS and the OpenMP settings
grep -q "^host: [0-9]* CPUs online, [0-9-]* in this process's affinity, cgroup cpu.max .*; BLAS: .*GOMP_SPINCOUNT=" \
  "$tmp/out.txt" || fail "host line: $(head -3 "$tmp/out.txt")"
for g in masked_softmax softmax_rows; do
  grep -q "^$g .* pass$" "$tmp/out.txt" || fail "$g: no passing row: $(cat "$tmp/out.txt")"
done
grep -q "^geomean: " "$tmp/out.txt" || fail "no geomean line"
if [ $have_torch = 1 ]; then
  # a ratio against torch eager on each row
  test "$(grep -c '^[a-z_]* *[0-9.]* .*x ' "$tmp/out.txt")" -eq 2 || fail "rows without a torch eager ratio: $(cat "$tmp/out.txt")"
fi

# --json: one object per graph, the compare columns inside
"$fxwb" bench inductor-cpu --dir "$fixtures/graphs" -g softmax_rows --scale 16 -n 1 --json > "$tmp/j.json" \
  || fail "json exit $?"
grep -q '"graph": *"softmax_rows"' "$tmp/j.json" || fail "json graph: $(head -c 300 "$tmp/j.json")"
grep -q '"accuracy": *"pass"' "$tmp/j.json" || fail "json accuracy"
grep -q '"host": *"[0-9]* CPUs online' "$tmp/j.json" || fail "json host"

# --no-eager: no torch eager column in the child's compare (one column fewer in --json), "-" in the table
"$fxwb" bench inductor-cpu --dir "$fixtures/graphs" -g softmax_rows --scale 16 -n 1 --no-eager --json > "$tmp/ne.json" \
  || fail "--no-eager json exit $?"
! grep -q '"backend": *"torch:eager' "$tmp/ne.json" || fail "--no-eager still ran torch eager"
grep -q '"backend": *"inductor' "$tmp/ne.json" || fail "--no-eager lost fxwb's column: $(head -c 300 "$tmp/ne.json")"
if [ $have_torch = 1 ]; then
  grep -q '"backend": *"torch:eager' "$tmp/j.json" || fail "the default run has no torch eager column"
fi
"$fxwb" bench inductor-cpu --dir "$fixtures/graphs" -g softmax_rows --scale 16 -n 1 --no-eager > "$tmp/ne.txt" 2>&1 \
  || fail "--no-eager exit $?"
grep -q "no torch eager column (--no-eager)" "$tmp/ne.txt" || fail "--no-eager header: $(head -4 "$tmp/ne.txt")"
grep -q "^softmax_rows  *- .* pass$" "$tmp/ne.txt" || fail "--no-eager row: $(cat "$tmp/ne.txt")"

# a time guard: every graph times out, is reported and the command fails
"$fxwb" bench inductor-cpu --dir "$fixtures/graphs" -g softmax_rows --timeout 0.05 > "$tmp/t.txt" 2>&1 \
  && fail "timeout: exit 0"
grep -q "^softmax_rows *timed out" "$tmp/t.txt" || fail "timeout row: $(cat "$tmp/t.txt")"

# the GPU bench: without a CUDA device it says so and exits 4 ("no such device here"); with one, one graph
if nvidia-smi -L > /dev/null 2>&1; then
  "$fxwb" bench inductor-cuda --dir "$fixtures/graphs" -g softmax_rows --scale 16 -n 2 > "$tmp/c.txt" 2>&1 \
    || fail "inductor-cuda exit $?: $(cat "$tmp/c.txt")"
  grep -q "^bench inductor-cuda: 1 graphs from .*CUDA events" "$tmp/c.txt" || fail "cuda header: $(head -2 "$tmp/c.txt")"
  grep -q "^softmax_rows .* pass$" "$tmp/c.txt" || fail "cuda row: $(cat "$tmp/c.txt")"
else
  "$fxwb" bench inductor-cuda --dir "$fixtures/graphs" -g softmax_rows > "$tmp/c.txt" 2>&1
  rc=$?
  test $rc -eq 4 || fail "inductor-cuda without a GPU: exit $rc, not 4: $(cat "$tmp/c.txt")"
  grep -q "no CUDA device" "$tmp/c.txt" || fail "inductor-cuda without a GPU: $(cat "$tmp/c.txt")"
fi

# usage errors
"$fxwb" bench inductor-cpu --prepare -1 > /dev/null 2>&1; test $? -eq 2 || fail "--prepare -1 not a usage error"
"$fxwb" bench inductor-cpu --repeat 0 > /dev/null 2>&1; test $? -eq 2 || fail "--repeat 0 not a usage error"
"$fxwb" bench inductor-cpu --stage nope > /dev/null 2>&1; test $? -eq 2 || fail "--stage nope not a usage error"
"$fxwb" bench inductor-cpu --dir "$tmp/none" > /dev/null 2>&1; test $? -eq 3 || fail "missing --dir not an IO error"
echo "ok"
