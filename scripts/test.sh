#!/usr/bin/env bash
# README command 2: set up if needed, then lint, type-check, check the package boundaries
# (import-linter contracts in pyproject.toml) and run the whole test suite (unit +
# integration, real compiles included). `.ci/run` runs exactly this.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/setup.sh
.venv/bin/ruff check src tests benchmarks
.venv/bin/mypy
.venv/bin/lint-imports
exec .venv/bin/python -m pytest -q -rs --durations=25 "$@"
