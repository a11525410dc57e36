#!/usr/bin/env bash
# GPU run for the author's loop (issue 23) and the loader's check_arch on a real device
# (issue 22): on the H200 with the machine's own python3/torch (device tool: carry .gpu-wheels).
#   dev_loop.json      benchmarks/bench_dev_loop.py --cuda (CPU and CUDA variants of a
#                      `kernelkit init --template blank` project: cold, unchanged rebuilds with
#                      and without git, one kernel file edited, edit -> build -> tests)
#   check_arch.txt     tests/integration/test_parity_loader.py's real-device check_arch test
#   summary.txt, machine.txt
. "$(dirname "$0")/common.sh" devloop  # ROOT, OUT, W, step, machine.txt
export KERNELKIT_CUDA_CAPABILITIES=${KERNELKIT_CUDA_CAPABILITIES:-9.0}
step "dev loop (cpu + cuda 9.0, ${DEV_REPEAT:-3} turns)" dev_loop.log -- \
  python3 "$ROOT/benchmarks/bench_dev_loop.py" --cuda --cuda-python "$(command -v python3)" \
  --repeat "${DEV_REPEAT:-3}" --out "$OUT/dev_loop.json"
step "check_arch on a real device (pytest)" check_arch.txt -- env KERNELKIT_TEST_CUDA_PYTHON="$(command -v python3)" \
  python3 -m pytest -q -p no:cacheprovider -rs "$ROOT/tests/integration/test_parity_loader.py" -k "arch"
exit $status
