#!/bin/sh
# build-standalone.sh: builds the CUDA runtime and its tests with a plain C compiler, for a GPU host that lacks the
# project's other build dependencies (meson's configure needs sqlite, GLib, ...; only json-c is needed here, for the
# tensor files). Usage, from the repository root: sh tests/backends/cuda/build-standalone.sh OUTDIR
# CFLAGS / LDFLAGS are added (e.g. -I and -L of an unpacked libjson-c-dev).
set -eu
out=${1:?usage: build-standalone.sh OUTDIR}
cc=${CC:-cc}
mkdir -p "$out"
flags="-std=gnu11 -O2 -g -Wall -Wextra -Wno-unused-parameter -Wno-sign-compare -D_GNU_SOURCE -Iengine/include -Ibackends"
srcs="engine/ir/fx-common.c engine/ir/fx-types.c engine/ir/fx-arena.c engine/tensor/fx-tensor.c
      engine/tensor/fx-random.c engine/tensor/fx-dlpack.c backends/cuda/fx-cuda-alloc.c backends/cuda/fx-cuda-autotune.c
      backends/cuda/fx-cuda-blas.c backends/cuda/fx-cuda-builtin.c backends/cuda/fx-cuda-device.c
      backends/cuda/fx-cuda-graph.c backends/cuda/fx-cuda-loader.c backends/cuda/fx-cuda-nvrtc.c backends/cuda/fx-cuda-prelude.c backends/cuda/fx-cuda-program.c
      backends/cuda/fx-cuda-tensor.c"
for t in test-cuda-nodevice test-cuda-nvrtc test-cuda-gpu bench-cuda; do
  # shellcheck disable=SC2086
  $cc $flags ${CFLAGS:-} -o "$out/$t" "tests/backends/cuda/$t.c" $srcs ${LDFLAGS:-} -ljson-c -ldl -lpthread -lm
done
