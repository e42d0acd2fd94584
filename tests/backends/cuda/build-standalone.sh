#!/bin/sh
# build-standalone.sh: builds the CUDA runtime and its tests with a plain C compiler, for a GPU host that lacks the
# project's other build dependencies (meson's configure needs sqlite, json-c, libzip, GLib). Usage, from the
# repository root: sh tests/backends/cuda/build-standalone.sh OUTDIR
set -eu
out=${1:?usage: build-standalone.sh OUTDIR}
cc=${CC:-cc}
mkdir -p "$out"
flags="-std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -D_GNU_SOURCE -Iengine/include -Ibackends"
srcs="engine/ir/fx-common.c engine/ir/fx-types.c engine/ir/fx-arena.c backends/cuda/fx-cuda-alloc.c backends/cuda/fx-cuda-blas.c
      backends/cuda/fx-cuda-device.c backends/cuda/fx-cuda-graph.c backends/cuda/fx-cuda-loader.c
      backends/cuda/fx-cuda-nvrtc.c"
for t in test-cuda-nodevice test-cuda-nvrtc test-cuda-gpu bench-cuda; do
  # shellcheck disable=SC2086
  $cc $flags -o "$out/$t" "tests/backends/cuda/$t.c" $srcs -ldl -lpthread -lm
done
