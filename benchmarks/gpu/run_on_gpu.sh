#!/usr/bin/env bash
# The GPU run (issue: prove it on a real GPU). Runs on a CUDA machine from a checkout of this
# repository with the machine's own python3/torch, and writes every log to $OUT (default
# benchmarks/results/gpu). Steps, for each example (img2gray, activation):
#   kernelkit init -> kernelkit build (the machine's torch: cuda + cpu variants) -> kernelkit
#   check -> kernelkit upload (local hub) -> get_kernel (picks the CUDA variant) -> the
#   example's own tests on CUDA (incl. opcheck and torch.compile)
# then the img2gray bandwidth benchmark (JSON + PNG) and the templates' small-call benchmark
# (generated wrapper vs raw torch.ops call vs torch eager, JSON).
# CUDA capabilities default to 9.0 (Hopper) to keep the compile short; override with
# KERNELKIT_CUDA_CAPABILITIES.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/gpu}
mkdir -p "$OUT"
export PYTHONPATH="$ROOT/src:${EXTRA_SITE:-}" PYTHONUNBUFFERED=1
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
W=$(mktemp -d /tmp/kernelkit-gpu.XXXX)
export KERNELKIT_HUB_DIR=$W/hub KERNELKIT_CACHE=$W/cache
KK=(python3 -m kernelkit)
status=0
step() {  # step NAME LOG -- command...
  local name=$1 log=$2; shift 3
  local t0=$SECONDS
  if "$@" >>"$OUT/$log" 2>&1; then r=ok; else r="FAILED(rc=$?)"; status=1; fi
  echo "$(printf '%-40s %-12s %4ss' "$name" "$r" $((SECONDS - t0)))" | tee -a "$OUT/summary.txt"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2; } > "$OUT/machine.txt" 2>&1
: > "$OUT/summary.txt"
for ex in img2gray activation; do
  P=$W/$ex
  step "$ex: init" "$ex.log" -- "${KK[@]}" init "$P" --name "kernelkit-examples/$ex" --template "$ex"
  git -C "$P" -c user.name=gpu -c user.email=gpu@kernelkit.invalid commit -qm init >/dev/null 2>&1
  step "$ex: build (cuda + cpu)" "$ex.log" -- "${KK[@]}" build "$P"
  step "$ex: check" "$ex.log" -- "${KK[@]}" check "$P/build"
  step "$ex: upload" "$ex.log" -- "${KK[@]}" upload "$P" --tag v1.0.0
  step "$ex: get_kernel (cuda variant)" "$ex.log" -- python3 -c "
import torch, kernelkit
k = kernelkit.get_kernel('kernelkit-examples/$ex', version=1, trust_remote_code=True)
print('loaded', k.__name__, 'from', k.__file__)
assert '_cuda_' in k.__name__, k.__name__
for lk in kernelkit.get_loaded_kernels(): print(lk.metadata.id, lk.repo_info)"
  step "$ex: project tests on CUDA" "$ex.log" -- env KERNEL_BUILD_DIR="$P/build" \
    python3 -m pytest -q -p no:cacheprovider -rs "$P/tests"
done
CUDA_VARIANT=$(ls -d "$W"/img2gray/build/*-cu*-* | head -1)
step "img2gray: bandwidth benchmark" "bench.log" -- python3 "$ROOT/benchmarks/bench_img2gray_gpu.py" \
  --kernel "$CUDA_VARIANT" --out "$OUT"
step "templates: small-call benchmark" "bench.log" -- python3 "$ROOT/benchmarks/bench_small_call.py" \
  --device cuda --img2gray "$W/img2gray/build" --activation "$W/activation/build" \
  --out "$OUT/small_call_cuda.json"
cat "$OUT/summary.txt"
exit $status
