#!/usr/bin/env bash
# GPU run for the author's loop (issue 23) and the loader's check_arch on a real device
# (issue 22): on the H200 with the machine's own python3/torch (device tool: carry .gpu-wheels).
#   dev_loop.json      benchmarks/bench_dev_loop.py --cuda (CPU and CUDA variants of a
#                      `kernelkit init --template blank` project: cold, unchanged rebuilds with
#                      and without git, one kernel file edited, edit -> build -> tests)
#   check_arch.txt     tests/integration/test_parity_loader.py's real-device check_arch test
#   summary.txt, machine.txt
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/gpu}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kernelkit-devloop.XXXX)
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl >"$W/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site" PATH="$W/site/bin:$PATH" PYTHONUNBUFFERED=1
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
status=0
step() {  # step NAME LOG -- command...
  local name=$1 log=$2; shift 3
  local t0=$SECONDS r
  if "$@" >>"$OUT/$log" 2>&1; then r=ok; else r="FAILED(rc=$?)"; status=1; fi
  printf '%-44s %-12s %4ss\n' "$name" "$r" $((SECONDS - t0)) | tee -a "$OUT/summary.txt"
}
{ nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv
  python3 -c "import sys, torch; print(sys.version); print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2; nproc; } > "$OUT/machine.txt" 2>&1
: > "$OUT/summary.txt"
step "dev loop (cpu + cuda 9.0, ${DEV_REPEAT:-3} turns)" dev_loop.log -- \
  python3 "$ROOT/benchmarks/bench_dev_loop.py" --cuda --cuda-python "$(command -v python3)" \
  --repeat "${DEV_REPEAT:-3}" --out "$OUT/dev_loop.json"
step "check_arch on a real device (pytest)" check_arch.txt -- env KERNELKIT_TEST_CUDA_PYTHON="$(command -v python3)" \
  python3 -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/integration/test_parity_loader.py" -k "arch"
exit $status
