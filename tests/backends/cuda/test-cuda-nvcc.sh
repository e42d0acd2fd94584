#!/bin/sh
# test-cuda-nvcc.sh: the generated-style sample kernels compile with nvcc for Hopper (sm_90 cubins) on a machine
# without a GPU; each cubin is an ELF file that holds its kernel. Kernels under KERNELS_DIR/prelude are compiled
# after the prelude that PRELUDE_DUMP prints. Skips (77) where nvcc is absent.
set -u
dir=${1:?usage: test-cuda-nvcc.sh KERNELS_DIR [PRELUDE_DUMP]}
dump=${2:-}
nvcc=$(command -v nvcc 2>/dev/null || true)
if [ -z "$nvcc" ] && [ -x /usr/local/cuda/bin/nvcc ]; then
  nvcc=/usr/local/cuda/bin/nvcc
fi
if [ -z "$nvcc" ]; then
  echo "1..0 # SKIP nvcc not found (PATH, /usr/local/cuda/bin)"
  exit 77
fi
out=$(mktemp -d) || exit 1
trap 'rm -rf "$out"' EXIT
"$nvcc" --version | tail -1 | sed 's/^/# /'
n=0
fail=0
for src in "$dir"/*.cu "$dir"/prelude/*.cu; do
  [ -f "$src" ] || continue
  n=$((n + 1))
  name=$(basename "$src" .cu)
  case $src in
    "$dir"/prelude/*)
      if [ -z "$dump" ]; then
        echo "ok $n $name # SKIP no prelude dump program given"
        continue
      fi
      "$dump" >"$out/$name.cu" && cat "$src" >>"$out/$name.cu" || { echo "not ok $n $name"; fail=1; continue; }
      src=$out/$name.cu
      ;;
  esac
  if "$nvcc" -arch=sm_90 -cubin -Werror all-warnings -o "$out/$name.cubin" "$src" >"$out/log" 2>&1 \
     && [ "$(head -c 4 "$out/$name.cubin" | od -An -c | tr -d ' ')" = '177ELF' ] \
     && grep -q "$name" "$out/$name.cubin"; then
    echo "ok $n $name"
  else
    echo "not ok $n $name"
    sed 's/^/# /' "$out/log"
    fail=1
  fi
done
echo "1..$n"
[ "$n" -gt 0 ] || exit 1
exit $fail
