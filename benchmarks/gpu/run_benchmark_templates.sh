#!/usr/bin/env bash
# GPU run of `kernelkit benchmark` (issue 26). On a CUDA machine, from a checkout of this
# repository, with the machine's python3 and CUDA torch:
#   1. the img2gray and activation templates: kernelkit init -> build (CUDA) -> benchmark
#      (verified, kernel vs eager reference vs torch.compile, roofline; JSON + charts), then
#      the large cases with --l2-flush and the small ones with --cuda-graphs off (events), to
#      compare the methods;
#   2. upstream's relu and silu-and-mul examples (none of upstream's examples ships
#      benchmarks/): built by kernelkit, with a script in upstream's contract copied in from
#      benchmarks/gpu/upstream_bench/; relu is also uploaded to a local hub as v1 and
#      benchmarked by repo id with --compare against the local build.
# The corpus comes from .corpus/upstream-examples (a copy of ../shared/upstream-examples,
# carried, not committed) or $CORPUS. Charts need matplotlib: carry a wheel in .gpu-wheels/
# (installed with --no-deps into a temp site) or have it installed; without it the JSON and
# tables are still written. Everything lands in $OUT (default benchmarks/results/bench-gpu):
# summary.txt, tables.txt, and results.tar.gz (all JSON, charts and logs), so at most a few
# files come back from the device tool. BACKEND=cpu rehearses the same steps on a CPU machine.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/bench-gpu}
CORPUS=${CORPUS:-$ROOT/.corpus/upstream-examples}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kernelkit-bench.XXXX)
mkdir -p "$W/logs" "$W/results"
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl \
    >"$W/logs/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site:${EXTRA_SITE:-}" PYTHONUNBUFFERED=1
export KERNELKIT_HUB_DIR=$W/hub KERNELKIT_CACHE=$W/cache KERNELKIT_CCACHE_DIR=$W/ccache
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
export KERNELKIT_TRUSTED_PUBLISHERS=kernelkit-examples,kernels-test
KK=(python3 -m kernelkit)
BACKEND=${BACKEND:-cuda}
PLOT=()
python3 -c "import matplotlib" 2>/dev/null && PLOT=(yes)
status=0
{ nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv
  python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)"
  nvcc --version | tail -2; } > "$W/results/machine.txt" 2>&1
cp "$W/results/machine.txt" "$OUT/"

step() {  # step NAME -- command...   (output to logs/NAME.log, result line to summary.txt)
  local name=$1; shift 2
  local t0=$SECONDS r
  if "$@" >>"$W/logs/$name.log" 2>&1; then r=ok; else r="FAILED(rc=$?)"; status=1; fi
  printf '%-44s %-12s %5ss\n' "$name" "$r" $((SECONDS - t0)) | tee -a "$OUT/summary.txt"
}

bench() {  # bench NAME TARGET [args...]: JSON + charts + the table
  local name=$1 target=$2; shift 2
  local extra=(--output "$W/results/$name.json")
  [ ${#PLOT[@]} -gt 0 ] && extra+=(--plot "$W/results/$name-charts")
  step "benchmark-$name" -- "${KK[@]}" benchmark "$target" "${extra[@]}" "$@"
  { echo "== $name: kernelkit benchmark $target $*"
    sed -n '/^case /,$p' "$W/logs/benchmark-$name.log"; echo; } >> "$OUT/tables.txt"
}

for t in img2gray activation; do
  P=$W/$t
  step "init-$t" -- "${KK[@]}" init "$P" --name "kernelkit-examples/$t" --template "$t"
  git -C "$P" -c user.name=gpu -c user.email=gpu@kernelkit.invalid commit -qm init \
    >/dev/null 2>&1
  step "build-$t" -- "${KK[@]}" build "$P" --backend "$BACKEND"
  bench "$t" "$P"
  bench "$t-l2flush" "$P" --case '*.large' --l2-flush --no-compile
  bench "$t-events" "$P" --case '*.small' --cuda-graphs off --no-compile
done

if [ -d "$CORPUS" ]; then
  for ex in relu silu-and-mul; do
    P=$W/ex-$ex
    cp -r "$CORPUS/$ex" "$P"
    mkdir -p "$P/benchmarks"
    cp "$ROOT/benchmarks/gpu/upstream_bench/benchmark_${ex//-/_}.py" "$P/benchmarks/"
    step "build-$ex" -- "${KK[@]}" build "$P" --backend "$BACKEND"
    bench "upstream-$ex" "$P"
  done
  # a hub version: relu uploaded as v1, benchmarked by repo id, compared with the local build
  step "upload-relu" -- "${KK[@]}" upload "$W/ex-relu"
  bench "upstream-relu-hub" "kernels-test/relu@v1" --compare "$W/ex-relu" --no-compile
else
  echo "no corpus at $CORPUS: upstream examples skipped" | tee -a "$OUT/summary.txt"
fi

tail -n 30 "$W"/logs/*.log > "$W/results/log-tails.txt" 2>/dev/null
cp -r "$W/logs" "$W/results/"
tar -czf "$OUT/results.tar.gz" -C "$W" results
echo "results: $OUT (status $status)"
exit $status
