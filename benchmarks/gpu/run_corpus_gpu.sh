#!/usr/bin/env bash
# GPU run for the compatibility table (issue 10): every upstream example built, checked and
# tested with kernelkit on the H200 (CUDA capability 9.0 to keep it short), then the templates'
# own tests through `kernelkit test`. The corpus travels as .corpus/upstream-examples (a copy
# of ../shared/upstream-examples; carried, not committed). At most 8 files come back in $OUT.
set -uo pipefail
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
OUT=${OUT:-$ROOT/benchmarks/results/compat}
mkdir -p "$OUT"
W=$(mktemp -d /tmp/kernelkit-gpu.XXXX)
mkdir -p "$W/logs"
if [ -d "$ROOT/.gpu-wheels" ]; then
  python3 -m pip install -q --no-deps --target "$W/site" "$ROOT"/.gpu-wheels/*.whl >"$W/logs/pip.log" 2>&1
fi
export PYTHONPATH="$ROOT/src:$W/site" PATH="$W/site/bin:$PATH" PYTHONUNBUFFERED=1
export KERNELKIT_HUB_DIR=$W/hub KERNELKIT_CACHE=$W/cache KERNELKIT_CCACHE_DIR=$W/ccache
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
# CUTLASS 3.6 headers from the carried nvidia-cutlass wheel (no network at configure time).
if [ -f "$W/site/cutlass_library/source/include/cutlass/version.h" ]; then
  export KERNELKIT_CUTLASS_3_6_DIR=$W/site/cutlass_library/source
fi
status=0
# Extra arguments go to run_corpus.py (e.g. --only NAME ... to re-check some projects).
python3 "$ROOT/benchmarks/compat/run_corpus.py" --device-label h200 \
  --corpus "$ROOT/.corpus/upstream-examples" --timeout 300 --parallel 4 \
  --out "$OUT/corpus_h200.json" "$@" >"$W/logs/corpus.log" 2>&1 || status=1
[ -n "${SKIP_TEMPLATES:-}" ] && { tar -czf "$OUT/logs.tar.gz" -C "$W" logs; exit $status; }
for ex in img2gray activation; do
  P=$W/$ex
  { python3 -m kernelkit init "$P" --name "kernelkit-examples/$ex" --template "$ex" &&
    git -C "$P" -c user.name=gpu -c user.email=gpu@kernelkit.invalid commit -qm init &&
    python3 -m kernelkit build "$P" --backend cuda &&
    python3 -m kernelkit test "$P"; } >"$W/logs/$ex.log" 2>&1
  echo "$ex: kernelkit test on CUDA rc=$?" | tee -a "$OUT/templates.txt"
done
tail -5 "$W"/logs/*.log > "$OUT/tails.txt"
tar -czf "$OUT/logs.tar.gz" -C "$W" logs
exit $status
