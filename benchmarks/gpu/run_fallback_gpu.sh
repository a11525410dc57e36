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
. "$(dirname "$0")/common.sh" fallback  # ROOT, OUT, W, step, machine.txt
unset KERNELKIT_CUDA_CAPABILITIES
step "fallback: time to first call (cuda, ${FALLBACK_REPEAT:-3} turns)" fallback.log -- \
  python3 "$ROOT/benchmarks/bench_fallback.py" --cuda --python "$(command -v python3)" \
  --repeat "${FALLBACK_REPEAT:-3}" --out "$OUT/fallback_cuda.json"
step "fallback: CUDA variant built for this GPU (pytest)" gpu_test.txt -- \
  env KERNELKIT_TEST_CUDA_PYTHON="$(command -v python3)" \
  python3 -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/integration/test_build_missing.py" \
  -k "cuda_variant_is_built_for_its_capability"
exit $status
