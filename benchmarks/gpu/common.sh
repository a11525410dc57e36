# Shared by the GPU run scripts that use the machine's own python3/torch (run_dev_loop_gpu.sh,
# run_fallback_gpu.sh): source it as `. "$(dirname "$0")/common.sh" LABEL`. It sets ROOT, OUT
# (default benchmarks/results/gpu), W (a scratch directory /tmp/kernelkit-LABEL.XXXX), installs
# the carried .gpu-wheels into $W/site (--no-deps), puts this checkout's src/ and that site
# first on PYTHONPATH, writes $OUT/machine.txt, empties $OUT/summary.txt, and defines
#   step NAME LOG -- command...   run it, output appended to $OUT/LOG, one line to summary.txt;
#                                 a failure sets status=1 (exit with it at the end)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/gpu}
mkdir -p "$OUT"
W=$(mktemp -d "/tmp/kernelkit-${1:-gpu}.XXXX")
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl >"$W/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site" PATH="$W/site/bin:$PATH" PYTHONUNBUFFERED=1
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
