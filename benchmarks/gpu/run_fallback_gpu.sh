#!/usr/bin/env bash
# GPU run for the build-from-source fallback (issue 29), on the machine's own python3/torch
# (device tool: carry .gpu-wheels for kernelkit's build tools: cmake, ninja, pyelftools).
#   fallback_cuda.json  benchmarks/bench_fallback.py --cuda: time to first call of img2gray's
#                       CUDA variant built by build_missing (warm and cold compiler caches, and
#                       once built) against a plain download, ratios in the same run
#   gpu_test.txt        tests/integration/test_build_missing.py's GPU test: the CUDA variant,
#                       published under another torch's name, built for this GPU and run on it
#   summary.txt, machine.txt
# KERNELKIT_CUDA_CAPABILITIES stays unset on purpose: the fallback builds for the visible GPU.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/gpu}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kernelkit-fallback.XXXX)
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl >"$W/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site" PATH="$W/site/bin:$PATH" PYTHONUNBUFFERED=1
unset KERNELKIT_CUDA_CAPABILITIES
status=0
step() {  # step NAME LOG -- command...
  local name=$1 log=$2; shift 3
  local t0=$SECONDS r
  if "$@" >>"$OUT/$log" 2>&1; then r=ok; else r="FAILED(rc=$?)"; status=1; fi
  printf '%-44s %-12s %4ss\n' "$name" "$r" $((SECONDS - t0)) | tee -a "$OUT/summary.txt"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total,compute_cap --format=csv
  python3 -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2; nproc; } > "$OUT/machine.txt" 2>&1
: > "$OUT/summary.txt"
step "fallback: time to first call (cuda, ${FALLBACK_REPEAT:-3} turns)" fallback.log -- \
  python3 "$ROOT/benchmarks/bench_fallback.py" --cuda --python "$(command -v python3)" \
  --repeat "${FALLBACK_REPEAT:-3}" --out "$OUT/fallback_cuda.json"
step "fallback: CUDA variant built for this GPU (pytest)" gpu_test.txt -- \
  env KERNELKIT_TEST_CUDA_PYTHON="$(command -v python3)" \
  python3 -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/integration/test_build_missing.py" \
  -k "cuda_variant_is_built_for_its_capability"
exit $status
